/**
 * Rate limits through the real local gateway and handlers on DynamoDB Local, on the real clock.
 * Mostly GET /namespace (management); the 403 case uses POST /queues with a publish-only key.
 */
import { randomBytes } from 'node:crypto';
import { client, startTestServer, type TestResponse, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { applySeed } from '../../local/seed';
import { sleep } from '../../lambda/core/rules/clock';

// Generous: the file runs beside others (npm test runs three at once on two cores), and a test
// may wait for the next minute's window first.
jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const rateHeaders = (res: TestResponse) => ({
  limit: Number(res.headers['x-ratelimit-limit']),
  remaining: Number(res.headers['x-ratelimit-remaining']),
  reset: Number(res.headers['x-ratelimit-reset']),
});

/**
 * Waits for the next minute when fewer than `seconds` are left in this one, so a burst of
 * requests lands in one window (the windows are fixed to the wall clock).
 */
async function roomInWindow(seconds = 15) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await sleep(left + 50);
}

describe('rate limits through the gateway', () => {
  it('puts the headers on every answer and counts down per request', async () => {
    const ns = await createTestNamespace('rlg', { management: 5 });
    await roomInWindow();
    const get = client(server.baseUrl, ns.key);
    const a = await get('GET', '/namespace');
    const b = await get('GET', '/namespace');
    expect(a.status).toBe(200);
    expect(rateHeaders(a)).toEqual({ limit: 5, remaining: 4, reset: Math.floor(Date.now() / 60_000) * 60 + 60 });
    expect(rateHeaders(b).remaining).toBe(3);
  });

  it('answers 429 RATE_LIMIT_EXCEEDED with Retry-After pointing at the reset once the limit is used', async () => {
    const ns = await createTestNamespace('rlg', { management: 3 });
    await roomInWindow();
    const get = client(server.baseUrl, ns.key);
    for (let i = 0; i < 3; i++) expect((await get('GET', '/namespace')).status).toBe(200);
    const sent = Date.now();
    const res = await get('GET', '/namespace');
    const answered = Date.now();
    expect(res.status).toBe(429);
    const h = rateHeaders(res);
    expect(h).toMatchObject({ limit: 3, remaining: 0 });
    expect(res.body).toEqual({
      success: false,
      data: null,
      error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.any(String), details: { category: 'management', limit: 3, reset: h.reset } },
    });
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // Retry-After is the whole seconds to the reset from the moment the service answered, which
    // lies between the request's send and its answer here (timed on both sides: an answer slow on
    // its way back on loaded cores is not a wrong Retry-After).
    const answeredBy = h.reset - retryAfter;
    expect(answeredBy).toBeGreaterThan(sent / 1000 - 1);
    expect(answeredBy).toBeLessThanOrEqual(answered / 1000);
  });

  it('applies the spec defaults to a namespace without stored limits', async () => {
    const name = `rlg-${randomBytes(4).toString('hex')}`;
    const key = `${name}-key-${randomBytes(8).toString('hex')}`;
    await applySeed({ namespaces: [{ name, keys: [{ key, scopes: ['*'] }] }] });
    const res = await client(server.baseUrl, key)('GET', '/namespace');
    expect(res.status).toBe(200);
    expect(rateHeaders(res)).toMatchObject({ limit: 100, remaining: 99 });
  });

  it('counts each namespace on its own', async () => {
    const busy = await createTestNamespace('rlg', { management: 1 });
    const quiet = await createTestNamespace('rlg', { management: 1 });
    await roomInWindow();
    expect((await client(server.baseUrl, busy.key)('GET', '/namespace')).status).toBe(200);
    expect((await client(server.baseUrl, busy.key)('GET', '/namespace')).status).toBe(429);
    expect((await client(server.baseUrl, quiet.key)('GET', '/namespace')).status).toBe(200);
  });

  it('accepts exactly the limit of 50 concurrent requests and refuses the rest', async () => {
    const ns = await createTestNamespace('rlg', { management: 20 });
    await roomInWindow();
    const get = client(server.baseUrl, ns.key);
    const all = await Promise.all(Array.from({ length: 50 }, () => get('GET', '/namespace')));
    expect(new Set(all.map((r) => r.headers['x-ratelimit-reset'])).size).toBe(1);
    expect(all.filter((r) => r.status === 200)).toHaveLength(20);
    expect(all.filter((r) => r.status === 429).map((r) => r.body.error?.code)).toEqual(Array(30).fill('RATE_LIMIT_EXCEEDED'));
  });

  it('shows the headers on a 403 INSUFFICIENT_PERMISSIONS without counting it', async () => {
    const ns = await createTestNamespace('rlg', { management: 5 });
    await roomInWindow();
    const denied = await client(server.baseUrl, ns.keys.publish)('POST', '/queues', { name: 'q-denied', topic_filter: 'a/#' });
    expect(denied.status).toBe(403);
    expect(denied.body.error?.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(rateHeaders(denied)).toMatchObject({ limit: 5, remaining: 5 });
    expect(rateHeaders(await client(server.baseUrl, ns.key)('GET', '/namespace')).remaining).toBe(4);
  });

  it('puts no rate-limit headers on a 401 or an unknown path', async () => {
    const ns = await createTestNamespace('rlg');
    const unauthorized = await client(server.baseUrl, 'no-such-key')('GET', '/namespace');
    const unknown = await client(server.baseUrl, ns.key)('GET', '/no-such-path');
    for (const res of [unauthorized, unknown]) {
      expect([401, 404]).toContain(res.status);
      expect(Object.keys(res.headers).filter((k) => k.startsWith('x-ratelimit'))).toEqual([]);
    }
  });
});
