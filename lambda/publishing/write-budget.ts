/**
 * Charges a publish call's writes (messages x bindings reached) to the namespace's fan-out budget
 * of the minute (domain/fanout-writes.ts, docs/rate-limits.md), after the bindings are matched and
 * before anything is written: a refused publish stores nothing. Called by the one publish path
 * (./publish.ts `publishMessages`), so the API's publishes, schedule runs, webhook hooks, redrive
 * and dead-lettering all pay it (docs/rate-limits.md says what each does when refused).
 *
 * An API publish comes with its request count left to it by the rate-limit middleware
 * (`DeferredCount`): both are made in one conditional UpdateItem of the window's `publish` counter
 * item, one counter write per call (docs/design/0025-consume-cost-and-keys.md). The service's own
 * publishers are not counted per request here and charge the budget alone.
 */
import { windowOf, type DeferredCount } from '../core/rules/rate-limits';
import { FANOUT_CATEGORY, fanoutExceeded, fanoutLimitOf } from '../core/rules/fanout-writes';
import { ApiError } from '../core/rules/errors';
import { chargeWrites, countAndCharge, counterShardLimit, counterShards, countRequest, namespaceLimitOverrides, refundWrites } from '../limits/storage/rate-limits';

/** How long a container trusts a namespace's budget (as the API's limiter, LIMITS_CACHE_MS). */
const LIMIT_CACHE_MS = 10_000;
const cache = new Map<string, { at: number; limit: Promise<number> }>();

/**
 * The namespace's budget, read at most once per 10 s per container (no read on the hot path).
 * Aged by the wall clock: callers' `now` may be a scheduled time ahead of it.
 */
function fanoutLimit(ns: string, now = Date.now()): Promise<number> {
  const hit = cache.get(ns);
  if (hit && now - hit.at < LIMIT_CACHE_MS) return hit.limit;
  const limit = namespaceLimitOverrides(ns).then(fanoutLimitOf);
  if (cache.size >= 1000) cache.delete(cache.keys().next().value as string);
  cache.set(ns, { at: now, limit });
  // A failed read is not cached: its error goes up (503 from the envelope), the next call reads again.
  limit.catch(() => cache.get(ns)?.limit === limit && cache.delete(ns));
  return limit;
}

/**
 * Spends `writes` (../domain/fanout-writes.ts: each message x the bindings it reaches) of namespace `ns`'s fan-out budget in the window of `now`, or
 * throws 429 RATE_LIMIT_EXCEEDED with `details.category: 'fanout'` ({@link isFanoutRefusal}). A
 * counter that cannot be written (throttled, unavailable) throws its own error, which the envelope
 * answers 503 and the service's own publishers retry as any dependency failure. `request`: an API
 * publish's request count, made with the charge (and in its window).
 */
export async function spendFanoutWrites(ns: string, writes: number, now = Date.now(), request?: DeferredCount): Promise<void> {
  const limit = await fanoutLimit(ns);
  if (request?.claim()) return spendWithRequest(request, limit, writes, now);
  const window = windowOf(now);
  const r = await chargeWrites({ namespace: ns, window, limit, writes });
  if (!r.accepted) throw fanoutExceeded(limit, writes, window, now);
}

/**
 * Gives back the writes {@link spendFanoutWrites} charged (same window) to a publish refused after
 * its charge, by the held-message quota: its request stays counted, its writes were never made.
 */
export async function refundFanoutWrites(ns: string, writes: number, now = Date.now(), request?: DeferredCount): Promise<void> {
  await refundWrites({ namespace: ns, window: request?.window ?? windowOf(now), writes });
}

/**
 * Namespaces whose split `publish` limit's item 0 this container saw full, by window start: the
 * rest of that window's publishes go straight to two writes instead of a refused third first.
 */
const firstItemFull = new Map<string, number>();

/**
 * Counts an API publish request and spends its writes. One write, on the `publish` counter's item
 * 0, which carries the budget: whatever its verdict, the request was counted exactly as the
 * middleware counts (publish 429 first, then fanout 429 for a counted request). Two writes when
 * one cannot do both exactly: a call over the whole budget (counted, then refused without a
 * charge), a fan-out refusal (the request is still counted, as before), and a split limit whose
 * item 0 is full (the request counts on another item, as countRequest counts any request).
 */
async function spendWithRequest(request: DeferredCount, limit: number, writes: number, now: number): Promise<void> {
  const { namespace, window } = request;
  const items = counterShards(request.limit);
  if (writes <= limit && firstItemFull.get(namespace) !== window.start) {
    const r = await countAndCharge({ namespace, window, limit, writes, requestLimit: counterShardLimit(request.limit, 0) });
    if (r.accepted) {
      // A split limit's count is estimated as countRequest does (headers are advisory).
      request.settle({ accepted: true, count: Math.min(request.limit, r.count * items) });
      return;
    }
    if (r.refused === 'publish' && items === 1) {
      request.settle({ accepted: false, count: request.limit });
      return;
    }
    if (r.refused === 'publish') {
      if (firstItemFull.size >= 1000) firstItemFull.delete(firstItemFull.keys().next().value as string);
      firstItemFull.set(namespace, window.start);
    } else {
      request.settle(await countRequest({ namespace, category: 'publish', window, limit: request.limit }));
      throw fanoutExceeded(limit, writes, window, now);
    }
  }
  request.settle(await countRequest({ namespace, category: 'publish', window, limit: request.limit }));
  const c = await chargeWrites({ namespace, window, limit, writes });
  if (!c.accepted) throw fanoutExceeded(limit, writes, window, now);
}

/** Whether `e` is the fan-out budget's refusal (each republisher decides what it means for it). */
export const isFanoutRefusal = (e: unknown): e is ApiError => e instanceof ApiError && e.status === 429 && e.details.category === FANOUT_CATEGORY;
