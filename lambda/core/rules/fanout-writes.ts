/**
 * The fan-out budget of the rate limits (docs/rate-limits.md): writes per minute that a
 * namespace's publishes may cause. The per-request publish budget (DESIGN.md section 10) counts a
 * batch of 100 messages reaching 200 bindings as one request, yet it makes some 20,000 writes on
 * pay-per-request tables and queues; this budget counts those writes, messages x bindings reached,
 * in the same fixed one-minute windows. Pure: the counter is storage/rate-limits.ts `chargeWrites`.
 */
import { ApiError } from './errors';
import { retryAfterSeconds, type RateWindow } from './rate-limits';

/** The counter's category name, in its key and in the 429's `details.category`. */
export const FANOUT_CATEGORY = 'fanout';

/**
 * The default: generous enough that no ordinary namespace meets it (1000 publish requests a minute
 * each reaching 100 bindings), low enough that the default caps (1000 batch requests of 100
 * messages to 200+ bindings, some 20 million writes a minute) are no longer open to one tenant.
 */
export const DEFAULT_FANOUT_LIMIT = 100_000;

/**
 * The namespace's fan-out budget: its stored `limits.fanout` when a positive integer, else the
 * default (a malformed stored value never disables the budget).
 * @example fanoutLimitOf({ fanout: 500 }) // 500
 * @example fanoutLimitOf({ fanout: 0 }) // 100000
 */
export function fanoutLimitOf(overrides?: Partial<Record<string, unknown>> | null): number {
  const v = overrides?.[FANOUT_CATEGORY];
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : DEFAULT_FANOUT_LIMIT;
}

/**
 * The writes one publish call causes: each message is written once to each binding it reaches
 * (a queue's message, a stream's record, a subscription's copy, a webhook's delivery job).
 * @example fanoutWrites(100, 200) // 20000
 */
export const fanoutWrites = (messages: number, bindings: number): number => messages * bindings;

/**
 * The writes one publish call causes when some bindings take only messages addressed to their
 * application (webhooks of an application, docs/portal.md): each message reaches every binding of
 * no application and the bindings of the application it names. `bindingApplications[i]` is
 * binding i's application (undefined: none), `addresses[j]` message j's (undefined: unaddressed).
 * @example reachedWrites([undefined, 'a', 'b'], ['a', undefined]) // 3: the first message reaches 2, the second 1
 */
export function reachedWrites(bindingApplications: (string | undefined)[], addresses: (string | undefined)[]): number {
  let everyone = 0;
  const perApplication = new Map<string, number>();
  for (const a of bindingApplications) {
    if (a === undefined) everyone++;
    else perApplication.set(a, (perApplication.get(a) ?? 0) + 1);
  }
  return addresses.reduce((n, a) => n + everyone + (a === undefined ? 0 : (perApplication.get(a) ?? 0)), 0);
}

/**
 * The ADD's condition operand: the count a window may hold before this call for it to fit,
 * `limit - writes`; negative when the call alone is over the whole budget (never admitted).
 * @example roomBefore(10, 3) // 7
 */
export const roomBefore = (limit: number, writes: number): number => limit - writes;

/**
 * 429 RATE_LIMIT_EXCEEDED for a publish whose writes do not fit the window: `details` names the
 * budget (`category: 'fanout'`), its limit, the window's reset and this call's writes. A call over
 * the whole budget says so, since waiting does not help it (it must be split).
 */
export function fanoutExceeded(limit: number, writes: number, window: RateWindow, nowMs: number): ApiError {
  const retryAfter = retryAfterSeconds(nowMs, window.reset);
  const message =
    writes > limit
      ? `This publish would cause ${writes} writes (messages x bindings reached), more than this namespace's fan-out budget of ${limit} a minute; publish fewer messages per request.`
      : `This publish would cause ${writes} writes (messages x bindings reached); this namespace's fan-out budget of ${limit} writes a minute has not that much left. Retry after ${retryAfter} s.`;
  return new ApiError(429, 'RATE_LIMIT_EXCEEDED', message, { category: FANOUT_CATEGORY, limit, reset: window.reset, writes }, { 'Retry-After': String(retryAfter) });
}
