import { mayRetry, retryDelaySeconds } from '../../lambda/webhooks/rules/backoff';

const policy = (p: Partial<Parameters<typeof retryDelaySeconds>[0]> = {}) => ({ retry_count: 3, retry_delay: 1, backoff_multiplier: 2, max_retry_delay: 300, ...p });

describe('retryDelaySeconds', () => {
  it('is retry_delay * backoff_multiplier^(n-1)', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelaySeconds(policy(), n))).toEqual([1, 2, 4, 8, 16]);
    expect([1, 2, 3].map((n) => retryDelaySeconds(policy({ retry_delay: 5, backoff_multiplier: 3 }), n))).toEqual([5, 15, 45]);
  });
  it('stays constant with multiplier 1', () => expect([1, 2, 3].map((n) => retryDelaySeconds(policy({ backoff_multiplier: 1, retry_delay: 7 }), n))).toEqual([7, 7, 7]));
  it('is capped at max_retry_delay', () => {
    expect([1, 2, 3].map((n) => retryDelaySeconds(policy({ backoff_multiplier: 10, max_retry_delay: 1 }), n))).toEqual([1, 1, 1]);
    expect(retryDelaySeconds(policy({ max_retry_delay: 300 }), 20)).toBe(300);
  });
  it('does not overflow at the largest settings', () => expect(retryDelaySeconds(policy({ retry_delay: 3600, backoff_multiplier: 10, max_retry_delay: 86400 }), 20)).toBe(86400));
  it('rounds fractional multipliers up to whole seconds', () => expect(retryDelaySeconds(policy({ backoff_multiplier: 1.5 }), 2)).toBe(2));
  it('allows zero delays', () => expect(retryDelaySeconds(policy({ retry_delay: 0 }), 3)).toBe(0));
  it('refuses retry numbers below 1', () => expect(() => retryDelaySeconds(policy(), 0)).toThrow(RangeError));
});

describe('mayRetry', () => {
  it('allows 1 + retry_count attempts in all', () => {
    expect([1, 2, 3, 4].map((a) => mayRetry({ retry_count: 3 }, a))).toEqual([true, true, true, false]);
    expect(mayRetry({ retry_count: 0 }, 1)).toBe(false);
  });
});
