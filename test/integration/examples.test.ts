/**
 * The typed client (client/) and the examples (examples/) against the local runtime: the real
 * gateway and handlers on DynamoDB Local, the local webhook delivery queue and retry workflow,
 * over real HTTP with the client's own fetch.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { ApiError, createMessagingClient, unwrap, type MessagingClient } from '../../client';
import { runConsumer } from '../../examples/consumer';
import { publishOrder, publishOrders } from '../../examples/publisher';
import { startWebhookReceiver, type Delivery } from '../../examples/webhook-receiver';
import { startLocalWebhooks, type LocalWebhooks } from '../../local/webhooks';
import { startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { until } from '../fixtures/receiver';

jest.setTimeout(60_000);

let server: TestServer;
let local: LocalWebhooks;
let api: MessagingClient;

beforeAll(async () => {
  server = await startTestServer();
  local = await startLocalWebhooks({ queueName: `deliveries-${randomUUID()}` });
  api = createMessagingClient({ baseUrl: server.baseUrl, apiKey: (await createTestNamespace('ex')).key });
});
afterAll(async () => {
  await local.stop();
  await server.close();
});

async function queueOn(client: MessagingClient, topicFilter: string) {
  const name = unique('q');
  unwrap(await client.POST('/queues', { body: { name, topic_filter: topicFilter } }));
  return name;
}

describe('typed client', () => {
  it('sends topics with / as path levels and returns typed data', async () => {
    const queue = await queueOn(api, 'orders/+/created');
    const r = unwrap(await api.POST('/topics/{topic}/messages', { params: { path: { topic: 'orders/eu/created' } }, body: { payload: 'x' } }));
    expect(r).toMatchObject({ topic: 'orders/eu/created', size: 1 });
    expect(unwrap(await api.GET('/queues/{queue_name}', { params: { path: { queue_name: queue } } })).message_count).toBe(1);
  });

  it('throws the envelope error as an ApiError with status, code and field details', async () => {
    const err = await Promise.resolve()
      .then(async () => unwrap(await api.POST('/queues', { body: { name: unique('q'), topic_filter: 'a', max_retries: 5000 } })))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 422, code: 'VALIDATION_ERROR', details: { fields: [{ field: 'max_retries' }] } });
  });
});

describe('examples/publisher.ts and examples/consumer.ts', () => {
  it('publishes with an Idempotency-Key and in batches; the consumer processes and batch-acks every message once', async () => {
    const topic = `orders/${unique('t')}`;
    const queue = await queueOn(api, topic);
    const key = randomUUID();
    const first = await publishOrder(api, topic, { id: 0, total: 5 }, key);
    // A retry with the same key answers the first result and stores nothing.
    expect((await publishOrder(api, topic, { id: 0, total: 5 }, key)).message_id).toBe(first.message_id);
    const ids = await publishOrders(api, topic, Array.from({ length: 150 }, (_, i) => ({ id: i + 1, total: i })));
    expect(ids).toHaveLength(150);

    const seen: number[] = [];
    const stop = new AbortController();
    const stats = await runConsumer({
      api,
      queue,
      batchSize: 25,
      waitSeconds: 1,
      signal: AbortSignal.any([stop.signal, AbortSignal.timeout(30_000)]),
      handle: async (m) => {
        seen.push((JSON.parse(m.payload) as { id: number }).id);
        if (seen.length === 151) stop.abort();
      },
    });
    expect(stats).toMatchObject({ processed: 151, failed: 0, released: 0 });
    expect(new Set(seen).size).toBe(151);
    expect(unwrap(await api.GET('/queues/{queue_name}', { params: { path: { queue_name: queue } } })).message_count).toBe(0);
  });

  it('leaves a message whose processing failed unacknowledged, so it comes back and is processed later', async () => {
    const topic = unique('t');
    const queue = await queueOn(api, topic);
    await publishOrders(api, topic, [{ id: 1, total: 1 }, { id: 2, total: 2 }]);
    const second: number[] = [];
    const stop = new AbortController();
    const stats = await runConsumer({
      api,
      queue,
      waitSeconds: 2,
      // Short, so the failed message comes back soon; long enough for an ack on a busy machine.
      visibilitySeconds: 3,
      signal: AbortSignal.any([stop.signal, AbortSignal.timeout(20_000)]),
      handle: async (m) => {
        if ((JSON.parse(m.payload) as { id: number }).id !== 2) return;
        second.push(m.receive_count);
        if (m.receive_count === 1) throw new Error('transient failure');
        stop.abort();
      },
    });
    expect(stats.failed).toBe(1);
    // Failed on its first delivery, processed (and acknowledged) on its second.
    expect(second).toEqual([1, 2]);
    expect(stats.processed).toBeGreaterThanOrEqual(1);
  });

  it('does not process the rest of a batch once its visibility runs out: those messages come back', async () => {
    const topic = unique('t');
    const queue = await queueOn(api, topic);
    await publishOrders(api, topic, [1, 2, 3].map((id) => ({ id, total: id })));
    const processed: { id: number; delivery: number }[] = [];
    const stop = new AbortController();
    const stats = await runConsumer({
      api,
      queue,
      batchSize: 3,
      waitSeconds: 2,
      // Held for 4.5 s (1.5 s of the 6 s is kept for the ack); each message takes 2.4 s, so the
      // third would start after the hold, and the ack of the first two has 1.2 s to spare.
      visibilitySeconds: 6,
      signal: AbortSignal.any([stop.signal, AbortSignal.timeout(20_000)]),
      handle: async (m) => {
        await new Promise((r) => setTimeout(r, 2400));
        processed.push({ id: (JSON.parse(m.payload) as { id: number }).id, delivery: m.receive_count });
        if (processed.length === 3) stop.abort();
      },
    });
    expect(stats).toMatchObject({ processed: 3, released: 1, failed: 0 });
    expect(processed.map((p) => p.id).sort()).toEqual([1, 2, 3]);
    // The released message was processed on its second delivery, not while another consumer could hold it.
    expect(processed[2].delivery).toBe(2);
  });

  it('waits the Retry-After of a real 429, then goes on in the next rate-limit window', async () => {
    // Two consume-category requests a minute: consume and ack use the window up, the next
    // consume is refused. The consumer's sleep moves the clock instead of waiting: Date is faked
    // (timers and I/O stay real), so the service's rate-limit window really moves on.
    const ns = await createTestNamespace('ex429', { publish: 1000, consume: 2, management: 1000 });
    const limited = createMessagingClient({ baseUrl: server.baseUrl, apiKey: ns.key });
    const topic = unique('t');
    const queue = await queueOn(limited, topic);
    await publishOrders(limited, topic, [1, 2, 3, 4].map((id) => ({ id, total: id })));
    const waits: number[] = [];
    const told: number[] = [];
    const stop = new AbortController();
    jest.useFakeTimers({ advanceTimers: true, doNotFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'nextTick', 'queueMicrotask', 'hrtime', 'performance'] });
    try {
      let processed = 0;
      const stats = await runConsumer({
        api: limited,
        queue,
        batchSize: 2,
        waitSeconds: 0,
        signal: AbortSignal.any([stop.signal, AbortSignal.timeout(20_000)]),
        onRateLimited: (s) => told.push(s),
        sleep: async (ms) => {
          waits.push(ms);
          jest.setSystemTime(Date.now() + ms);
        },
        handle: async () => {
          if (++processed === 4) stop.abort();
        },
      });
      expect(stats.processed).toBe(4);
      expect(stats.rateLimited).toBeGreaterThanOrEqual(1);
    } finally {
      jest.useRealTimers();
    }
    // Retry-After is the seconds until the window resets: 1 to 60.
    expect(told.every((s) => s >= 1 && s <= 60)).toBe(true);
    expect(waits).toEqual(told.map((s) => s * 1000));
  });
});

describe('examples/webhook-receiver.ts', () => {
  const post = (url: string, body: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });

  it.each([['plain', {}], ['gzip-compressed', { compression: 'gzip' as const }]])('verifies a real %s delivery of the local runtime with standardwebhooks', async (_what, extra) => {
    const topic = unique('t');
    const got: { delivery: Delivery; id: string }[] = [];
    const refused: string[] = [];
    // Created first with a placeholder URL: the secret comes back from create.
    const name = unique('wh');
    const created = unwrap(await api.POST('/webhooks', { body: { name, url: 'http://127.0.0.1:9/', topic_filter: topic, enabled: false, ...extra } }));
    const receiver = await startWebhookReceiver({ secret: created.secret, onDelivery: (delivery, id) => void got.push({ delivery, id }), onRefused: (r) => refused.push(r) });
    try {
      unwrap(await api.PATCH('/webhooks/{webhook_name}', { params: { path: { webhook_name: name } }, body: { url: receiver.url, enabled: true } }));
      const published = unwrap(await api.POST('/topics/{topic}/messages', { params: { path: { topic } }, body: { payload: '{"order":7}', properties: { region: 'eu' } } }));
      await until(async () => got.length === 1, 15_000, 'a verified delivery');
      expect(got[0].delivery).toMatchObject({ topic, payload: '{"order":7}', message_id: published.message_id, properties: { region: 'eu' } });
      expect(refused).toEqual([]);
      const s = await until(async () => {
        const st = unwrap(await api.GET('/webhooks/{webhook_name}/status', { params: { path: { webhook_name: name } } }));
        return st.success_count === 1 && st;
      }, 10_000, 'the success counted');
      expect(s.failure_count).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it('refuses a forged or altered request with 401 and does not pass it on', async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const got: Delivery[] = [];
    const refused: string[] = [];
    const receiver = await startWebhookReceiver({ secret, onDelivery: (d) => void got.push(d), onRefused: (r) => refused.push(r) });
    try {
      const body = JSON.stringify({ topic: 't', payload: 'p', timestamp: new Date().toISOString(), message_id: 'm', properties: {} });
      const id = 'msg_1';
      const ts = String(Math.floor(Date.now() / 1000));
      const sign = (key: Buffer, b: string) => `v1,${createHmac('sha256', key).update(`${id}.${ts}.${b}`).digest('base64')}`;
      const good = sign(Buffer.alloc(32, 7), body);
      expect(await post(receiver.url, body, {})).toBe(401);
      expect(await post(receiver.url, body, { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sign(Buffer.alloc(32, 8), body) })).toBe(401);
      expect(await post(receiver.url, body.replace('"p"', '"q"'), { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': good })).toBe(401);
      const stale = String(Math.floor(Date.now() / 1000) - 3600);
      expect(await post(receiver.url, body, { 'webhook-id': id, 'webhook-timestamp': stale, 'webhook-signature': good })).toBe(401);
      expect(got).toEqual([]);
      expect(refused).toHaveLength(4);
      // The same request correctly signed is accepted: the refusals above are about the signature.
      expect(await post(receiver.url, body, { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': good })).toBe(204);
      expect(got).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});
