/**
 * Consuming queues through the real local gateway on DynamoDB Local and fauxqs: competing consumers,
 * visibility timeouts and receipt handles, retries and dead-lettering, batch ack, long polling
 * and the queue counters (DESIGN.md section 6); the message TTL is in ./queue-ttl.test.ts.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi, unique, type ConsumedMessage } from '../fixtures/queues';
import { scaled } from '../fixtures/time-scale';

// DynamoDB Local on a shared machine can be slow; the assertions on timing below are the real bounds.
jest.setTimeout(30_000);

let server: TestServer;
let ns: TestNamespace;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('qc');
  q = queueApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/** A queue bound to a topic of its own; returns both names. */
describe('competing consumers', () => {
  it('delivers each of 500 messages to one of 10 consumers, none again while its visibility timeout holds', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const published: string[] = [];
    const batches = await Promise.all(
      Array.from({ length: 5 }, (_, b) => q.publishBatch(topic, Array.from({ length: 100 }, (_, i) => ({ payload: `m-${b}-${i}` })))),
    );
    for (const r of batches) published.push(...r.message_ids);
    expect(new Set(published).size).toBe(500);

    const received: ConsumedMessage[] = [];
    const distinct = () => new Set(received.map((m) => m.message_id)).size;
    const deadline = Date.now() + 60_000;
    await Promise.all(
      Array.from({ length: 10 }, async (_, c) => {
        while (distinct() < 500 && Date.now() < deadline) {
          const got = await q.consume(name, { max_messages: 10, consumer_id: `worker-${c}` });
          received.push(...got);
        }
      }),
    );
    // SQS copies of a message (DESIGN.md section 6: a standard queue may hand one message to two
    // consumers) are taken too, so that none is visible below. A SendMessageBatch applied, its
    // answer lost and retried by the SDK, stores such copies: a loaded CI run got 30 (three
    // batches of 10 consecutive ids, each received once).
    for (let got; (got = await q.consume(name, { max_messages: 100 })).length > 0; ) received.push(...got);

    // Each message was handed out once while its visibility held: a message handed out again would
    // come with receive count 2. A copy is a message of its own in SQS (receive count 1), and
    // copies are rare: all 500 stored twice would be a publish bug, not SQS.
    const ids = received.map((m) => m.message_id);
    const handedAgain = received.filter((m) => m.receive_count !== 1).map((m) => ({ id: m.message_id, receive_count: m.receive_count }));
    expect(handedAgain.slice(0, 5)).toEqual([]);
    expect(new Set(ids)).toEqual(new Set(published));
    expect(ids.length - 500).toBeLessThan(100);
    expect(new Set(received.map((m) => m.receipt_handle)).size).toBe(received.length);

    // All are in flight: none visible, all still counted, 10 distinct consumers (and the drain's).
    expect(await q.consume(name, { max_messages: 100 })).toEqual([]);
    expect(await q.get(name)).toMatchObject({ message_count: 500, consumer_count: 11 });

    // One ack per message (a copy's ack would answer 404: already acknowledged).
    const firstOf = new Map<string, ConsumedMessage>();
    for (const m of received) if (!firstOf.has(m.message_id)) firstOf.set(m.message_id, m);
    const once = [...firstOf.values()];
    for (let i = 0; i < 500; i += 100) {
      const res = await q.ackBatch(
        name,
        once.slice(i, i + 100).map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })),
      );
      expect(res.body.data.acknowledged_count).toBe(100);
    }
    expect((await q.get(name)).message_count).toBe(0);
  }, 120_000);
});

