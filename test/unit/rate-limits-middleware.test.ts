/**
 * The rate-limit middleware in its real place in a middy chain (envelope, authorize, rate limit,
 * operation) with an in-memory counter that has the storage's semantics, and a fake clock.
 */
import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { envelope } from '../../lambda/core/middleware/envelope';
import { ApiError } from '../../lambda/core/rules/errors';
import { authorize } from '../../lambda/core/middleware/authorize';
import { limitsCache, rateLimit, type RateLimitOptions } from '../../lambda/limits/rate-limit';
import type { ApiEvent } from '../../lambda/core/middleware/api-request';
import type { CounterRequest, CounterResult } from '../../lambda/limits/storage/rate-limits';
import type { RateCategory, Route, Scope } from '../../lambda/core/rules/routes';

const logger = new Logger({ logLevel: 'SILENT' });
const T0 = Date.parse('2026-11-22T10:00:00.000Z');

function fakeClock(start = T0) {
  let now = start;
  return { now: () => now, set: (ms: number) => (now = ms), advance: (ms: number) => (now += ms) };
}

/** Same contract as storage/rate-limits.ts countRequest: refuse at the limit, count only accepted. */
function memoryCounter() {
  const counts = new Map<string, number>();
  const keyOf = (r: Omit<CounterRequest, 'limit'>) => `${r.namespace}|${r.category}|${r.window.start}`;
  return {
    counts,
    count: async (r: CounterRequest): Promise<CounterResult> => {
      const k = keyOf(r);
      const c = counts.get(k) ?? 0;
      if (c >= r.limit) return { accepted: false, count: r.limit };
      counts.set(k, c + 1);
      return { accepted: true, count: c + 1 };
    },
    peek: async (r: Omit<CounterRequest, 'limit'>) => counts.get(keyOf(r)) ?? 0,
  };
}

const route = (category: RateCategory, scope: Scope = 'read'): Route => ({
  method: 'GET', path: `/${category}`, group: 'namespace', operation: 'op', category, scope, status: 200,
});

function chain(opts: RateLimitOptions) {
  const ran: string[] = [];
  const handler = middy<ApiEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 })
    .use(envelope({ logger }))
    .use({
      // Stands in for resolveRequest: the route comes from the test.
      before: async (request) => {
        const r = (request.event as unknown as { testRoute: Route }).testRoute;
        request.event.api = {
          route: r, params: {}, query: {}, headers: {}, namespace: '', scopes: [], keyId: '', body: {}, requestId: 'r',
          protocol: 'http', responseHeaders: {},
        };
      },
    })
    .use(authorize({ logger }))
    .use(rateLimit(opts))
    .handler(async (event) => {
      ran.push(event.api!.route.category);
      if (event.api!.route.path === '/fail') throw new ApiError(404, 'QUEUE_NOT_FOUND', 'x');
      // Stands in for the publish path's one write (publishing/write-budget.ts), which claims the count and makes it.
      if (event.api!.route.path === '/counted-by-publish' && event.api!.deferredCount!.claim()) event.api!.deferredCount!.settle({ accepted: true, count: 1 });
      return { data: { ok: true } } as unknown as APIGatewayProxyResult;
    });
  const call = (r: Route, namespace = 'acme', scopes = '*') =>
    handler({ testRoute: r, requestContext: { authorizer: { namespace, scopes, keyId: 'k' } } } as unknown as ApiEvent, {} as never);
  /** A portal session of `application` (what the authorizer answers for one). */
  const asSession = (r: Route, application: string, namespace = 'acme') =>
    handler({ testRoute: r, requestContext: { authorizer: { namespace, scopes: 'manage,consume', keyId: `portal-session:${application}`, portal: 'session', application } } } as unknown as ApiEvent, {} as never);
  return { call, asSession, ran };
}

