/**
 * Publishing through the real local gateway on DynamoDB Local: results, limits, all-or-nothing
 * batches, TOPIC_NOT_FOUND, read-your-writes, Idempotency-Key, and bindings seen by the very next
 * publish (DESIGN.md sections 4, 5 and 13).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi, unique, type Call } from '../fixtures/queues';

jest.setTimeout(30_000);

let server: TestServer;
let ns: TestNamespace;
let call: Call;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('pub');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const MAX = 256 * 1024;

/** A queue bound to `<name>/#`; returns its name and a topic it matches. */
const count = async (name: string) => (await q.get(name)).message_count;

describe('POST /topics/{topic}/messages', () => {
  it('answers 201 with the message id, topic, time and the payload size in UTF-8 bytes', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const res = await call('POST', `/topics/${topic}/messages`, { payload: 'héllo' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: { message_id: expect.any(String), topic, timestamp: expect.stringMatching(ISO_MS), size: 6 },
    });
    const [m] = await q.consume(name);
    expect(m).toMatchObject({ message_id: res.body.data.message_id, payload: 'héllo', content_type: 'application/json', properties: {}, publish_time: res.body.data.timestamp });
  });

  it('accepts a payload of exactly 256 KiB and answers 413 MESSAGE_TOO_LARGE for one byte more, storing nothing', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const ok = await call('POST', `/topics/${topic}/messages`, { payload: 'x'.repeat(MAX) });
    expect(ok.status).toBe(201);
    expect(ok.body.data.size).toBe(MAX);
    const tooBig = await call('POST', `/topics/${topic}/messages`, { payload: 'x'.repeat(MAX + 1) });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toMatchObject({ code: 'MESSAGE_TOO_LARGE', details: { size: MAX + 1, limit: MAX } });
    expect(await count(name)).toBe(1);
  });

  it('counts the limit in UTF-8 bytes: 131073 two-byte characters are too large', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'é'.repeat(MAX / 2) })).status).toBe(201);
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'é'.repeat(MAX / 2 + 1) })).status).toBe(413);
    expect(await count(name)).toBe(1);
  });

  it('answers 404 TOPIC_NOT_FOUND for a topic no filter matches and stores nothing anywhere', async () => {
    const { name } = await q.createOnOwnTopic();
    const res = await call('POST', `/topics/${unique('unbound')}/x/messages`, { payload: 'p' });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, data: null, error: { code: 'TOPIC_NOT_FOUND' } });
    const batch = await call('POST', `/topics/${unique('unbound')}/messages/batch`, { messages: [{ payload: 'p' }] });
    expect(batch.status).toBe(404);
    expect(await count(name)).toBe(0);
  });

  it.each([
    ['a wildcard', 'a/+/b'],
    ['an empty level', 'a/%2F/b'],
  ])('answers 422 VALIDATION_ERROR for a topic with %s', async (_label, topic) => {
    const res = await call('POST', `/topics/${topic}/messages`, { payload: 'p' });
    expect(res.status).toBe(422);
    expect(res.body.error?.code).toBe('VALIDATION_ERROR');
  });

  it('stores the message in every bound queue before answering (read-your-writes)', async () => {
    const base = unique('ryw');
    await q.create({ name: `${base}-all`, topic_filter: `${base}/#` });
    await q.create({ name: `${base}-created`, topic_filter: `${base}/+/created` });
    await q.create({ name: `${base}-other`, topic_filter: `${base}/+/deleted` });
    for (let i = 0; i < 5; i++) {
      const { message_id, timestamp } = await q.publish(`${base}/eu/created`, { payload: `n${i}`, content_type: 'text/plain', properties: { i: String(i) } });
      const [a] = await q.consume(`${base}-all`, { max_messages: 10 });
      const [b] = await q.consume(`${base}-created`, { max_messages: 10 });
      for (const m of [a, b]) {
        expect(m).toMatchObject({ message_id, payload: `n${i}`, content_type: 'text/plain', properties: { i: String(i) }, publish_time: timestamp, receive_count: 1 });
      }
    }
    expect(await count(`${base}-other`)).toBe(0);
  });
});