describe('visibility timeout and receipt handles', () => {
  it('redelivers after the visibility timeout with a new handle and receive_count 2, refusing the old handle', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const { message_id } = await q.publish(topic, { payload: 'again', properties: { k: 'v' } });

    // 3 s at the suite's time scale: the 1 s long poll below must end within it on loaded cores.
    const visibility = Math.round(scaled(3000) / 1000);
    const [first] = await q.consume(name, { visibility_timeout_seconds: visibility });
    const firstAt = Date.now();
    expect(first).toMatchObject({ message_id, payload: 'again', receive_count: 1, properties: { k: 'v' } });
    expect(await q.consume(name)).toEqual([]); // hidden while the timeout holds (timeout_seconds 0: a 1 s long poll)

    // A long poll returns as soon as the timeout ends, well before its own 25 s: the message counts as arriving.
    const [second] = await q.consume(name, { timeout_seconds: 25, visibility_timeout_seconds: 30 });
    expect(Date.now() - firstAt).toBeLessThan(visibility * 1000 + scaled(2000));
    expect(second).toMatchObject({ message_id, payload: 'again', receive_count: 2 });
    expect(second.receipt_handle).not.toBe(first.receipt_handle);

    const stale = await q.ack(name, message_id, first.receipt_handle);
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ success: false, data: null, error: { code: 'INVALID_RECEIPT_HANDLE' } });

    const ok = await q.ack(name, message_id, second.receipt_handle);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ acknowledged_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });

    const again = await q.ack(name, message_id, second.receipt_handle);
    expect(again.status).toBe(404);
    expect(again.body.error?.code).toBe('MESSAGE_NOT_FOUND');
    expect((await q.get(name)).message_count).toBe(0);
  });

  it('answers 409 INVALID_RECEIPT_HANDLE for an altered handle of the message and keeps the message', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const { message_id } = await q.publish(topic);
    const [m] = await q.consume(name);
    const [version, payload, signature] = m.receipt_handle.split('.');
    // The visibility end pushed a day later, signature kept: the signature no longer matches.
    const delivery = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const later = Buffer.from(JSON.stringify({ ...delivery, u: delivery.u + 86_400_000 })).toString('base64url');
    for (const altered of [`${version}.${later}.${signature}`, `${m.receipt_handle}-tampered`, `${version}.${payload}.${'A'.repeat(signature.length)}`]) {
      const res = await q.ack(name, message_id, altered);
      expect({ altered, status: res.status, code: res.body.error?.code }).toEqual({ altered, status: 409, code: 'INVALID_RECEIPT_HANDLE' });
    }
    expect((await q.get(name)).message_count).toBe(1);
    expect((await q.ack(name, message_id, m.receipt_handle)).status).toBe(200);
  });

  it("answers 404 MESSAGE_NOT_FOUND for a handle that does not name this queue's message, and keeps the message", async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const other = await q.createOnOwnTopic();
    await q.publish(topic);
    await q.publish(topic);
    await q.publish(other.topic);
    const [a, b] = await q.consume(name, { max_messages: 2 });
    const [c] = await q.consume(other.name);
    for (const handle of ['not-a-handle', '1.e30.x', b.receipt_handle, c.receipt_handle]) {
      const res = await q.ack(name, a.message_id, handle);
      expect({ handle, status: res.status, code: res.body.error?.code }).toEqual({ handle, status: 404, code: 'MESSAGE_NOT_FOUND' });
    }
    // A handle of an earlier incarnation of the queue names nothing in the new one.
    await q.remove(name);
    await q.create({ name, topic_filter: `${name}/#` });
    await q.publish(topic);
    expect((await q.ack(name, a.message_id, a.receipt_handle)).status).toBe(404);
    expect((await q.get(name)).message_count).toBe(1);
    expect((await q.ack(other.name, c.message_id, c.receipt_handle)).status).toBe(200);
  });

  it('answers one of 10 concurrent acks of a delivery 200 and the others 404, moving the counters once', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    await q.publishBatch(topic, [{ payload: 'once' }, { payload: 'stays' }]);
    const [m] = await q.consume(name);
    const answers = await Promise.all(Array.from({ length: 10 }, () => q.ack(name, m.message_id, m.receipt_handle)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(404)]);
    expect(answers.filter((r) => r.status === 404).every((r) => r.body.error?.code === 'MESSAGE_NOT_FOUND')).toBe(true);
    expect((await q.get(name)).message_count).toBe(1);
    // Batch acks of the same delivery racing single acks: still one success.
    const [n] = await q.consume(name);
    const mixed = await Promise.all([
      q.ack(name, n.message_id, n.receipt_handle),
      q.ackBatch(name, [{ message_id: n.message_id, receipt_handle: n.receipt_handle }]),
      q.ack(name, n.message_id, n.receipt_handle),
    ]);
    const successes = [mixed[0].status === 200, mixed[1].body.data.acknowledged_count === 1, mixed[2].status === 200].filter(Boolean);
    expect(successes).toHaveLength(1);
    expect((await q.get(name)).message_count).toBe(0);
  });

  it('answers 404 MESSAGE_NOT_FOUND for an id that was never in the queue and 404 QUEUE_NOT_FOUND for a missing queue', async () => {
    const { name } = await q.createOnOwnTopic();
    const unknown = await q.ack(name, '01ARZ3NDEKTSV4RRFFQ69G5FAV', 'h');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error?.code).toBe('MESSAGE_NOT_FOUND');
    const noQueue = await q.ack(unique('missing'), '01ARZ3NDEKTSV4RRFFQ69G5FAV', 'h');
    expect(noQueue.status).toBe(404);
    expect(noQueue.body.error?.code).toBe('QUEUE_NOT_FOUND');
  });

  it('returns messages oldest first and at most max_messages', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await q.publish(topic, { payload: `n${i}` })).message_id);
    const got = await q.consume(name, { max_messages: 3 });
    expect(got.map((m) => m.message_id)).toEqual(ids.slice(0, 3));
    expect((await q.consume(name, { max_messages: 100 })).map((m) => m.message_id)).toEqual(ids.slice(3));
  });
});

