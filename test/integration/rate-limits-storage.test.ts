/**
 * The rate-limit middleware on the real counter in DynamoDB Local, with a fake clock so windows
 * can roll over on demand. Each test uses its own namespace, so counters never collide.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Request } from '@middy/core';
import { rateLimit, LIMITS_CACHE_MS } from '../../lambda/limits/rate-limit';
import type { ApiEvent, ApiRequest } from '../../lambda/core/middleware/api-request';
import { ApiError } from '../../lambda/core/rules/errors';
import { COUNTER_GRACE_SECONDS, windowOf } from '../../lambda/core/rules/rate-limits';
import type { RateCategory, Route } from '../../lambda/core/rules/routes';
import { chargeWrites, countAndCharge, counterKey, counterShards, countRequest, peekCount } from '../../lambda/limits/storage/rate-limits';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { setNamespaceLimits } from '../../lambda/namespaces/storage/namespaces';
import { createTestNamespace } from '../fixtures/namespace';
import { afterIndexLag } from '../fixtures/harsh-waits';

// A whole minute in the past: these windows never meet the ones the gateway tests use.
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

function fakeClock(start = T0) {
  let now = start;
  return { now: () => now, set: (ms: number) => (now = ms), advance: (ms: number) => (now += ms) };
}

const route = (category: RateCategory): Route => ({
  method: 'GET', path: `/${category}`, group: 'namespace', operation: 'op', category, scope: 'read', status: 200,
});

type Outcome = { status: 200; headers: Record<string, string> } | { status: number; error: ApiError; headers: Record<string, string> };

/** Runs the middleware's `before` for one request of `namespace`, as the handler chain would. */
async function through(mw: ReturnType<typeof rateLimit>, namespace: string, category: RateCategory): Promise<Outcome> {
  const api = { route: route(category), namespace, responseHeaders: {} } as unknown as ApiRequest;
  const request = { event: { api } as ApiEvent } as Request<ApiEvent>;
  try {
    await mw.before!(request);
    return { status: 200, headers: api.responseHeaders };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { status: e.status, error: e, headers: { ...api.responseHeaders, ...e.headers } };
  }
}

