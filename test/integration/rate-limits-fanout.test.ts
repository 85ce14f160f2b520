/**
 * The fan-out budget of the rate limits (docs/rate-limits.md): writes per minute that a
 * namespace's publishes cause (messages x bindings reached), counted beside the per-request
 * publish budget. Over it the publish answers 429 RATE_LIMIT_EXCEEDED naming `fanout` and stores
 * nothing.
 *
 * Each case has a namespace (and so a budget) of its own and waits for room in the minute's
 * window (one waits for the next minute), so the cases run at once (`it.concurrent`, after the
 * file's `beforeAll`; no case uses a `beforeEach` or a mock).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { sleep } from '../../lambda/core/rules/clock';
import { until } from '../fixtures/receiver';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { runHooks } from '../../lambda/webhooks/hooks';
import { flushCounts } from '../../lambda/webhooks/storage/webhook-counters';
import { getQueue, getQueueCounters } from '../../lambda/queues/storage/queues';
import type { PublishedMessage } from '../../lambda/core/rules/message';
import { run } from '../../bin/admin';

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
  it.concurrent('refuses a batch that would pass the namespace fan-out budget with 429 naming fanout, storing nothing', async () => {
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

  it.concurrent('charges nothing for a publish the held-message quota refuses (409): a refused request changes no counter', async () => {
    const ns = await createTestNamespace('rlf', { publish: BIG, consume: BIG, management: BIG, fanout: 3 });
    expect(await run(['resource-limit', 'set', ns.name, 'held-messages', '1', '--json'], { out: () => undefined, err: () => undefined, env: process.env } as never)).toBe(0);
    const call = client(server.baseUrl, ns.key);
    const q = queueApi(call);
    const { name, topic } = await q.createOnOwnTopic();
    await roomInWindow();
    // Two messages held for two hours: over the quota of one, refused whole before anything is stored.
    const held = await call('POST', `/topics/${topic}/messages/batch`, { messages: [1, 2].map((i) => ({ payload: `h${i}`, delay_seconds: 7200 })) });
    expect({ status: held.status, code: held.body.error?.code }).toEqual({ status: 409, code: 'LIMIT_EXCEEDED' });
    // The whole budget (3 writes, one queue) is still there.
    for (let i = 0; i < 3; i++) {
      const r = await call('POST', `/topics/${topic}/messages`, { payload: `m${i}` });
      expect({ i, status: r.status, details: r.body.error?.details }).toEqual({ i, status: 201, details: undefined });
    }
    expect((await q.get(name)).message_count).toBe(3);
  });

  it.concurrent("charges an addressed publish only for its own application's webhooks, not every customer's on the topic", async () => {
    const ns = await createTestNamespace('rlfa', { publish: BIG, consume: BIG, management: BIG, fanout: 10 });
    const call = client(server.baseUrl, ns.key);
    const base = unique('fanapp');
    // 12 customers, each with a disabled webhook on the same topic: 12 bindings match it.
    const uids = Array.from({ length: 12 }, (_, i) => `${base}-c${i}`);
    for (const uid of uids) {
      expect((await call('POST', '/applications', { uid })).status).toBe(201);
      expect((await call('POST', '/webhooks', { name: `${uid}-wh`, url: 'http://127.0.0.1:9/hook', topic_filter: `${base}/#`, application: uid, enabled: false })).status).toBe(201);
    }
    await roomInWindow();
    // 3 messages for one customer reach 3 deliveries: 3 writes of the 10, not 3 x 12 = 36.
    const batch = { messages: Array.from({ length: 3 }, (_, i) => ({ payload: `m${i}`, application: uids[0] })) };
    const addressed = await call('POST', `/topics/${base}/orders/messages/batch`, batch);
    expect([addressed.status, addressed.body.error?.details]).toEqual([201, undefined]);
    // An unaddressed message reaches none of them: nothing charged.
    expect((await call('POST', `/topics/${base}/orders/messages`, { payload: 'to nobody' })).status).toBe(201);
    // 7 more writes fit (3 + 7 = 10); an 8th does not.
    for (let i = 0; i < 7; i++) expect((await call('POST', `/topics/${base}/orders/messages`, { payload: `n${i}`, application: uids[1 + i] })).status).toBe(201);
    const over = await call('POST', `/topics/${base}/orders/messages`, { payload: 'over', application: uids[8] });
    expect([over.status, over.body.error?.details?.writes]).toEqual([429, 1]);
  });

  it.concurrent('leaves a namespace without a stored fan-out budget on the generous default', async () => {
    const ns = await createTestNamespace('rlf');
    const call = client(server.baseUrl, ns.key);
    const { name, topic } = await queueApi(call).createOnOwnTopic();
    const res = await call('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: 100 }, (_, i) => ({ payload: `m${i}` })) });
    expect(res.status).toBe(201);
    expect((await queueApi(call).get(name)).message_count).toBe(100);
  });
});

describe('what else publishes pays the fan-out budget too', () => {
  it.concurrent('a redrive stops with 429 naming fanout and how many it moved; what it received and did not publish is visible again at once', async () => {
    const ns = await createTestNamespace('rlf', { publish: BIG, consume: BIG, management: BIG, fanout: 12 });
    const call = client(server.baseUrl, ns.key);
    const q = queueApi(call);
    const base = unique('rd');
    await q.create({ name: `${base}-src`, topic_filter: `${base}/src` });
    for (const n of ['a', 'b']) await q.create({ name: `${base}-${n}`, topic_filter: `${base}/dst/#` });
    await roomInWindow();
    expect((await call('POST', `/topics/${base}/src/messages/batch`, { messages: Array.from({ length: 6 }, (_, i) => ({ payload: `m${i}` })) })).status).toBe(201); // 6 writes

    // 2 messages x 2 queues = 4 writes: 10 of 12 spent.
    const first = await call('POST', `/queues/${base}-src/redrive`, { to_topic: `${base}/dst/x`, max: 2 });
    expect(first.status).toBe(200);
    expect(first.body.data.moved).toBe(2);
    // The other 4 would be 8 writes, 2 are left.
    const over = await call('POST', `/queues/${base}-src/redrive`, { to_topic: `${base}/dst/x` });
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { category: 'fanout', limit: 12 } });
    // SQS may answer a receive with fewer messages than asked: a batch of one (2 writes) fits.
    const { moved } = over.body.error?.details as { moved: number };
    expect([0, 1]).toContain(moved);
    expect(over.body.error?.message).toMatch(new RegExp(`moved ${moved} message`));
    expect((await q.get(`${base}-a`)).message_count).toBe(2 + moved);
    expect((await q.get(`${base}-src`)).message_count).toBe(4 - moved);
    // Given back, not hidden for the redrive's 5 minutes.
    const seen = new Set<string>();
    await until(async () => {
      const got = await call('POST', `/queues/${base}-src/messages/consume`, { max_messages: 10, timeout_seconds: 1, visibility_timeout_seconds: 600 });
      for (const m of got.body.data.messages as { message_id: string }[]) seen.add(m.message_id);
      return seen.size >= 4 - moved;
    }, 15_000, 'the redrive\'s unpublished messages to be visible again');
    expect(seen.size).toBe(4 - moved);
  });

  it.concurrent('a full queue whose dead-lettering the budget refuses drops and counts the message; the publish still answers 201', async () => {
    const ns = await createTestNamespace('rlf', { publish: BIG, consume: BIG, management: BIG, fanout: 5 });
    const call = client(server.baseUrl, ns.key);
    const q = queueApi(call);
    const base = unique('full');
    const dead = await q.createOnOwnTopic();
    await q.create({ name: `${base}-full`, topic_filter: `${base}/#`, max_size_mb: 1, dead_letter_topic: `${dead.topic}/full` });
    await roomInWindow(40);
    const KiB256 = 'x'.repeat(256 * 1024);
    for (let i = 0; i < 4; i++) expect((await call('POST', `/topics/${base}/t/messages`, { payload: KiB256 })).status).toBe(201); // 4 writes: full
    // 1 more write (5 of 5); its dead-letter publish would be a 6th.
    expect((await call('POST', `/topics/${base}/t/messages`, { payload: 'one too many' })).status).toBe(201);
    expect(await q.consume(dead.name, { max_messages: 10, timeout_seconds: 1 })).toEqual([]);
    const full = (await getQueue(ns.name, `${base}-full`))!;
    expect(await getQueueCounters(ns.name, full.id)).toMatchObject({ message_count: 4, dropped_count: 1, dead_lettered_count: 0 });
  });

  it.concurrent('a message out of deliveries whose dead-lettering the budget refuses stays in its queue, dead-lettered by a receive in a later minute', async () => {
    const ns = await createTestNamespace('rlf', { publish: BIG, consume: BIG, management: BIG, fanout: 2 });
    const call = client(server.baseUrl, ns.key);
    const q = queueApi(call);
    const dead = await q.createOnOwnTopic();
    const { name, topic } = await q.createOnOwnTopic({ max_retries: 0, dead_letter_topic: dead.topic });
    await roomInWindow(40);
    await q.publish(topic, { payload: 'poison' }); // 1 write
    await q.publish(topic, { payload: 'poison 2' }); // 2: the budget of this minute is spent
    expect(await q.consume(name, { max_messages: 10, visibility_timeout_seconds: 1 })).toHaveLength(2);
    await sleep(1200);
    // Out of deliveries, and the dead-letter publish (2 writes) is refused: kept, not lost.
    expect(await q.consume(name, { max_messages: 10, timeout_seconds: 2 })).toEqual([]);
    expect(await q.consume(dead.name, { max_messages: 10, timeout_seconds: 1 })).toEqual([]);
    expect((await q.get(name)).message_count).toBe(2);
    const got: string[] = [];
    await until(async () => {
      expect(await q.consume(name, { max_messages: 10, timeout_seconds: 5 })).toEqual([]); // never handed out again
      got.push(...(await q.consume(dead.name, { max_messages: 10, timeout_seconds: 1 })).map((m) => m.payload));
      return got.length >= 2;
    }, 120_000, 'the dead letters in a later minute');
    expect(got.sort()).toEqual(['poison', 'poison 2']);
    expect((await q.get(name)).message_count).toBe(0);
  }, 180_000);

  it.concurrent('a webhook hook over the budget publishes nothing and is recorded as a hook failure', async () => {
    const ns = await createTestNamespace('rlf', { publish: BIG, consume: BIG, management: BIG, fanout: 1 });
    const call = client(server.baseUrl, ns.key);
    const q = queueApi(call);
    const base = unique('hk');
    for (const n of ['a', 'b']) await q.create({ name: `${base}-${n}`, topic_filter: `${base}/hooked/#` });
    const name = `${base}-wh`;
    const hook = { topic: `${base}/hooked/ok`, payload: 'done' };
    expect((await call('POST', '/webhooks', { name, url: 'http://127.0.0.1:9/x', topic_filter: `${base}/in`, enabled: false, on_success: hook, on_failure: 'send_to_dlq', dead_letter_topic: `${base}/hooked/dlq` })).status).toBe(201);
    const w = await getWebhook(ns.name, name);
    const m: PublishedMessage = { message_id: 'm-1', topic: `${base}/in`, payload: 'p', content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 1 };
    // Each publish would be 1 message x 2 queues = 2 writes, over the budget of 1.
    expect(await runHooks(ns.name, { name, id: w!.id }, w!.config, m, { ok: true, response: '' }, Date.now())).toBe('refused');
    expect(await runHooks(ns.name, { name, id: w!.id }, w!.config, m, { ok: false, error: 'HTTP 500' }, Date.now())).toBe('refused');
    expect(await Promise.all(['a', 'b'].map(async (n) => (await q.get(`${base}-${n}`)).message_count))).toEqual([0, 0]);
    await flushCounts(); // the delivery function writes its counters at the end of its batch
    await until(async () => (await call('GET', `/webhooks/${name}/status`)).body.data.hook_failure_count === 2, 10_000, 'the hook failures to be counted');
    expect((await call('GET', `/webhooks/${name}/status`)).body.data.last_hook_error).toMatch(/fan-out budget/);
  });
});
