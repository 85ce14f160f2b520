/**
 * Queue management through the real local gateway on DynamoDB Local: create, list, get, delete
 * (and recreate), and max_size_mb (DESIGN.md sections 6 and 11).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi, unique, type Call } from '../fixtures/queues';
import { getQueue, getQueueCounters } from '../../lambda/queues/storage/queues';

jest.setTimeout(30_000);

let server: TestServer;
let ns: TestNamespace;
let call: Call;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('qm');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('create, get, list', () => {
  it('answers 201 with the summary fields and GET adds the settings with their defaults', async () => {
    const name = unique('orders');
    const res = await call('POST', '/queues', { name, topic_filter: 'orders/#' });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({ name, topic_filter: 'orders/#', status: 'active', created_at: expect.stringMatching(ISO_MS), message_count: 0, consumer_count: 0 });
    const got = await call('GET', `/queues/${name}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({
      ...res.body.data,
      max_size_mb: 1024,
      message_ttl_seconds: 86400,
      max_retries: 3,
      dead_letter_topic: null,
    });
  });

  it('keeps the settings given at create', async () => {
    const name = unique('custom');
    await q.create({ name, topic_filter: 'a/+/b', max_size_mb: 5, message_ttl_seconds: 60, max_retries: 0, dead_letter_topic: 'a/dead' });
    expect(await q.get(name)).toMatchObject({ topic_filter: 'a/+/b', max_size_mb: 5, message_ttl_seconds: 60, max_retries: 0, dead_letter_topic: 'a/dead' });
  });

  it('answers 409 QUEUE_ALREADY_EXISTS for a taken name and keeps the first queue', async () => {
    const name = unique('dup');
    await q.create({ name, topic_filter: 'dup/#' });
    const res = await call('POST', '/queues', { name, topic_filter: 'other/#' });
    expect(res.status).toBe(409);
    expect(res.body.error?.code).toBe('QUEUE_ALREADY_EXISTS');
    expect((await q.get(name)).topic_filter).toBe('dup/#');
  });

  it.each([
    ['an invalid filter', { topic_filter: 'a/#/b' }, 400, 'INVALID_TOPIC_FILTER'],
    ['a filter of the wrong type', { topic_filter: ['a'] }, 400, 'INVALID_REQUEST'],
    ['max_retries out of range', { topic_filter: 'a', max_retries: 1001 }, 422, 'VALIDATION_ERROR'],
    ['a wildcard dead_letter_topic', { topic_filter: 'a', dead_letter_topic: 'a/#' }, 422, 'VALIDATION_ERROR'],
  ])('refuses %s and creates nothing', async (_label, body, status, code) => {
    const name = unique('bad');
    const res = await call('POST', '/queues', { name, ...body });
    expect(res.status).toBe(status);
    expect(res.body.error?.code).toBe(code);
    expect((await call('GET', `/queues/${name}`)).status).toBe(404);
  });

  it('answers 404 QUEUE_NOT_FOUND for a queue that does not exist', async () => {
    for (const [method, path] of [
      ['GET', '/queues/nope'],
      ['DELETE', '/queues/nope'],
      ['POST', '/queues/nope/messages/consume'],
      ['POST', '/queues/nope/messages/ack'],
    ]) {
      const res = await call(method, path, method === 'POST' ? (path.endsWith('ack') ? { entries: [{ message_id: 'm', receipt_handle: 'h' }] } : {}) : undefined);
      expect([method, path, res.status, res.body.error?.code]).toEqual([method, path, 404, 'QUEUE_NOT_FOUND']);
    }
  });

  it('lists queues by name with total, limit and offset', async () => {
    const own = await createTestNamespace('ql');
    const c = client(server.baseUrl, own.key);
    for (const name of ['charlie', 'alpha', 'bravo']) expect((await c('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
    const all = await c('GET', '/queues');
    expect(all.body.data).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(all.body.data.queues.map((x: { name: string }) => x.name)).toEqual(['alpha', 'bravo', 'charlie']);
    expect(Object.keys(all.body.data.queues[0]).sort()).toEqual(['consumer_count', 'created_at', 'message_count', 'name', 'status', 'topic_filter']);
    const page = await c('GET', '/queues?limit=1&offset=1');
    expect(page.body.data).toMatchObject({ total: 3, limit: 1, offset: 1, queues: [{ name: 'bravo' }] });
    expect((await c('GET', '/queues?limit=101')).status).toBe(422);
    expect((await c('GET', '/queues?limit=ten')).status).toBe(400);
  });
});

describe('delete and recreate', () => {
  it('deletes at once, frees the name, and the recreated queue never sees the old messages', async () => {
    const name = unique('reuse');
    const topic = `${name}/t`;
    await q.create({ name, topic_filter: `${name}/#` });
    await q.publishBatch(topic, [{ payload: 'old-1' }, { payload: 'old-2' }, { payload: 'old-3' }]);
    const oldId = (await getQueue(ns.name, name))!.id;

    const del = await call('DELETE', `/queues/${name}`);
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ deleted_at: expect.stringMatching(ISO_MS) });
    expect((await call('GET', `/queues/${name}`)).status).toBe(404);
    expect((await call('DELETE', `/queues/${name}`)).status).toBe(404);

    await q.create({ name, topic_filter: `${name}/#` });
    expect((await getQueue(ns.name, name))!.id).not.toBe(oldId);
    expect((await q.get(name)).message_count).toBe(0);
    expect(await q.consume(name, { max_messages: 100 })).toEqual([]);

    const { message_id } = await q.publish(topic, { payload: 'new' });
    const got = await q.consume(name, { max_messages: 100 });
    expect(got.map((m) => [m.message_id, m.payload])).toEqual([[message_id, 'new']]);
  });
});

describe('max_size_mb', () => {
  const KiB256 = 'x'.repeat(256 * 1024);

  /** Fills a 1 MB queue with four 256 KiB messages (exactly its size). */
  async function fill(topic: string) {
    for (let i = 0; i < 4; i++) await q.publish(topic, { payload: KiB256 });
  }

  it('sends the message a full queue cannot take to its dead_letter_topic while the other binding still gets it', async () => {
    const base = unique('fill');
    const dead = unique('dead');
    await q.create({ name: `${base}-full`, topic_filter: `${base}/#`, max_size_mb: 1, dead_letter_topic: `${dead}/full` });
    await q.create({ name: `${base}-roomy`, topic_filter: `${base}/#` });
    await q.create({ name: dead, topic_filter: `${dead}/#` });
    await fill(`${base}/t`);
    expect((await q.get(`${base}-full`)).message_count).toBe(4);

    const res = await call('POST', `/topics/${base}/t/messages`, { payload: 'one too many', properties: { n: '5' } });
    expect(res.status).toBe(201);
    expect((await q.get(`${base}-full`)).message_count).toBe(4);
    expect((await q.get(`${base}-roomy`)).message_count).toBe(5);
    const [dl] = await q.consume(dead);
    expect(dl).toMatchObject({ payload: 'one too many', properties: { n: '5', dlq_source_queue: `${base}-full`, 'x-hop': '1' } });

    // Acking frees room: the next message fits again.
    const [m] = await q.consume(`${base}-full`);
    expect((await q.ack(`${base}-full`, m.message_id, m.receipt_handle)).status).toBe(200);
    await q.publish(`${base}/t`, { payload: 'fits' });
    expect((await q.get(`${base}-full`)).message_count).toBe(4);
    expect(await q.consume(dead)).toEqual([]);
  });

  it('drops and counts the message a full queue without dead_letter_topic cannot take', async () => {
    const base = unique('fill');
    await q.create({ name: `${base}-full`, topic_filter: `${base}/#`, max_size_mb: 1 });
    await q.create({ name: `${base}-roomy`, topic_filter: `${base}/#` });
    await fill(`${base}/t`);
    expect((await call('POST', `/topics/${base}/t/messages`, { payload: 'dropped' })).status).toBe(201);
    expect((await q.get(`${base}-full`)).message_count).toBe(4);
    expect((await q.get(`${base}-roomy`)).message_count).toBe(5);
    expect((await getQueueCounters(ns.name, (await getQueue(ns.name, `${base}-full`))!.id)).dropped_count).toBe(1);
    const payloads = (await q.consume(`${base}-full`, { max_messages: 10 })).map((m) => m.payload.length);
    expect(payloads).toEqual([KiB256.length, KiB256.length, KiB256.length, KiB256.length]);
  });
});
