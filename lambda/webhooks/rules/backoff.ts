/**
 * Retry timing of webhook deliveries (DESIGN.md section 9). Pure.
 */

export interface RetryPolicy {
  retry_count: number;
  /** Seconds before the first retry. */
  retry_delay: number;
  backoff_multiplier: number;
  /** Upper bound of any single wait, in seconds. */
  max_retry_delay: number;
}

/**
 * Seconds to wait before retry `n` (1-based): `retry_delay * backoff_multiplier^(n-1)`, capped
 * at `max_retry_delay`, rounded up to whole seconds (a Step Functions Wait takes integers).
 * @example retryDelaySeconds({ retry_count: 3, retry_delay: 1, backoff_multiplier: 2, max_retry_delay: 300 }, 3) // 4
 */
export function retryDelaySeconds(p: RetryPolicy, n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`retry number must be a positive integer, got ${n}`);
  const raw = p.retry_delay * p.backoff_multiplier ** (n - 1);
  return Math.ceil(Math.min(raw, p.max_retry_delay));
}

/**
 * Whether a delivery that has made `attempts` attempts (all failed) may be retried.
 * @example mayRetry({ retry_count: 1, ... }, 1) // true: one retry left
 */
export const mayRetry = (p: Pick<RetryPolicy, 'retry_count'>, attempts: number) => attempts < 1 + p.retry_count;
