/**
 * A clock on synchronous work: runs a function with V8 stopping it after `ms`. The catalog's
 * static bounds (./schema-expansion.ts, ./pattern-cost.ts, the enum and size caps) make a
 * schema's work predictable at one place of a payload; this is what stops the rest (references
 * that multiply across levels of the payload, comparisons nobody priced) before a publish holds
 * its function. Node's `vm` timeout is a watchdog that terminates whatever JavaScript runs on the
 * isolate, including functions of the main context the script calls
 * (https://nodejs.org/api/vm.html#scriptrunincontextcontextifiedobject-options, `timeout`); it
 * costs a watchdog thread per call (about 0.2 ms), so it wraps a whole request, not each payload.
 * Code stopped this way runs no `finally`: callers reset their own state (see ../enforce.ts).
 */
import { createContext, Script } from 'node:vm';

const slot: { job?: () => unknown; result?: unknown } = {};
const context = createContext({ slot });
const script = new Script('slot.result = slot.job()');

export class TimeLimitExceeded extends Error {
  constructor(readonly ms: number) {
    super(`stopped after ${ms} ms`);
  }
}

/** `f()`, or TimeLimitExceeded once it has run `ms` milliseconds. Errors of `f` pass through. */
export function withinTime<T>(ms: number, f: () => T): T {
  slot.job = f;
  slot.result = undefined;
  try {
    script.runInContext(context, { timeout: ms });
    return slot.result as T;
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw new TimeLimitExceeded(ms);
    throw e;
  } finally {
    slot.job = undefined;
    slot.result = undefined;
  }
}