describe('rate-limit counter on DynamoDB', () => {
  it('accepts up to the limit in a window and starts again at zero in the next', async () => {
    const ns = await createTestNamespace('rl', { management: 3 });
    const clock = fakeClock(T0 + 58_000);
    const mw = rateLimit({ clock });
    const first = await Promise.all([1, 2, 3, 4].map(() => through(mw, ns.name, 'management')));
    expect(first.map((o) => o.status).sort()).toEqual([200, 200, 200, 429]);
    const refused = first.find((o) => o.status === 429)!;
    expect(refused.headers).toMatchObject({ 'Retry-After': '2', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(T0 / 1000 + 60) });

    clock.set(T0 + 60_000);
    const next = await through(mw, ns.name, 'management');
    expect(next.status).toBe(200);
    expect(next.headers).toEqual({ 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': String(T0 / 1000 + 120) });
  });

  it('keeps categories independent', async () => {
    const ns = await createTestNamespace('rl', { publish: 2, consume: 2, management: 1 });
    const mw = rateLimit({ clock: fakeClock() });
    expect((await through(mw, ns.name, 'management')).status).toBe(200);
    expect((await through(mw, ns.name, 'management')).status).toBe(429);
    const pub = await through(mw, ns.name, 'publish');
    const con = await through(mw, ns.name, 'consume');
    expect(pub).toMatchObject({ status: 200, headers: { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '1' } });
    expect(con).toMatchObject({ status: 200, headers: { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '1' } });
  });

  it('gives each namespace its own counters and limits', async () => {
    const small = await createTestNamespace('rl', { publish: 1 });
    const large = await createTestNamespace('rl', { publish: 50 });
    const mw = rateLimit({ clock: fakeClock() });
    expect((await through(mw, small.name, 'publish')).status).toBe(200);
    expect((await through(mw, small.name, 'publish')).status).toBe(429);
    expect((await through(mw, large.name, 'publish')).headers).toMatchObject({ 'X-RateLimit-Limit': '50', 'X-RateLimit-Remaining': '49' });
  });

  it('applies an admin change of the limits once the cached limits expire', async () => {
    const ns = await createTestNamespace('rl', { management: 2 });
    const clock = fakeClock(T0 + 1_000);
    const mw = rateLimit({ clock });
    expect((await through(mw, ns.name, 'management')).headers['X-RateLimit-Limit']).toBe('2');
    await setNamespaceLimits(ns.name, { management: 40 });
    clock.advance(LIMITS_CACHE_MS - 1);
    expect((await through(mw, ns.name, 'management')).headers['X-RateLimit-Limit']).toBe('2');
    clock.advance(1);
    expect((await through(mw, ns.name, 'management')).headers).toMatchObject({ 'X-RateLimit-Limit': '40', 'X-RateLimit-Remaining': '37' });
  });

  it('never accepts more than the limit under concurrency: 50 at once against 20', async () => {
    const ns = await createTestNamespace('rl', { publish: 20 });
    const mw = rateLimit({ clock: fakeClock(T0 + 30_000) });
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => through(mw, ns.name, 'publish')));
    expect(outcomes.filter((o) => o.status === 200)).toHaveLength(20);
    expect(outcomes.filter((o) => o.status === 429)).toHaveLength(30);
    // Every accepted request saw a distinct count: 19 down to 0 remaining, each once.
    const remaining = outcomes.filter((o) => o.status === 200).map((o) => Number(o.headers['X-RateLimit-Remaining']));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // Refused requests were not counted (peekCount reads eventually consistently: once the writes show).
    await afterIndexLag();
    expect(await peekCount({ namespace: ns.name, category: 'publish', window: windowOf(T0 + 30_000) })).toBe(20);
  });

  it('stores one counter item per window with a TTL a few minutes after the window ends', async () => {
    const ns = await createTestNamespace('rl');
    const window = windowOf(T0 + 12_000);
    await countRequest({ namespace: ns.name, category: 'consume', window, limit: 5 });
    await countRequest({ namespace: ns.name, category: 'consume', window, limit: 5 });
    const item = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.rateCounter(ns.name, 'consume', window.start), ConsistentRead: true }));
    expect(item.Item).toMatchObject({ count: 2, ttl: window.reset + COUNTER_GRACE_SECONDS });
  });

  it('refuses without counting once the limit is reached, and a limit of 0 admits nothing', async () => {
    const ns = await createTestNamespace('rl');
    const window = windowOf(T0 + 5_000);
    expect(await countRequest({ namespace: ns.name, category: 'publish', window, limit: 1 })).toEqual({ accepted: true, count: 1 });
    expect(await countRequest({ namespace: ns.name, category: 'publish', window, limit: 1 })).toMatchObject({ accepted: false });
    expect(await countRequest({ namespace: ns.name, category: 'consume', window, limit: 0 })).toMatchObject({ accepted: false });
    await afterIndexLag(); // peekCount reads eventually consistently
    expect(await peekCount({ namespace: ns.name, category: 'publish', window })).toBe(1);
    expect(await peekCount({ namespace: ns.name, category: 'consume', window })).toBe(0);
  });
});