describe('properties limits', () => {
  /** A queue and a stream on one topic, to see that nothing was stored or reserved. */
  async function boundTopic() {
    const { name, topic } = await q.createOnOwnTopic();
    const stream = unique('s');
    expect((await call('POST', '/streams', { name: stream, topic_filter: `${name}/#` })).status).toBe(201);
    return { queue: name, stream, topic };
  }
  async function nothingStored(b: { queue: string; stream: string }) {
    expect(await count(b.queue)).toBe(0);
    expect((await call('GET', `/streams/${b.stream}`)).body.data).toMatchObject({ latest_offset: 0, message_count: 0 });
  }

  it('answers 413 MESSAGE_TOO_LARGE for 500 KB of properties, before anything is reserved or stored', async () => {
    const b = await boundTopic();
    const res = await call('POST', `/topics/${b.topic}/messages`, { payload: 'p', properties: { big: 'x'.repeat(500_000) } });
    expect([res.status, res.body.error?.code]).toEqual([413, 'MESSAGE_TOO_LARGE']);
    await nothingStored(b);
    // The next publish gets offset 0: no offset was reserved by the refused one.
    expect((await call('POST', `/topics/${b.topic}/messages`, { payload: 'ok', properties: { small: 'y' } })).status).toBe(201);
    expect((await call('GET', `/streams/${b.stream}`)).body.data).toMatchObject({ earliest_offset: 0, latest_offset: 1 });
  });

  it('answers 422 for 65 properties and refuses a whole batch for one item over the limits', async () => {
    const b = await boundTopic();
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    const one = await call('POST', `/topics/${b.topic}/messages`, { payload: 'p', properties: many });
    expect([one.status, one.body.error?.details.fields]).toEqual([422, [expect.objectContaining({ field: 'properties' })]]);
    const batch = await call('POST', `/topics/${b.topic}/messages/batch`, { messages: [{ payload: 'ok' }, { payload: 'p', properties: { big: 'x'.repeat(20_000) } }] });
    expect([batch.status, batch.body.error?.code, batch.body.error?.details.field]).toEqual([413, 'MESSAGE_TOO_LARGE', 'messages.1.properties']);
    await nothingStored(b);
  });
});

describe('POST /topics/{topic}/messages/batch', () => {
  it('stores every message and answers the ids in request order', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const res = await call('POST', `/topics/${topic}/messages/batch`, { messages: ['a', 'b', 'c'].map((payload) => ({ payload })) });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({ published_count: 3, message_ids: [expect.any(String), expect.any(String), expect.any(String)], timestamp: expect.stringMatching(ISO_MS) });
    const got = await q.consume(name, { max_messages: 10 });
    const byId = new Map(got.map((m) => [m.message_id, m.payload]));
    expect(res.body.data.message_ids.map((id: string) => byId.get(id))).toEqual(['a', 'b', 'c']);
  });

  it('gives the messages of one batch ids that sort in batch order', async () => {
    const { topic } = await q.createOnOwnTopic();
    const res = await call('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: 100 }, (_, i) => ({ payload: String(i) })) });
    expect(res.status).toBe(201);
    const ids: string[] = res.body.data.message_ids;
    expect([...ids].sort()).toEqual(ids);
  });

  it.each([
    ['an item without payload', [{ payload: 'ok' }, { content_type: 'text/plain' }], 422, 'VALIDATION_ERROR'],
    ['an item with a non-string property', [{ payload: 'ok' }, { payload: 'p', properties: { n: 1 } }], 400, 'INVALID_REQUEST'],
    ['an item over 256 KiB', [{ payload: 'ok' }, { payload: 'x'.repeat(MAX + 1) }], 413, 'MESSAGE_TOO_LARGE'],
    ['101 items', Array.from({ length: 101 }, () => ({ payload: 'p' })), 422, 'VALIDATION_ERROR'],
    ['no items', [], 422, 'VALIDATION_ERROR'],
  ])('refuses the whole batch with %s and stores nothing', async (_label, messages, status, code) => {
    const { name, topic } = await q.createOnOwnTopic();
    const res = await call('POST', `/topics/${topic}/messages/batch`, { messages });
    expect(res.status).toBe(status);
    expect(res.body.error?.code).toBe(code);
    expect(await count(name)).toBe(0);
    expect(await q.consume(name, { max_messages: 100 })).toEqual([]);
  });

  it('names the bad item of a refused batch', async () => {
    const { topic } = await q.createOnOwnTopic();
    const res = await call('POST', `/topics/${topic}/messages/batch`, { messages: [{ payload: 'ok' }, { payload: 'x'.repeat(MAX + 1) }] });
    expect(res.body.error?.details).toMatchObject({ field: 'messages.1.payload' });
  });

  it('answers 413 for a batch body over 1 MiB even when every payload is within 256 KiB', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const messages = Array.from({ length: 5 }, () => ({ payload: 'x'.repeat(220 * 1024) }));
    expect(Buffer.byteLength(JSON.stringify({ messages }))).toBeGreaterThan(1024 * 1024);
    const res = await call('POST', `/topics/${topic}/messages/batch`, { messages });
    expect(res.status).toBe(413);
    expect(res.body.error?.code).toBe('MESSAGE_TOO_LARGE');
    expect(await count(name)).toBe(0);
  });

  it('accepts a batch body just under 1 MiB', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const messages = Array.from({ length: 4 }, () => ({ payload: 'x'.repeat(MAX - 100) }));
    expect(Buffer.byteLength(JSON.stringify({ messages }))).toBeLessThan(1024 * 1024);
    expect((await call('POST', `/topics/${topic}/messages/batch`, { messages })).status).toBe(201);
    expect(await count(name)).toBe(4);
  });
});

