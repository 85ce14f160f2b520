/**
 * Progress of long admin operations (redrive, cleanups), printed to stderr so stdout keeps only
 * the result (`--json` stays pipeable): one line per batch with counts and rate, then a summary.
 *
 * @example
 * const progress = createProgress({ label: 'redrive', unit: 'messages', write: err, total: 120 });
 * progress.step(25, { expired: 1 });   // redrive: 25 of 120 messages (21%) in 0.6 s, 41.7 messages/s, expired 1
 * progress.finish(120, { expired: 2 }); // redrive: done: 120 messages in 2.9 s, 41.4 messages/s, expired 2
 */

export interface ProgressOptions {
  /** The operation, at the start of every line. */
  label: string;
  /** What is counted, plural (`messages`, `queues`). */
  unit: string;
  /** Where lines go (stderr). */
  write: (line: string) => void;
  /** Expected count, when known: lines then show "N of TOTAL (P%)". */
  total?: number;
  /** @default performance.now */
  now?: () => number;
}

export interface Progress {
  /** Sets the expected count once it is known (e.g. after a first count). */
  setTotal(total: number): void;
  /** After a batch: `done` so far, and other counts worth showing (zeros are left out). */
  step(done: number, extra?: Record<string, number>): void;
  /** The summary line; returns it. */
  finish(done: number, extra?: Record<string, number>): string;
}

const extraText = (extra: Record<string, number> = {}) =>
  Object.entries(extra)
    .filter(([, n]) => n)
    .map(([k, n]) => `, ${k.replace(/_/g, ' ')} ${n}`)
    .join('');

export function createProgress(o: ProgressOptions): Progress {
  const now = o.now ?? (() => performance.now());
  const started = now();
  let total = o.total;
  const timing = (done: number) => {
    const seconds = (now() - started) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    return `in ${seconds.toFixed(1)} s, ${rate.toFixed(1)} ${o.unit}/s`;
  };
  return {
    setTotal(t) {
      total = t;
    },
    step(done, extra) {
      const of = total !== undefined ? ` of ${total} ${o.unit} (${total ? Math.floor((done / total) * 100) : 100}%)` : ` ${o.unit}`;
      o.write(`${o.label}: ${done}${of} ${timing(done)}${extraText(extra)}`);
    },
    finish(done, extra) {
      const line = `${o.label}: done: ${done} ${o.unit} ${timing(done)}${extraText(extra)}`;
      o.write(line);
      return line;
    },
  };
}
