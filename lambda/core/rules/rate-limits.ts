/**
 * Rate-limit rules (SPEC.md "Limits", DESIGN.md sections 10 and 13). Pure: the fixed one-minute
 * windows, the default limits and their per-namespace overrides, the response headers and the 429
 * error. The counter itself lives in storage/rate-limits.ts, the wiring in middleware/rate-limit.ts.
 */
import { ApiError } from './errors';
import type { RateCategory } from './routes';

/** Requests allowed per category per window. */
export type RateLimits = Record<RateCategory, number>;

/** The spec's defaults, per namespace per minute. */
export const DEFAULT_LIMITS: Readonly<RateLimits> = Object.freeze({ publish: 1000, consume: 500, management: 100 });

/**
 * Requests a minute of one application's portal links and sessions, per category: their own
 * budget, counted apart from the namespace's, so one customer's session can neither spend the
 * platform's requests nor another customer's (docs/rate-limits.md). Stored as `portal` in the
 * namespace's limits; every session route is a `management` one today.
 */
export const DEFAULT_PORTAL_LIMIT = 100;

/** The limits a request is judged by: its category's, and `portal` for a portal credential's. */
export interface RequestLimits extends RateLimits {
  portal: number;
}

/** The category part of an application's portal counter key. */
export type PortalCounter = `portal#${string}`;

/**
 * The counter's category part of its key: the category, or for a portal credential the
 * application and the category (a uid never holds `#`: DESIGN.md section 4).
 * @example counterCategory('management', 'cust-42') // 'portal#cust-42#management'
 */
export const counterCategory = (category: RateCategory, application?: string): RateCategory | PortalCounter =>
  application === undefined ? category : `portal#${application}#${category}`;

/** Windows are fixed, aligned to the UTC minute. */
const WINDOW_SECONDS = 60;

/**
 * Counter items stay this long after their window ends before DynamoDB TTL may delete them: long
 * enough for a late request of a container whose clock lags, short enough to keep the table small.
 */
export const COUNTER_GRACE_SECONDS = 300;

export interface RateWindow {
  /** Unix seconds of the window's first second; part of the counter's key. */
  start: number;
  /** Unix seconds when the window ends and the next begins (`X-RateLimit-Reset`). */
  reset: number;
}

/**
 * The fixed window containing `nowMs`.
 * @example windowOf(Date.parse('2026-11-22T10:00:59.999Z')) // { start: 1795341600, reset: 1795341660 }
 */
export function windowOf(nowMs: number): RateWindow {
  const start = Math.floor(nowMs / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
  return { start, reset: start + WINDOW_SECONDS };
}

/** Epoch seconds for the counter item's TTL attribute. */
export const counterTtl = (w: RateWindow): number => w.reset + COUNTER_GRACE_SECONDS;

/**
 * The limits of a namespace: its stored overrides where they are positive integers, the defaults
 * elsewhere (a malformed stored value never disables the limit).
 * @example effectiveLimits({ publish: 20 }) // { publish: 20, consume: 500, management: 100 }
 */
export function effectiveLimits(overrides?: Partial<Record<string, unknown>> | null): RateLimits {
  const out: RateLimits = { ...DEFAULT_LIMITS };
  for (const category of Object.keys(DEFAULT_LIMITS) as RateCategory[]) {
    const v = overrides?.[category];
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) out[category] = v;
  }
  return out;
}

/**
 * {@link effectiveLimits} and the portal limit (a positive integer `portal`, else the default).
 * @example requestLimits({ portal: 30 }).portal // 30
 */
export function requestLimits(overrides?: Partial<Record<string, unknown>> | null): RequestLimits {
  const v = overrides?.portal;
  return { ...effectiveLimits(overrides), portal: typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : DEFAULT_PORTAL_LIMIT };
}

/** The limit of a request of `category`: its application's portal limit for a portal credential. */
export const limitOf = (limits: RequestLimits, category: RateCategory, application?: string): number =>
  application === undefined ? limits[category] : limits.portal;

/**
 * Seconds a refused client should wait: until the window resets, at least 1 (DESIGN.md section 13).
 * @example retryAfterSeconds(Date.parse('2026-11-22T10:00:59.400Z'), 1795341660) // 1
 */
export function retryAfterSeconds(nowMs: number, reset: number): number {
  return Math.max(1, Math.ceil(reset - nowMs / 1000));
}

export interface RateState {
  category: RateCategory;
  /** Set when the counter is an application's portal budget, not the namespace's. */
  application?: string;
  limit: number;
  /** Requests counted in the window, this one included when it was accepted. */
  count: number;
  window: RateWindow;
}

/**
 * An API publish's request count, left by the rate-limit middleware to the publish path, which
 * counts it in the same conditional write as the call's fan-out writes (one counter write per
 * publish call: lambda/publishing/write-budget.ts). Whatever path the request takes, it is counted
 * once: by that write, or by the middleware when the request ends without reaching it.
 */
export interface DeferredCount {
  namespace: string;
  /** The window of the request's arrival, in which both counts are made. */
  window: RateWindow;
  /** The namespace's `publish` limit. */
  limit: number;
  /**
   * Takes the request's count for the caller, who then makes its write and hands its outcome to
   * {@link settle}: true once, false to every later caller. A request whose count was taken is
   * never counted again, also when that write fails (throttled, unavailable): it answers 503
   * uncounted (docs/rate-limits.md "Failures").
   */
  claim(): boolean;
  /**
   * Records the count's outcome (`count`: requests of the window after it): sets the request's
   * X-RateLimit headers, and throws the `publish` 429 when `accepted` is false.
   */
  settle(result: { accepted: boolean; count: number }): void;
}

/** Requests left in the window, never negative (a lowered limit can leave `count` above it). */
export const remainingOf = (s: Pick<RateState, 'limit' | 'count'>): number => Math.max(0, s.limit - s.count);

/**
 * The headers every response of an authorized request carries for its category.
 * @example rateLimitHeaders({ category: 'publish', limit: 20, count: 3, window }) // X-RateLimit-Remaining: '17'
 */
export function rateLimitHeaders(s: RateState): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(s.limit),
    'X-RateLimit-Remaining': String(remainingOf(s)),
    'X-RateLimit-Reset': String(s.window.reset),
  };
}

/** 429 RATE_LIMIT_EXCEEDED with `Retry-After` and `details: {category, limit, reset}`. */
export function rateLimitExceeded(s: Pick<RateState, 'category' | 'limit' | 'window' | 'application'>, nowMs: number): ApiError {
  const retryAfter = retryAfterSeconds(nowMs, s.window.reset);
  const who = s.application === undefined ? 'This namespace has' : `The portal sessions of application ${s.application} have`;
  return new ApiError(
    429,
    'RATE_LIMIT_EXCEEDED',
    `${who} used ${s.application === undefined ? 'its' : 'their'} ${s.limit} ${s.category} requests of this minute. Retry after ${retryAfter} s.`,
    { category: s.category, limit: s.limit, reset: s.window.reset, ...(s.application === undefined ? {} : { application: s.application }) },
    { 'Retry-After': String(retryAfter), 'X-RateLimit-Remaining': '0' },
  );
}
