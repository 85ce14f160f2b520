import {
  COUNTER_GRACE_SECONDS, counterCategory, counterTtl, DEFAULT_LIMITS, effectiveLimits, limitOf, requestLimits, rateLimitExceeded, rateLimitHeaders, remainingOf,
  retryAfterSeconds, windowOf,
} from '../../lambda/core/rules/rate-limits';
import { countRequestParams } from '../../lambda/limits/storage/rate-limits';
import { metaKeys } from '../../lambda/core/storage/keys';

const at = (iso: string) => Date.parse(iso);
const MINUTE_10_00 = at('2026-11-22T10:00:00.000Z') / 1000;

describe('windowOf', () => {
  it.each([
    ['the first millisecond of a minute', '2026-11-22T10:00:00.000Z', MINUTE_10_00],
    ['the middle of a minute', '2026-11-22T10:00:30.500Z', MINUTE_10_00],
    ['the last millisecond of a minute', '2026-11-22T10:00:59.999Z', MINUTE_10_00],
    ['the next minute', '2026-11-22T10:01:00.000Z', MINUTE_10_00 + 60],
  ])('puts %s in the UTC minute that contains it', (_label, iso, start) => {
    expect(windowOf(at(iso))).toEqual({ start, reset: start + 60 });
  });

  it('aligns to UTC minutes whatever the time zone offset of the caller', () => {
    const w = windowOf(at('2026-11-22T15:30:45.000+05:30'));
    expect(new Date(w.start * 1000).toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });

  it('keeps the counter a few minutes after the window ends', () => {
    const w = windowOf(at('2026-11-22T10:00:30Z'));
    expect(counterTtl(w)).toBe(w.reset + COUNTER_GRACE_SECONDS);
    expect(COUNTER_GRACE_SECONDS).toBeGreaterThanOrEqual(60);
  });
});

describe('retryAfterSeconds', () => {
  const reset = MINUTE_10_00 + 60;
  it.each([
    ['at the start of the window', '2026-11-22T10:00:00.000Z', 60],
    ['with a fraction left, rounding up', '2026-11-22T10:00:30.200Z', 30],
    ['with less than a second left', '2026-11-22T10:00:59.900Z', 1],
    ['exactly at the reset', '2026-11-22T10:01:00.000Z', 1],
    ['after the reset (clock skew)', '2026-11-22T10:01:05.000Z', 1],
  ])('is the seconds to the reset, at least 1, %s', (_label, iso, seconds) => {
    expect(retryAfterSeconds(at(iso), reset)).toBe(seconds);
  });
});

describe("a portal credential's limits", () => {
  it('has its own limit per application, 100 a minute unless the namespace sets `portal`', () => {
    expect(requestLimits(undefined)).toEqual({ publish: 1000, consume: 500, management: 100, portal: 100 });
    expect(requestLimits({ management: 30, portal: 7 })).toMatchObject({ management: 30, portal: 7 });
    expect(requestLimits({ portal: 0 }).portal).toBe(100);
    expect(limitOf(requestLimits({ management: 30, portal: 7 }), 'management', 'cust-1')).toBe(7);
    expect(limitOf(requestLimits({ management: 30, portal: 7 }), 'management')).toBe(30);
  });

  it("counts on a counter of its application and category, apart from the namespace's", () => {
    const keys = [counterCategory('management'), counterCategory('management', 'a'), counterCategory('management', 'b'), counterCategory('consume', 'a')];
    expect(keys).toEqual(['management', 'portal#a#management', 'portal#b#management', 'portal#a#consume']);
  });

  it("names the application in a 429 of its portal counter", () => {
    const window = { start: MINUTE_10_00, reset: MINUTE_10_00 + 60 };
    const e = rateLimitExceeded({ category: 'management', limit: 7, window, application: 'cust-1' }, MINUTE_10_00 * 1000);
    expect([e.status, e.details]).toEqual([429, { category: 'management', limit: 7, reset: window.reset, application: 'cust-1' }]);
    expect(e.message).toMatch(/portal sessions of application cust-1 have used their 7 management requests/);
  });
});

describe('effectiveLimits', () => {
  it('uses the spec defaults without overrides', () => {
    expect(effectiveLimits(undefined)).toEqual({ publish: 1000, consume: 500, management: 100 });
    expect(effectiveLimits(null)).toEqual(DEFAULT_LIMITS);
  });

  it('applies each override on its own', () => {
    expect(effectiveLimits({ publish: 20 })).toEqual({ publish: 20, consume: 500, management: 100 });
    expect(effectiveLimits({ publish: 20, consume: 10, management: 5 })).toEqual({ publish: 20, consume: 10, management: 5 });
  });

  it.each([[0], [-1], [1.5], ['100'], [null], [Number.NaN]])('ignores a malformed stored value %p', (v) => {
    expect(effectiveLimits({ management: v }).management).toBe(100);
  });

  it('never changes the defaults', () => {
    effectiveLimits({ publish: 1 });
    expect(DEFAULT_LIMITS.publish).toBe(1000);
  });
});

describe('rateLimitHeaders', () => {
  const window = windowOf(at('2026-11-22T10:00:10Z'));
  it('shows limit, requests left and the reset in Unix seconds', () => {
    expect(rateLimitHeaders({ category: 'publish', limit: 20, count: 3, window })).toEqual({
      'X-RateLimit-Limit': '20',
      'X-RateLimit-Remaining': '17',
      'X-RateLimit-Reset': String(MINUTE_10_00 + 60),
    });
  });

  it('never shows a negative remainder when the limit was lowered mid-window', () => {
    expect(remainingOf({ limit: 5, count: 9 })).toBe(0);
    expect(rateLimitHeaders({ category: 'management', limit: 5, count: 9, window })['X-RateLimit-Remaining']).toBe('0');
  });
});

describe('rateLimitExceeded', () => {
  it('is a 429 RATE_LIMIT_EXCEEDED with details, Retry-After and no requests left', () => {
    const now = at('2026-11-22T10:00:45.300Z');
    const e = rateLimitExceeded({ category: 'consume', limit: 10, window: windowOf(now) }, now);
    expect(e.status).toBe(429);
    expect(e.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(e.details).toEqual({ category: 'consume', limit: 10, reset: MINUTE_10_00 + 60 });
    expect(e.headers).toEqual({ 'Retry-After': '15', 'X-RateLimit-Remaining': '0' });
    expect(e.message).toMatch(/15 s/);
  });
});

describe('countRequestParams', () => {
  it('is one conditional ADD on the window counter with a TTL, refusing at the limit', () => {
    const window = windowOf(at('2026-11-22T10:00:10Z'));
    const params = countRequestParams({ namespace: 'acme', category: 'publish', window, limit: 20 }, 'meta');
    expect(params).toEqual({
      TableName: 'meta',
      Key: { pk: `NS#acme#RATE#publish#${MINUTE_10_00}`, sk: '#RATE' },
      UpdateExpression: 'ADD #c :one SET #ttl = :ttl',
      ConditionExpression: 'attribute_not_exists(#c) OR #c < :limit',
      ExpressionAttributeNames: { '#c': 'count', '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':one': 1, ':limit': 20, ':ttl': MINUTE_10_00 + 60 + COUNTER_GRACE_SECONDS },
      ReturnValues: 'UPDATED_NEW',
    });
  });

  it('keeps counters of namespaces, categories and windows apart, outside the namespace partition', () => {
    const keys = [
      metaKeys.rateCounter('acme', 'publish', MINUTE_10_00),
      metaKeys.rateCounter('acme', 'consume', MINUTE_10_00),
      metaKeys.rateCounter('acme', 'publish', MINUTE_10_00 + 60),
      metaKeys.rateCounter('other', 'publish', MINUTE_10_00),
    ];
    expect(new Set(keys.map((k) => k.pk)).size).toBe(4);
    for (const k of keys) expect(k.pk).not.toBe(metaKeys.namespacePk('acme'));
  });
});
