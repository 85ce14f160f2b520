/**
 * Rate limits per namespace and category (DESIGN.md section 10). Runs after `authorize` (it needs
 * the key's namespace) and before the body is parsed, so a refused request costs one DynamoDB call
 * and does nothing else. Every request that reaches it is counted, whatever the handler answers
 * later (404, 409, 422 included), and its response carries the three X-RateLimit headers.
 *
 * A 403 INSUFFICIENT_PERMISSIONS and the Host rule's 404 NAMESPACE_NOT_FOUND are thrown by
 * `authorize` before this middleware: they are not counted (a key must not spend a budget its
 * scopes do not allow it to use, or a consume-only key could starve the namespace's publishers),
 * but their responses still show the category's state of the key's namespace, read without
 * counting (DESIGN.md section 13: only 401s and unknown paths go without headers).
 *
 * Once a container has seen a category's window full, it refuses further requests of that window
 * itself, with no DynamoDB call: a namespace flooding over its limit costs the counter nothing.
 *
 * A portal link or session (the authorizer names its application) counts on its application's
 * own counter of the category, against the namespace's `portal` limit, and never on the
 * namespace's: one customer's session cannot spend the platform's budget nor another customer's.
 * Its headers and 429s are those of that counter. Still one counter write per request.
 *
 * An API publish is counted by the publish path instead, in the one write that also charges its
 * fan-out writes (publishing/write-budget.ts): it reaches the limit there, after its bindings are
 * matched, and is counted here only when it ends without that write.
 */
import type { MiddlewareObj } from '@middy/core';
import type { Logger } from '@aws-lambda-powertools/logger';
import { ApiError } from '../core/rules/errors';
import { systemClock, type Clock } from '../core/rules/clock';
import {
  counterCategory, limitOf, rateLimitExceeded, rateLimitHeaders, requestLimits, windowOf, type RequestLimits, type RateState,
} from '../core/rules/rate-limits';
import { countRequest, namespaceLimitOverrides, peekCount, type CounterRequest, type CounterResult } from './storage/rate-limits';
import { apiRequest, type ApiEvent, type ApiRequest } from '../core/middleware/api-request';
import type { RateCategory } from '../core/rules/routes';
import { countMetric, METRIC } from '../core/observability';

/**
 * Operations whose request count is made by the publish path, in one write with the call's
 * fan-out charge (lambda/handlers/publish.ts gives `deferredCount` to `publishMessages`).
 */
const DEFERRED_OPERATIONS: ReadonlySet<string> = new Set(['publish', 'publishBatch']);

/** How long a container trusts the namespace's limits it read: an admin change applies within this. */
export const LIMITS_CACHE_MS = 10_000;


export interface RateLimitOptions {
  clock?: Clock;
  logger?: Pick<Logger, 'warn'>;
  limitsCacheMs?: number;
  /** Stored overrides of a namespace; the meta table's namespace record by default. */
  loadOverrides?: (namespace: string) => Promise<Partial<Record<string, unknown>> | undefined>;
  /** The counter; storage/rate-limits.ts by default. */
  count?: (r: CounterRequest) => Promise<CounterResult>;
  peek?: (r: Omit<CounterRequest, 'limit'> & { limit?: number }) => Promise<number>;
}

/**
 * Namespace limits cached per container for `ttlMs`, so a request costs the counter's one call
 * and not a namespace read too. Concurrent misses share one read; a failed read is not cached.
 */
export function limitsCache(load: (ns: string) => Promise<Partial<Record<string, unknown>> | undefined>, clock: Clock, ttlMs: number) {
  const entries = new Map<string, { at: number; limits: Promise<RequestLimits> }>();
  return (ns: string): Promise<RequestLimits> => {
    const now = clock.now();
    const hit = entries.get(ns);
    if (hit && now - hit.at < ttlMs) return hit.limits;
    const limits = load(ns).then(requestLimits);
    entries.set(ns, { at: now, limits });
    limits.catch(() => entries.get(ns)?.limits === limits && entries.delete(ns));
    return limits;
  };
}

/**
 * The headers of a category's current window without counting a request: for answers refused
 * before the limiter that DESIGN.md section 13 still wants to carry them (403, the Host rule's
 * 404, and the gateway's own 405 and 413 for a valid key).
 */
export function rateLimitPeeker(opts: RateLimitOptions = {}, limitsOf?: (ns: string) => Promise<RequestLimits>) {
  const clock = opts.clock ?? systemClock;
  const peek = opts.peek ?? peekCount;
  const limits = limitsOf ?? limitsCache(opts.loadOverrides ?? namespaceLimitOverrides, clock, opts.limitsCacheMs ?? LIMITS_CACHE_MS);
  /** `application`: a portal credential's, whose counter is its application's. */
  return async (namespace: string, category: RateCategory, application?: string): Promise<Record<string, string>> => {
    const limit = limitOf(await limits(namespace), category, application);
    const window = windowOf(clock.now());
    const counted = await peek({ namespace, category: counterCategory(category, application), window, limit });
    return rateLimitHeaders({ category, limit, count: counted, window });
  };
}

