/**
 * The fan-out budget's pure rule (lambda/core/rules/fanout-writes.ts) and the exact UpdateItem that
 * charges it (lambda/limits/storage/rate-limits.ts).
 */
import {
  DEFAULT_FANOUT_LIMIT, FANOUT_CATEGORY, fanoutExceeded, fanoutLimitOf, fanoutWrites, reachedWrites, roomBefore,
} from '../../lambda/core/rules/fanout-writes';
import { windowOf } from '../../lambda/core/rules/rate-limits';
import { chargeWritesParams, countAndChargeParams } from '../../lambda/limits/storage/rate-limits';

const NOW = Date.parse('2026-11-22T10:00:43.200Z');
const window = windowOf(NOW);

describe('fan-out budget rule', () => {
  it('counts one write per message per binding reached', () => {
    expect(fanoutWrites(100, 200)).toBe(20_000);
    expect(fanoutWrites(1, 221)).toBe(221);
    expect(fanoutWrites(3, 1)).toBe(3);
  });

  it('charges a message only for the webhooks of its own application, beside the bindings of none', () => {
    // 1,000 customers with a webhook each on one topic, one queue of no application.
    const bindings = [undefined, ...Array.from({ length: 1000 }, (_, i) => `cust-${i}`)];
    expect(reachedWrites(bindings, ['cust-7'])).toBe(2);
    expect(reachedWrites(bindings, [undefined, undefined])).toBe(2);
    expect(reachedWrites(bindings, ['cust-1', 'cust-1', 'nobody'])).toBe(5);
    expect(reachedWrites([undefined, 'a', 'a', 'b'], ['a', 'b', undefined])).toBe(3 + 2 + 1);
    // Without applications it is messages x bindings.
    expect(reachedWrites([undefined, undefined, undefined], [undefined, undefined])).toBe(fanoutWrites(2, 3));
  });

  it('reads a stored positive integer and falls back to the default for anything else', () => {
    expect(DEFAULT_FANOUT_LIMIT).toBe(100_000);
    expect(fanoutLimitOf({ fanout: 500 })).toBe(500);
    expect(fanoutLimitOf({ publish: 20 })).toBe(DEFAULT_FANOUT_LIMIT);
    for (const bad of [0, -5, 1.5, '500', null, Number.MAX_VALUE]) expect(fanoutLimitOf({ fanout: bad })).toBe(DEFAULT_FANOUT_LIMIT);
    expect(fanoutLimitOf(undefined)).toBe(DEFAULT_FANOUT_LIMIT);
  });

  it('admits a call only while the count before it leaves room for all its writes', () => {
    expect(roomBefore(10, 3)).toBe(7);
    expect(roomBefore(10, 10)).toBe(0);
    expect(roomBefore(10, 12)).toBe(-2);
  });

  it('refuses with 429 RATE_LIMIT_EXCEEDED naming the fanout budget, its limit, reset and the writes', () => {
    const e = fanoutExceeded(10, 3, window, NOW);
    expect(e).toMatchObject({ status: 429, code: 'RATE_LIMIT_EXCEEDED', details: { category: FANOUT_CATEGORY, limit: 10, reset: window.reset, writes: 3 } });
    expect(e.headers).toEqual({ 'Retry-After': '17' });
    expect(e.message).toMatch(/Retry after 17 s/);
    // The request's own X-RateLimit-* headers describe its category (publish): not overwritten.
    expect(e.headers['X-RateLimit-Remaining']).toBeUndefined();
  });

  it('tells a call over the whole budget to split, since waiting cannot help it', () => {
    expect(fanoutExceeded(10, 12, window, NOW).message).toMatch(/more than this namespace's fan-out budget of 10 a minute; publish fewer messages/);
  });
});

describe('chargeWritesParams', () => {
  it("is one conditional ADD of all the writes on the `fanout` attribute of the window's publish counter item", () => {
    expect(chargeWritesParams({ namespace: 'acme', window, limit: 100, writes: 30 }, 'meta')).toEqual({
      TableName: 'meta',
      Key: { pk: `NS#acme#RATE#publish#${window.start}`, sk: '#RATE' },
      UpdateExpression: 'ADD #f :n SET #ttl = :ttl',
      ConditionExpression: 'attribute_not_exists(#f) OR #f <= :room',
      ExpressionAttributeNames: { '#f': 'fanout', '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':n': 30, ':room': 70, ':ttl': window.reset + 300 },
      ReturnValues: 'UPDATED_NEW',
    });
  });
});

describe('countAndChargeParams', () => {
  it('counts the request and charges the writes on the same item, conditional on both limits, handing back the item when refused', () => {
    expect(countAndChargeParams({ namespace: 'acme', window, limit: 100, writes: 30, requestLimit: 1000, call: 'c1' }, 'meta')).toEqual({
      TableName: 'meta',
      Key: { pk: `NS#acme#RATE#publish#${window.start}`, sk: '#RATE' },
      UpdateExpression: 'ADD #c :one, #f :n SET #ttl = :ttl, #last = :call',
      ConditionExpression: '(attribute_not_exists(#c) OR #c < :limit) AND (attribute_not_exists(#f) OR #f <= :room) AND (attribute_not_exists(#last) OR #last <> :call)',
      ExpressionAttributeNames: { '#c': 'count', '#f': 'fanout', '#ttl': 'ttl', '#last': 'last' },
      ExpressionAttributeValues: { ':one': 1, ':limit': 1000, ':n': 30, ':room': 70, ':ttl': window.reset + 300, ':call': 'c1' },
      ReturnValues: 'UPDATED_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });
});