describe('retries and dead-lettering', () => {
  it('delivers a message 1 + max_retries times, then publishes it to the dead_letter_topic with its origin', async () => {
    const dead = await q.createOnOwnTopic();
    const { name, topic } = await q.createOnOwnTopic({ max_retries: 2, dead_letter_topic: dead.topic });
    const { message_id } = await q.publish(topic, { payload: 'poison', content_type: 'text/plain', properties: { order: '7' } });

    // visibility 0: each receive ends at once, as if the consumer had failed.
    for (let n = 1; n <= 3; n++) {
      const got = await q.consume(name, { visibility_timeout_seconds: 0 });
      expect(got.map((m) => [m.message_id, m.receive_count])).toEqual([[message_id, n]]);
      expect(await q.consume(dead.name)).toEqual([]); // not dead-lettered while deliveries remain
    }
    expect(await q.consume(name, { visibility_timeout_seconds: 0 })).toEqual([]);
    expect((await q.get(name)).message_count).toBe(0);

    const [dl] = await q.consume(dead.name);
    expect(dl).toMatchObject({
      payload: 'poison',
      content_type: 'text/plain',
      receive_count: 1,
      properties: { order: '7', dlq_source_queue: name, dlq_receive_count: '3', 'x-hop': '1' },
    });
    expect(dl.message_id).not.toBe(message_id);
  });

  it('drops a message after its single delivery when max_retries is 0 and there is no dead_letter_topic', async () => {
    const { name, topic } = await q.createOnOwnTopic({ max_retries: 0 });
    await q.publish(topic);
    expect(await q.consume(name, { visibility_timeout_seconds: 0 })).toHaveLength(1);
    expect((await q.get(name)).message_count).toBe(1);
    expect(await q.consume(name, { visibility_timeout_seconds: 0 })).toEqual([]);
    expect((await q.get(name)).message_count).toBe(0);
  });

  it('answers 404 to an old handle of a message since dropped (it is gone, not delivered again)', async () => {
    const { name, topic } = await q.createOnOwnTopic({ max_retries: 0 });
    const { message_id } = await q.publish(topic);
    const [first] = await q.consume(name, { visibility_timeout_seconds: 1 });
    await new Promise((r) => setTimeout(r, 1200));
    expect(await q.consume(name, { visibility_timeout_seconds: 0 })).toEqual([]); // dropped here
    const res = await q.ack(name, message_id, first.receipt_handle);
    expect([res.status, res.body.error?.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
  });

  it('drops the message when the dead_letter_topic matches no binding', async () => {
    const { name, topic } = await q.createOnOwnTopic({ max_retries: 0, dead_letter_topic: unique('nowhere') });
    await q.publish(topic);
    expect(await q.consume(name, { visibility_timeout_seconds: 0 })).toHaveLength(1);
    expect(await q.consume(name, { visibility_timeout_seconds: 0 })).toEqual([]);
    expect((await q.get(name)).message_count).toBe(0);
  });
});

describe('response size', () => {
  it("stays under Lambda's 6 MB response with room for escaping, and hands back what does not fit without using up its deliveries", async () => {
    // max_retries 0: a message whose one delivery were spent on a receive that did not return it would be dropped.
    const { name, topic } = await q.createOnOwnTopic({ max_retries: 0 });
    const payload = '"'.repeat(200 * 1024); // 200 KiB that a Lambda proxy response escapes to 800 KiB
    const ids = new Set<string>();
    for (let i = 0; i < 12; i++) ids.add((await q.publish(topic, { payload })).message_id);
    const seen: string[] = [];
    for (let round = 0; round < 6 && seen.length < 12; round++) {
      const res = await q.call('POST', `/queues/${name}/messages/consume`, { max_messages: 100, timeout_seconds: 0, visibility_timeout_seconds: 300 });
      expect(res.status).toBe(200);
      // The body the handler returns is escaped once more inside Lambda's proxy response.
      expect(Buffer.byteLength(JSON.stringify(res.text))).toBeLessThan(6 * 1000 * 1000);
      expect(res.body.data.count).toBeLessThan(12);
      seen.push(...res.body.data.messages.map((m: ConsumedMessage) => m.message_id));
    }
    expect(seen.sort()).toEqual([...ids].sort());
    expect((await q.get(name)).message_count).toBe(12);
  }, 60_000);
});

describe('batch ack', () => {
  it('judges each entry like a single ack and answers in request order', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const a = await q.publish(topic, { payload: 'a' });
    const b = await q.publish(topic, { payload: 'b' });
    const early = await q.consume(name, { max_messages: 2, visibility_timeout_seconds: 0 });
    const current = await q.consume(name, { max_messages: 2, visibility_timeout_seconds: 60 });
    const handle = (msgs: ConsumedMessage[], id: string) => msgs.find((m) => m.message_id === id)!.receipt_handle;

    const res = await q.ackBatch(name, [
      { message_id: b.message_id, receipt_handle: handle(early, b.message_id) },
      { message_id: a.message_id, receipt_handle: handle(current, a.message_id) },
      { message_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', receipt_handle: 'x' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      results: [
        { message_id: b.message_id, acknowledged: false, error: { code: 'INVALID_RECEIPT_HANDLE', message: expect.any(String) } },
        { message_id: a.message_id, acknowledged: true, acknowledged_at: expect.stringMatching(/Z$/) },
        { message_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', acknowledged: false, error: { code: 'MESSAGE_NOT_FOUND', message: expect.any(String) } },
      ],
      acknowledged_count: 1,
    });
    expect((await q.get(name)).message_count).toBe(1);
    // The refused entry is untouched: its current handle still acks it.
    expect((await q.ack(name, b.message_id, handle(current, b.message_id))).status).toBe(200);
  });

  it('acks a message once when it appears twice in one batch', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    await q.publish(topic);
    const [m] = await q.consume(name);
    const entry = { message_id: m.message_id, receipt_handle: m.receipt_handle };
    const res = await q.ackBatch(name, [entry, entry]);
    expect(res.body.data.acknowledged_count).toBe(1);
    expect(res.body.data.results.map((r: { acknowledged: boolean }) => r.acknowledged).sort()).toEqual([false, true]);
    expect((await q.get(name)).message_count).toBe(0);
  });

  it.each([
    ['no entries', () => [], 422],
    ['101 entries', (e: object) => [e, ...Array.from({ length: 100 }, (_, i) => ({ message_id: `m${i}`, receipt_handle: 'h' }))], 422],
    ['entries that is not an array', (e: object) => e, 400],
    ['an entry of the wrong type', (e: object) => [e, 'm2'], 400],
    ['an entry without receipt_handle', (e: object) => [e, { message_id: 'm2' }], 422],
  ])('refuses the whole request with %s and acks nothing', async (_label, entries, status) => {
    const { name, topic } = await q.createOnOwnTopic();
    await q.publish(topic);
    const [m] = await q.consume(name);
    const res = await q.ackBatch(name, entries({ message_id: m.message_id, receipt_handle: m.receipt_handle }));
    expect(res.status).toBe(status);
    expect(res.body.error?.code).toBe(status === 400 ? 'INVALID_REQUEST' : 'VALIDATION_ERROR');
    expect((await q.get(name)).message_count).toBe(1);
    expect((await q.ack(name, m.message_id, m.receipt_handle)).status).toBe(200);
  });
});

describe('long polling', () => {
  it('returns within about 300 ms of a publish', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const started = Date.now();
    const polling = q.consume(name, { timeout_seconds: 10 }).then((msgs) => ({ msgs, at: Date.now() }));
    await new Promise((r) => setTimeout(r, 300)); // let the poll find the queue empty and wait
    const { message_id } = await q.publish(topic, { payload: 'wake up' });
    const publishedAt = Date.now();
    const { msgs, at } = await polling;
    expect(msgs.map((m) => m.message_id)).toEqual([message_id]);
    // The wake-up's latency is the bench's; here bounded at the suite's time scale, far below the poll's 10 s.
    expect(at - publishedAt).toBeLessThan(scaled(400));
    expect(at - started).toBeLessThan(scaled(3000));
  });

  it('answers within about a second with no messages when timeout_seconds is 0 (the shortest long poll, not a short poll)', async () => {
    const { name } = await q.createOnOwnTopic();
    const started = Date.now();
    expect(await q.consume(name, { timeout_seconds: 0 })).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(1000 + scaled(2000));
  });

  it('waits for timeout_seconds on an empty queue, then answers with no messages', async () => {
    const { name } = await q.createOnOwnTopic();
    const started = Date.now();
    expect(await q.consume(name, { timeout_seconds: 1 })).toEqual([]);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThan(1000 + scaled(2000));
  });
});

