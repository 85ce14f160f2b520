/**
 * Charges a publish call's writes (messages x bindings reached) to the namespace's fan-out budget
 * of the minute (domain/fanout-writes.ts, docs/rate-limits.md), after the bindings are matched and
 * before anything is written: a refused publish stores nothing. Called by the one publish path
 * (./publish.ts `publishMessages`), so the API's publishes, schedule runs, webhook hooks, redrive
 * and dead-lettering all pay it (docs/rate-limits.md says what each does when refused). The per-request publish budget is counted by the rate-limit
 * middleware as before; this is a second counter of the same table.
 */
import { windowOf } from '../domain/rate-limits';
import { FANOUT_CATEGORY, fanoutExceeded, fanoutLimitOf } from '../domain/fanout-writes';
import { ApiError } from '../domain/errors';
import { chargeWrites, namespaceLimitOverrides } from '../storage/rate-limits';

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
 * answers 503 and the service's own publishers retry as any dependency failure.
 */
export async function spendFanoutWrites(ns: string, writes: number, now = Date.now()): Promise<void> {
  const limit = await fanoutLimit(ns);
  const window = windowOf(now);
  const r = await chargeWrites({ namespace: ns, window, limit, writes });
  if (!r.accepted) throw fanoutExceeded(limit, writes, window, now);
}

/** Whether `e` is the fan-out budget's refusal (each republisher decides what it means for it). */
export const isFanoutRefusal = (e: unknown): e is ApiError => e instanceof ApiError && e.status === 429 && e.details.category === FANOUT_CATEGORY;