describe('rate-limit middleware', () => {
  it('counts each request and shows limit, remaining and reset on success', async () => {
    const counter = memoryCounter();
    const { call } = chain({ clock: fakeClock(T0 + 5_000), ...counter, loadOverrides: async () => ({ management: 5 }) });
    const first = await call(route('management'));
    const second = await call(route('management'));
    expect(first.statusCode).toBe(200);
    expect(first.headers).toMatchObject({ 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '4', 'X-RateLimit-Reset': String(T0 / 1000 + 60) });
    expect(second.headers).toMatchObject({ 'X-RateLimit-Remaining': '3' });
  });

  it('answers 429 over the limit without running the operation', async () => {
    const counter = memoryCounter();
    const clock = fakeClock(T0 + 40_250);
    const { call, ran } = chain({ clock, ...counter, loadOverrides: async () => ({ publish: 2 }) });
    await call(route('publish'));
    await call(route('publish'));
    const refused = await call(route('publish'));
    expect(ran).toEqual(['publish', 'publish']);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers).toMatchObject({
      'Retry-After': '20', 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(T0 / 1000 + 60),
    });
    expect(JSON.parse(refused.body)).toEqual({
      success: false,
      data: null,
      error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.any(String), details: { category: 'publish', limit: 2, reset: T0 / 1000 + 60 } },
    });
  });

  it("leaves a publish's count to the publish path, and counts it itself when the request ends without that write", async () => {
    const counter = memoryCounter();
    const { call } = chain({ clock: fakeClock(T0 + 5_000), ...counter, loadOverrides: async () => ({ publish: 2 }) });
    const publish: Route = { ...route('publish', 'publish'), operation: 'publish' };
    const byPublish = await call({ ...publish, path: '/counted-by-publish' });
    expect([byPublish.statusCode, byPublish.headers?.['X-RateLimit-Remaining']]).toEqual([200, '1']);
    expect(counter.counts.size).toBe(0); // the middleware wrote nothing
    const replay = await call(publish); // answered without the publish path (an Idempotency-Key's replay)
    const missing = await call({ ...publish, path: '/fail' }); // refused before it
    const over = await call({ ...publish, path: '/fail' });
    expect([replay.statusCode, replay.headers?.['X-RateLimit-Remaining']]).toEqual([200, '1']);
    expect([missing.statusCode, missing.headers?.['X-RateLimit-Remaining']]).toEqual([404, '0']);
    // Over the limit the 429 takes the place of the handler's answer, as when the middleware counted first.
    expect([over.statusCode, JSON.parse(over.body).error.details.category, over.headers?.['X-RateLimit-Remaining']]).toEqual([429, 'publish', '0']);
  });

  it("counts a portal session on its application's counter and `portal` limit, apart from the namespace's", async () => {
    const counter = memoryCounter();
    const { call, asSession } = chain({ clock: fakeClock(T0 + 5_000), ...counter, loadOverrides: async () => ({ management: 3, portal: 1 }) });
    const webhooks: Route = { ...route('management'), path: '/webhooks' };
    const a1 = await asSession(webhooks, 'cust-a');
    const a2 = await asSession(webhooks, 'cust-a');
    const b1 = await asSession(webhooks, 'cust-b');
    const platform = await call(route('management'));
    expect([a1.statusCode, a1.headers?.['X-RateLimit-Limit'], a1.headers?.['X-RateLimit-Remaining']]).toEqual([200, '1', '0']);
    expect(a2.statusCode).toBe(429);
    expect(JSON.parse(a2.body).error.details).toEqual({ category: 'management', limit: 1, reset: T0 / 1000 + 60, application: 'cust-a' });
    expect(b1.statusCode).toBe(200);
    expect([platform.statusCode, platform.headers?.['X-RateLimit-Limit'], platform.headers?.['X-RateLimit-Remaining']]).toEqual([200, '3', '2']);
    expect([...counter.counts.keys()].map((k) => k.split('|').slice(0, 2).join('|')).sort()).toEqual(['acme|management', 'acme|portal#cust-a#management', 'acme|portal#cust-b#management']);
  });

  it('starts a fresh count when the window rolls over', async () => {
    const counter = memoryCounter();
    const clock = fakeClock(T0 + 59_000);
    const { call } = chain({ clock, ...counter, loadOverrides: async () => ({ management: 1 }) });
    expect((await call(route('management'))).statusCode).toBe(200);
    expect((await call(route('management'))).statusCode).toBe(429);
    clock.set(T0 + 60_000);
    const next = await call(route('management'));
    expect(next.statusCode).toBe(200);
    expect(next.headers).toMatchObject({ 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(T0 / 1000 + 120) });
  });

  it('keeps categories and namespaces apart', async () => {
    const counter = memoryCounter();
    const { call } = chain({ clock: fakeClock(), ...counter, loadOverrides: async () => ({ publish: 1, consume: 1, management: 1 }) });
    expect((await call(route('management'))).statusCode).toBe(200);
    expect((await call(route('management'))).statusCode).toBe(429);
    expect((await call(route('publish'))).statusCode).toBe(200);
    expect((await call(route('consume'))).statusCode).toBe(200);
    expect((await call(route('management'), 'other')).statusCode).toBe(200);
  });

  it('uses the spec defaults for a namespace without overrides', async () => {
    const { call } = chain({ clock: fakeClock(), ...memoryCounter(), loadOverrides: async () => undefined });
    expect((await call(route('publish'))).headers).toMatchObject({ 'X-RateLimit-Limit': '1000', 'X-RateLimit-Remaining': '999' });
    expect((await call(route('consume'))).headers).toMatchObject({ 'X-RateLimit-Limit': '500' });
    expect((await call(route('management'))).headers).toMatchObject({ 'X-RateLimit-Limit': '100' });
  });

  it('counts requests the operation refuses and puts the headers on their errors', async () => {
    const counter = memoryCounter();
    const { call } = chain({ clock: fakeClock(), ...counter, loadOverrides: async () => ({ management: 3 }) });
    const res = await call({ ...route('management'), path: '/fail' });
    expect(res.statusCode).toBe(404);
    expect(res.headers).toMatchObject({ 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': '2' });
  });

  it('shows the headers on a 403 without counting it', async () => {
    const counter = memoryCounter();
    const { call, ran } = chain({ clock: fakeClock(), ...counter, loadOverrides: async () => ({ publish: 3 }) });
    await call(route('publish', 'publish'));
    const denied = await call(route('publish', 'publish'), 'acme', 'consume');
    expect(denied.statusCode).toBe(403);
    expect(denied.headers).toMatchObject({ 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': '2' });
    expect((await call(route('publish', 'publish'))).headers).toMatchObject({ 'X-RateLimit-Remaining': '1' });
    expect(ran).toEqual(['publish', 'publish']);
  });

  it('puts no headers on a 401 (no namespace from the authorizer)', async () => {
    const { call } = chain({ clock: fakeClock(), ...memoryCounter(), loadOverrides: async () => undefined });
    const res = await call(route('management'), '');
    expect(res.statusCode).toBe(401);
    expect(Object.keys(res.headers ?? {}).filter((h) => /ratelimit/i.test(h))).toEqual([]);
  });

  it('refuses locally, without calling the counter, once this container saw the window full', async () => {
    const counter = memoryCounter();
    let calls = 0;
    const count = (r: CounterRequest) => (calls++, counter.count(r));
    const clock = fakeClock(T0 + 1_000);
    let stored = { management: 2 };
    const { call } = chain({ clock, count, peek: counter.peek, loadOverrides: async () => stored, limitsCacheMs: 10_000 });
    for (let i = 0; i < 3; i++) await call(route('management'));
    expect(calls).toBe(3);
    const local = await call(route('management'));
    expect(local.statusCode).toBe(429);
    expect(local.headers).toMatchObject({ 'X-RateLimit-Remaining': '0', 'Retry-After': '59' });
    expect(calls).toBe(3);
    // Another category, or a raised limit once the cached limits expire, asks the counter again.
    expect((await call(route('publish'))).statusCode).toBe(200);
    stored = { management: 5 };
    clock.advance(10_000);
    expect((await call(route('management'))).statusCode).toBe(200);
    // And so does the next window.
    clock.set(T0 + 60_000);
    const fresh = await call(route('management'));
    expect(fresh.headers).toMatchObject({ 'X-RateLimit-Remaining': '4' });
  });

  it('answers 503 with Retry-After: 1, not a 429 to the end of the minute, when DynamoDB throttles the counter, and asks it again next time', async () => {
    // The namespace is under its limit: a throttled counter says nothing about it (the fault
    // suite saw 429s with Retry-After up to 57 s for a namespace far below its limit).
    const throttled = Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
    let calls = 0;
    const { call, ran } = chain({ clock: fakeClock(T0 + 3_000), count: async () => (calls++, Promise.reject(throttled)), peek: async () => 0, loadOverrides: async () => undefined });
    const res = await call(route('publish'));
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body).error.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.headers).toMatchObject({ 'Retry-After': '1' });
    await call(route('publish'));
    expect(calls).toBe(2);
    expect(ran).toEqual([]);
  });


  it('answers 500 INTERNAL_ERROR, without running the operation, when the counter fails otherwise', async () => {
    const { call, ran } = chain({ clock: fakeClock(), count: async () => Promise.reject(new Error('boom')), peek: async () => 0, loadOverrides: async () => undefined });
    const res = await call(route('publish'));
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body).error.code).toBe('INTERNAL_ERROR');
    expect(ran).toEqual([]);
  });
});

describe('limitsCache', () => {
  it('reads a namespace once per TTL, sharing concurrent reads, and rereads after it', async () => {
    const clock = fakeClock();
    let reads = 0;
    let stored = { publish: 7 };
    const limitsOf = limitsCache(async () => (reads++, stored), clock, 10_000);
    const all = await Promise.all([limitsOf('acme'), limitsOf('acme'), limitsOf('acme')]);
    expect(reads).toBe(1);
    expect(all[0].publish).toBe(7);
    stored = { publish: 9 };
    clock.advance(9_999);
    expect((await limitsOf('acme')).publish).toBe(7);
    clock.advance(1);
    expect((await limitsOf('acme')).publish).toBe(9);
    expect(reads).toBe(2);
  });

  it('does not cache a failed read', async () => {
    let fail = true;
    const limitsOf = limitsCache(async () => {
      if (fail) throw new Error('down');
      return { consume: 3 };
    }, fakeClock(), 10_000);
    await expect(limitsOf('acme')).rejects.toThrow('down');
    fail = false;
    expect((await limitsOf('acme')).consume).toBe(3);
  });
});