describe('fan-out writes counter on DynamoDB', () => {
  it('admits calls while their writes fit, exactly under concurrency, and a refused call adds nothing', async () => {
    const ns = await createTestNamespace('rlw');
    const window = windowOf(T0);
    const charge = (writes: number) => chargeWrites({ namespace: ns.name, window, limit: 100, writes });
    // 10 concurrent calls of 30 writes: exactly 3 fit in 100.
    const results = await Promise.all(Array.from({ length: 10 }, () => charge(30)));
    expect(results.filter((r) => r.accepted)).toHaveLength(3);
    const read = async () =>
      (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.rateCounter(ns.name, 'publish', window.start), ConsistentRead: true }))).Item?.fanout;
    expect(await read()).toBe(90);
    expect((await charge(11)).accepted).toBe(false);
    expect(await read()).toBe(90);
    expect(await charge(10)).toEqual({ accepted: true, count: 100 });
    expect((await charge(101)).accepted).toBe(false);
    // The budget is an attribute of the publish counter's item: its request count is untouched.
    expect(await peekCount({ namespace: ns.name, category: 'publish', window })).toBe(0);
  });
});

describe('a request counted with its writes in one update', () => {
  it('admits exactly what fits both limits under concurrency, and a refusal adds nothing and names the limit', async () => {
    const ns = await createTestNamespace('rlw');
    const window = windowOf(T0 + 2 * 60_000);
    const both = (writes: number, requestLimit = 5) => countAndCharge({ namespace: ns.name, window, limit: 100, writes, requestLimit });
    const read = async () => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.rateCounter(ns.name, 'publish', window.start), ConsistentRead: true }))).Item;
    // 8 concurrent calls of 30 writes: 3 fit the budget of 100, well under 5 requests.
    const results = await Promise.all(Array.from({ length: 8 }, () => both(30)));
    expect(results.filter((r) => r.accepted)).toHaveLength(3);
    expect(results.filter((r) => !r.accepted)).toEqual(Array.from({ length: 5 }, () => ({ accepted: false, refused: 'fanout' })));
    expect(await read()).toMatchObject({ count: 3, fanout: 90 });
    // The fan-out charge of another publisher (alone) shares the budget.
    expect(await chargeWrites({ namespace: ns.name, window, limit: 100, writes: 5 })).toEqual({ accepted: true, count: 95 });
    expect(await both(5)).toEqual({ accepted: true, count: 4 });
    expect(await both(1)).toEqual({ accepted: false, refused: 'fanout' });
    expect(await both(0)).toEqual({ accepted: true, count: 5 });
    // Both limits reached: the request's is named (it is checked first, as the middleware did).
    expect(await both(1)).toEqual({ accepted: false, refused: 'publish' });
    expect(await read()).toMatchObject({ count: 5, fanout: 100 });
  });
});

describe('a limit above what one counter item takes', () => {
  it('is split over items whose counts add up to at most the limit, each on a key of its own', async () => {
    // 40 a window with items of 10 (the deployment's items take 30,000 each): 4 items.
    const ns = await createTestNamespace('rlsplit');
    const window = windowOf(T0 + 5 * 60_000);
    const r = { namespace: ns.name, category: 'consume' as const, window, limit: 40 };
    expect(counterShards(40, 10)).toBe(4);
    const outcomes = await Promise.all(Array.from({ length: 60 }, () => countRequest(r, 10)));
    const accepted = outcomes.filter((o) => o.accepted).length;
    const counts = await Promise.all(
      [0, 1, 2, 3].map(async (i) => Number((await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: counterKey(r, i), ConsistentRead: true }))).Item?.count ?? 0)),
    );
    expect(new Set([0, 1, 2, 3].map((i) => counterKey(r, i).pk)).size).toBe(4);
    expect(counts.every((c) => c <= 10)).toBe(true);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(accepted);
    expect(accepted).toBeLessThanOrEqual(40);
    // A request tries two items: near the limit one may be refused while a third has room.
    expect(accepted).toBeGreaterThanOrEqual(30);
    expect(counts.filter((c) => c > 0).length).toBe(4);
  });

  it('keeps the default limits on one item, the key an unsplit counter always had', () => {
    const window = windowOf(T0);
    expect(counterShards(500)).toBe(1);
    expect(counterKey({ namespace: 'acme', category: 'consume', window })).toEqual(metaKeys.rateCounter('acme', 'consume', window.start));
    expect(counterShards(100_000)).toBe(4);
  });
});