describe('Idempotency-Key', () => {
  it('answers a replay exactly like the first call, with Idempotent-Replayed: true, and stores once', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const key = unique('idem');
    const body = { payload: 'charge #1', properties: { amount: '10' } };
    const first = await call('POST', `/topics/${topic}/messages`, body, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const replay = await call('POST', `/topics/${topic}/messages`, body, { 'Idempotency-Key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await count(name)).toBe(1);

    const fresh = await call('POST', `/topics/${topic}/messages`, body, { 'Idempotency-Key': unique('idem') });
    expect(fresh.body.data.message_id).not.toBe(first.body.data.message_id);
    expect(await count(name)).toBe(2);
  });

  it('replays a batch with the same message ids', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const key = unique('idem');
    const body = { messages: [{ payload: 'a' }, { payload: 'b' }] };
    const first = await call('POST', `/topics/${topic}/messages/batch`, body, { 'Idempotency-Key': key });
    const replay = await call('POST', `/topics/${topic}/messages/batch`, body, { 'Idempotency-Key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data).toEqual(first.body.data);
    expect(await count(name)).toBe(2);
  });

  it('does not use up a key whose first request was refused', async () => {
    const base = unique('late');
    const key = unique('idem');
    const body = { payload: 'p' };
    const refused = await call('POST', `/topics/${base}/t/messages`, body, { 'Idempotency-Key': key });
    expect(refused.status).toBe(404);
    await q.create({ name: base, topic_filter: `${base}/#` });
    const retried = await call('POST', `/topics/${base}/t/messages`, body, { 'Idempotency-Key': key });
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await count(base)).toBe(1);
  });

  it('answers 422 for the same key with another body and stores nothing more', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const key = unique('idem');
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'one' }, { 'Idempotency-Key': key })).status).toBe(201);
    const other = await call('POST', `/topics/${topic}/messages`, { payload: 'two' }, { 'Idempotency-Key': key });
    expect(other.status).toBe(422);
    expect(other.body.error?.code).toBe('VALIDATION_ERROR');
    expect(await count(name)).toBe(1);
  });

  it('answers 422 for a key that is not printable ASCII, storing nothing', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    const res = await call('POST', `/topics/${topic}/messages`, { payload: 'p' }, { 'Idempotency-Key': 'has space' });
    expect(res.status).toBe(422);
    expect(res.body.error?.details).toMatchObject({ fields: [{ field: 'Idempotency-Key' }] });
    expect(await count(name)).toBe(0);
  });

  it('scopes a key to its topic', async () => {
    const a = await q.createOnOwnTopic();
    const b = await q.createOnOwnTopic();
    const key = unique('idem');
    expect((await call('POST', `/topics/${a.topic}/messages`, { payload: 'p' }, { 'Idempotency-Key': key })).status).toBe(201);
    const other = await call('POST', `/topics/${b.topic}/messages`, { payload: 'p' }, { 'Idempotency-Key': key });
    expect(other.status).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect([await count(a.name), await count(b.name)]).toEqual([1, 1]);
  });
});

describe('bindings', () => {
  it('delivers to a queue created right before the publish, even with the index already cached', async () => {
    await q.createOnOwnTopic().then(({ topic }) => q.publish(topic)); // warms this namespace's cached index
    for (let i = 0; i < 3; i++) {
      const name = unique('fresh');
      await q.create({ name, topic_filter: `${name}/+` });
      const { message_id } = await q.publish(`${name}/now`);
      expect((await q.consume(name)).map((m) => m.message_id)).toEqual([message_id]);
    }
  });

  it('answers TOPIC_NOT_FOUND again once the only binding of the topic is deleted', async () => {
    const { name, topic } = await q.createOnOwnTopic();
    await q.publish(topic);
    await q.remove(name);
    const res = await call('POST', `/topics/${topic}/messages`, { payload: 'p' });
    expect(res.status).toBe(404);
    expect(res.body.error?.code).toBe('TOPIC_NOT_FOUND');
  });

  it('keeps namespaces apart: a filter of another namespace does not bind the topic here', async () => {
    const other = await createTestNamespace('pub');
    const name = unique('theirs');
    expect((await client(server.baseUrl, other.key)('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
    expect((await call('POST', `/topics/${name}/x/messages`, { payload: 'p' })).status).toBe(404);
  });
});