/** The rate-limit middleware; one per handler (per container), holding the limits cache. */
export function rateLimit(opts: RateLimitOptions = {}): MiddlewareObj<ApiEvent> {
  const clock = opts.clock ?? systemClock;
  const count = opts.count ?? countRequest;
  const limitsOf = limitsCache(opts.loadOverrides ?? namespaceLimitOverrides, clock, opts.limitsCacheMs ?? LIMITS_CACHE_MS);
  const peekHeaders = rateLimitPeeker(opts, limitsOf);

  // Windows this container has seen refused, by namespace and category. A window's count never
  // goes down, so until it ends (or the limit changes) every further request would be refused
  // too: answering those locally keeps a flood over the limit off the counter item entirely.
  const exhausted = new Map<string, { start: number; limit: number }>();

  /** Applies a count's outcome to the request: its headers, and over the limit the 429 (thrown). */
  const apply = (api: ApiRequest, counter: string, state: Omit<RateState, 'count'>, result: CounterResult, now: number) => {
    const full: RateState = { ...state, count: result.count };
    Object.assign(api.responseHeaders, rateLimitHeaders(full));
    if (!result.accepted) {
      exhausted.set(`${api.namespace}|${counter}`, { start: full.window.start, limit: full.limit });
      api.responseHeaders['X-RateLimit-Remaining'] = '0';
      countMetric(METRIC.rateLimited, 1, { namespace: api.namespace, dimensions: { category: full.category } });
      throw rateLimitExceeded(full, now);
    }
  };

  /** Counts a deferred request that ended without its publish's write (see `deferredCount`). */
  const settleDeferred = async (api: ApiRequest | undefined) => {
    const deferred = api?.deferredCount;
    if (deferred?.claim()) deferred.settle(await count({ namespace: deferred.namespace, category: 'publish', window: deferred.window, limit: deferred.limit }));
  };

  return {
    before: async (request) => {
      const api = apiRequest(request.event);
      const category = api.route.category;
      const application = api.application;
      const counter = counterCategory(category, application);
      const limit = limitOf(await limitsOf(api.namespace), category, application);
      const now = clock.now();
      const window = windowOf(now);
      const state = { category, limit, window, ...(application === undefined ? {} : { application }) };
      const seen = exhausted.get(`${api.namespace}|${counter}`);
      if (seen?.start === window.start && seen.limit === limit) return apply(api, counter, state, { accepted: false, count: limit }, now);
      // An API publish leaves its count to the publish path, which makes it in the same write as
      // the call's fan-out charge (publishing/write-budget.ts): one counter write per call. The
      // request is counted all the same when it ends before that write (`after`, `onError`).
      if (DEFERRED_OPERATIONS.has(api.route.operation) && category === 'publish' && application === undefined && limit >= 1) {
        let claimed = false;
        api.deferredCount = {
          namespace: api.namespace, window, limit,
          claim: () => !claimed && (claimed = true),
          settle: (result) => apply(api, counter, state, result, clock.now()),
        };
        return;
      }
      // A counter that cannot be read or written (throttled, unavailable) is not a verdict on the
      // namespace: its error goes on to the envelope, which answers 503 SERVICE_UNAVAILABLE with
      // Retry-After: 1 (domain/dependency-errors.ts). It once answered 429 with a Retry-After up
      // to the end of the minute, telling a namespace under its limit to wait up to 60 s.
      apply(api, counter, state, await count({ namespace: api.namespace, category: counter, window, limit }), now);
    },
    // A publish answered without reaching its write (an Idempotency-Key's replay) is counted
    // now; over the limit it is refused as the middleware refused it before the handler.
    after: async (request) => {
      await settleDeferred(request.event.api);
    },
    // An answer refused before the limiter ran (403 INSUFFICIENT_PERMISSIONS, the Host rule's
    // 404 NAMESPACE_NOT_FOUND) is not counted but still shows the category's state: only 401s
    // and unknown paths go without the headers (DESIGN.md section 13).
    onError: async (request) => {
      const api = request.event.api;
      // A publish refused before its write (400, 404, 413, 422, 409) is counted as before; a
      // 429 (the limit reached) or the counter's own failure takes the place of its answer, as
      // when the middleware counted before the handler ran.
      try {
        await settleDeferred(api);
      } catch (e) {
        request.error = e as Error;
      }
      if (!(request.error instanceof ApiError) || !api?.namespace || api.responseHeaders['X-RateLimit-Limit']) return;
      try {
        Object.assign(api.responseHeaders, await peekHeaders(api.namespace, api.route.category, api.application));
      } catch (e) {
        // The refusal stands either way; headers are advisory.
        opts.logger?.warn('rate-limit headers of a refused request unavailable', { error: (e as Error).message });
      }
    },
  };
}
