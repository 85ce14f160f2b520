/**
 * The fan-out budget of the rate limits (docs/rate-limits.md): writes per minute that a
 * namespace's publishes cause (messages x bindings reached), counted beside the per-request
 * publish budget. Over it the publish answers 429 RATE_LIMIT_EXCEEDED naming `fanout` and stores
 * nothing.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { sleep } from '../../lambda/domain/clock';

jest.setTimeout(90_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Waits for the next minute when fewer than `seconds` are left in this one (fixed windows). */
async function roomInWindow(seconds = 25) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await sleep(left + 50);
}

const BIG = 1_000_000;

describe('fan-out writes per minute', () => {
  it('refuses a batch that would pass the namespace fan-out budget with 429 naming fanout, storing nothing', async () => {
    const ns = await createTestNamespace('rlf', { publish: BIG, consume: BIG, management: BIG, fanout: 10 });
    const call = client(server.baseUrl, ns.key);
    const q = queueApi(call);
    const base = unique('fan');
    const names = [`${base}-a`, `${base}-b`, `${base}-c`];
    for (const name of names) await q.create({ name, topic_filter: `${base}/#` });
    const counts = async () => Promise.all(names.map(async (n) => (await q.get(n)).message_count));
    await roomInWindow();

    // 4 messages x 3 queues = 12 writes, over 10: refused whole.
    const batch = (n: number) => ({ messages: Array.from({ length: n }, (_, i) => ({ payload: `m${i}` })) });
    const over = await call('POST', `/topics/${base}/t/messages/batch`, batch(4));
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      details: { category: 'fanout', limit: 10, writes: 12, reset: Math.floor(Date.now() / 60_000) * 60 + 60 },
    });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The request's own category keeps its headers: the per-request publish budget is untouched.
    expect(Number(over.headers['x-ratelimit-limit'])).toBe(BIG);
    expect(await counts()).toEqual([0, 0, 0]);

    // 3 x 3 = 9 writes fit; one more message (3 writes) would make 12.
    expect((await call('POST', `/topics/${base}/t/messages/batch`, batch(3))).status).toBe(201);
    const single = await call('POST', `/topics/${base}/t/messages`, { payload: 'one more' });
    expect(single.status).toBe(429);
    expect(single.body.error?.details).toMatchObject({ category: 'fanout', limit: 10, writes: 3 });
    expect(await counts()).toEqual([3, 3, 3]);
  });

  it('leaves a namespace without a stored fan-out budget on the generous default', async () => {
    const ns = await createTestNamespace('rlf');
    const call = client(server.baseUrl, ns.key);
    const { name, topic } = await queueApi(call).createOnOwnTopic();
    const res = await call('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: 100 }, (_, i) => ({ payload: `m${i}` })) });
    expect(res.status).toBe(201);
    expect((await queueApi(call).get(name)).message_count).toBe(100);
  });
});
