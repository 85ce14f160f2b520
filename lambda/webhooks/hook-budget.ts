/**
 * Hook publishes spend the namespace's publish budget. Without it, W webhooks
 * whose hooks feed one another turn one publish into W + W² + … + W⁵ deliveries; with it, every
 * hook publish is one publish request of the namespace's window, counted on the same counter as
 * the API's (storage/rate-limits.ts), and a hook over the limit publishes nothing and is recorded
 * as a hook failure on the webhook's status.
 */
import { effectiveLimits, windowOf, type RateLimits } from '../core/rules/rate-limits';
import { countRequest, namespaceLimitOverrides } from '../limits/storage/rate-limits';

/** How long a container trusts a namespace's limits (as the API's limiter does). */
const LIMITS_CACHE_MS = 10_000;
const limitsCache = new Map<string, { at: number; limits: RateLimits }>();

async function publishLimit(ns: string, now: number): Promise<number> {
  const hit = limitsCache.get(ns);
  if (hit && now - hit.at < LIMITS_CACHE_MS) return hit.limits.publish;
  const limits = effectiveLimits(await namespaceLimitOverrides(ns));
  if (limitsCache.size >= 1000) limitsCache.delete(limitsCache.keys().next().value as string);
  limitsCache.set(ns, { at: now, limits });
  return limits.publish;
}

/**
 * Counts one hook publish of namespace `ns`; returns undefined when admitted, else why not (the
 * hook failure to record). A counter that cannot be written (throttled, unavailable) is not a
 * verdict: its error goes up, and the delivery job or workflow Task that runs the hook is run
 * again (its delivery record says the POST is done), as the API answers the same failure 503.
 */
export async function spendHookPublish(ns: string, now = Date.now()): Promise<string | undefined> {
  const limit = await publishLimit(ns, now);
  const r = await countRequest({ namespace: ns, category: 'publish', window: windowOf(now), limit });
  return r.accepted ? undefined : `refused: namespace publish rate limit (${limit} a minute) reached`;
}