describe('queue counters', () => {
  it('counts distinct consumers by consumer_id, and by key when none is given', async () => {
    const { name } = await q.createOnOwnTopic();
    for (const consumer_id of ['alpha', 'beta', 'alpha', undefined, undefined]) {
      await q.consume(name, consumer_id ? { consumer_id } : {});
    }
    expect((await q.get(name)).consumer_count).toBe(3);
    const listed = await client(server.baseUrl, ns.key)('GET', '/queues?limit=100');
    expect(listed.body.data.queues.find((x: { name: string }) => x.name === name).consumer_count).toBe(3);
  });

  it('counts messages in flight in message_count until they are acked', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    await q.publishBatch(topic, [{ payload: '1' }, { payload: '2' }, { payload: '3' }]);
    expect((await q.get(name)).message_count).toBe(3);
    const got = await q.consume(name, { max_messages: 2 });
    expect((await q.get(name)).message_count).toBe(3);
    expect((await q.ack(name, got[0].message_id, got[0].receipt_handle)).status).toBe(200);
    expect((await q.get(name)).message_count).toBe(2);
  });

  it('does not count a consumer whose consume was refused', async () => {
    const { name } = await q.createOnOwnTopic();
    const res = await client(server.baseUrl, ns.key)('POST', `/queues/${name}/messages/consume`, { max_messages: 101, consumer_id: 'refused' });
    expect(res.status).toBe(422);
    expect((await q.get(name)).consumer_count).toBe(0);
  });
});
