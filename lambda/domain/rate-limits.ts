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

/** Windows are fixed, aligned to the UTC minute. */
export const WINDOW_SECONDS = 60;

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
 * Seconds a refused client should wait: until the window resets, at least 1 (DESIGN.md section 13).
 * @example retryAfterSeconds(Date.parse('2026-11-22T10:00:59.400Z'), 1795341660) // 1
 */
export function retryAfterSeconds(nowMs: number, reset: number): number {
  return Math.max(1, Math.ceil(reset - nowMs / 1000));
}

export interface RateState {
  category: RateCategory;
  limit: number;
  /** Requests counted in the window, this one included when it was accepted. */
  count: number;
  window: RateWindow;
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
export function rateLimitExceeded(s: Pick<RateState, 'category' | 'limit' | 'window'>, nowMs: number): ApiError {
  const retryAfter = retryAfterSeconds(nowMs, s.window.reset);
  return new ApiError(
    429,
    'RATE_LIMIT_EXCEEDED',
    `This namespace has used its ${s.limit} ${s.category} requests of this minute. Retry after ${retryAfter} s.`,
    { category: s.category, limit: s.limit, reset: s.window.reset },
    { 'Retry-After': String(retryAfter), 'X-RateLimit-Remaining': '0' },
  );
}
