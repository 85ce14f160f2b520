/**
 * The reads the console added to the API (docs/console.md): the key's scopes and rate-limit
 * headroom, a queue's SQS counts and redrive, a stream's groups with per-partition lag, a
 * subscription's subscribers; their error answers, scopes and tenant isolation.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';

jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let other: TestNamespace;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  server = await startTestServer();
  [ns, other] = await Promise.all([createTestNamespace('con', { publish: 1000, consume: 1000, management: 1000 }), createTestNamespace('con')]);
  api = client(server.baseUrl, ns.key);
});
afterAll(() => server.close());

describe('GET /namespace/access', () => {
  it("answers the key's scopes and each category's limit and what is left, counting only itself", async () => {
    await api('POST', '/topics/nowhere/messages', { payload: 'x' }); // a publish counted (404 included)
    // The categories' counts are read eventually consistently (storage/rate-limits.ts
    // peekCount): the publish and the access requests themselves show within a moment (the
    // local DynamoDB lags such reads as AWS may), not necessarily at once.
    const remaining = (r: { body: { data: { rate_limits: { category: string; remaining: number }[] } } }, category: string) =>
      r.body.data.rate_limits.find((l) => l.category === category)?.remaining;
    let res = await client(server.baseUrl, ns.keys.consume)('GET', '/namespace/access');
    for (const end = Date.now() + 5_000; Date.now() < end; ) {
      if (res.status !== 200 || (remaining(res, 'publish') !== 1000 && remaining(res, 'management') !== 1000)) break;
      await new Promise((r) => setTimeout(r, 200));
      res = await client(server.baseUrl, ns.keys.consume)('GET', '/namespace/access');
    }
    expect(res.status).toBe(200);
    const data = res.body.data as { namespace: string; scopes: string[]; key_id: string; rate_limits: { category: string; limit: number; remaining: number; reset: number }[] };
    expect(data).toMatchObject({ namespace: ns.name, scopes: ['consume'], key_id: expect.any(String) });
    const by = Object.fromEntries(data.rate_limits.map((r) => [r.category, r]));
    expect(by.publish).toMatchObject({ limit: 1000, remaining: 999 });
    expect(by.consume).toMatchObject({ limit: 1000, remaining: 1000 });
    expect(by.management.remaining).toBeLessThan(1000);
    expect(by.management.reset * 1000).toBeGreaterThan(Date.now());
  });
});

describe('GET /queues/{name}/stats and POST /queues/{name}/redrive', () => {
  beforeAll(async () => {
    expect((await api('POST', '/queues', { name: 'dlq', topic_filter: 'dead/#' })).status).toBe(201);
    expect((await api('POST', '/queues', { name: 'work', topic_filter: 'work/#' })).status).toBe(201);
    for (const n of [1, 2, 3]) expect((await api('POST', '/topics/dead/orders/messages', { payload: `m${n}`, properties: { dlq_reason: 'x' } })).status).toBe(201);
  });

  it("answers SQS's counts: visible, then in flight after a consume", async () => {
    const poll = async (want: (d: Record<string, number>) => boolean) => {
      for (let i = 0; i < 50; i++) {
        const d = (await api('GET', '/queues/dlq/stats')).body.data as Record<string, number>;
        if (want(d)) return d;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error('stats never matched');
    };
    expect(await poll((d) => d.visible === 3)).toMatchObject({ name: 'dlq', visible: 3, in_flight: 0, delayed: 0 });
    const got = await api('POST', '/queues/dlq/messages/consume', { max_messages: 1, visibility_timeout_seconds: 1 });
    expect((got.body.data as { count: number }).count).toBe(1);
    expect(await poll((d) => d.in_flight === 1)).toMatchObject({ visible: 2, in_flight: 1 });
  });

  it('moves the messages to a topic without their dlq_ properties, in calls of at most max', async () => {
    await new Promise((r) => setTimeout(r, 1200)); // the consumed one is visible again
    const first = await api('POST', '/queues/dlq/redrive', { to_topic: 'work/retry', max: 2 });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ queue: 'dlq', topic: 'work/retry', moved: 2, remaining: 1 });
    const rest = await api('POST', '/queues/dlq/redrive', { to_topic: 'work/retry' });
    expect(rest.body.data).toMatchObject({ moved: 1, remaining: 0 });
    const got = await api('POST', '/queues/work/messages/consume', { max_messages: 10, timeout_seconds: 2 });
    const messages = (got.body.data as { messages: { payload: string; properties: Record<string, string> }[] }).messages;
    expect(messages.map((m) => m.payload).sort()).toEqual(['m1', 'm2', 'm3']);
    for (const m of messages) expect(Object.keys(m.properties).filter((k) => k.startsWith('dlq_'))).toEqual([]);
  });

  it.each([
    [{}, 422, 'VALIDATION_ERROR'],
    [{ to_topic: 'work/+' }, 422, 'VALIDATION_ERROR'],
    [{ to_topic: 'work/retry', max: 101 }, 422, 'VALIDATION_ERROR'],
    [{ to_topic: 'nobody/listens' }, 404, 'TOPIC_NOT_FOUND'],
    [{ to_topic: 'dead/again' }, 422, 'VALIDATION_ERROR'],
  ])('refuses the redrive body %j with %i %s', async (body, status, code) => {
    const res = await api('POST', '/queues/dlq/redrive', body);
    expect([res.status, res.body.error?.code]).toEqual([status, code]);
  });

  it('needs manage to redrive, any key to read; other namespaces see nothing', async () => {
    expect((await client(server.baseUrl, ns.keys.publish)('POST', '/queues/dlq/redrive', { to_topic: 'work/retry' })).status).toBe(403);
    expect((await client(server.baseUrl, ns.keys.publish)('GET', '/queues/dlq/stats')).status).toBe(200);
    const res = await client(server.baseUrl, other.key)('GET', '/queues/dlq/stats');
    expect([res.status, res.body.error?.code]).toEqual([404, 'QUEUE_NOT_FOUND']);
  });
});

describe('GET /queues/{name}/stats: oldest_message_age_seconds', () => {
  type Stats = { oldest_message_age_seconds: number | null; oldest_message_age_precision_seconds: number };
  const stats = async () => (await api('GET', '/queues/aged/stats')).body.data as Stats;
  const pollStats = async (want: (d: Stats) => boolean, what: string) => {
    let last: Stats | undefined;
    for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
      last = await stats();
      if (want(last)) return last;
    }
    throw new Error(`${what} never happened; last stats ${JSON.stringify(last)}`);
  };

  it('is null for an empty queue, grows with the oldest message, ignores newer ones, and is gone once all are acked', async () => {
    // TTL 60 s: expiry buckets 6 s wide, so the age is at most 6 s over the true one.
    expect((await api('POST', '/queues', { name: 'aged', topic_filter: 'aged/#', message_ttl_seconds: 60 })).status).toBe(201);
    expect(await stats()).toMatchObject({ oldest_message_age_seconds: null, oldest_message_age_precision_seconds: 6 });

    const before = Date.now();
    expect((await api('POST', '/topics/aged/a/messages', { payload: 'first' })).status).toBe(201);
    const first = await stats();
    const trueAge = () => (Date.now() - before) / 1000;
    expect(first.oldest_message_age_seconds).not.toBeNull();
    expect(first.oldest_message_age_seconds!).toBeLessThanOrEqual(Math.ceil(trueAge()) + 6);

    // The age grows with time: 2 s later it reads at least 2 s more.
    const grown = await pollStats((d) => d.oldest_message_age_seconds! >= first.oldest_message_age_seconds! + 2, 'the age growing by 2 s');
    expect(trueAge()).toBeGreaterThanOrEqual(2 - 1);
    // A newer message does not make the queue look younger.
    expect((await api('POST', '/topics/aged/b/messages', { payload: 'second' })).status).toBe(201);
    const after = await stats();
    expect(after.oldest_message_age_seconds!).toBeGreaterThanOrEqual(grown.oldest_message_age_seconds!);
    // Never under the true age of the oldest message, never more than one bucket width over it.
    const t = trueAge();
    expect(after.oldest_message_age_seconds!).toBeGreaterThanOrEqual(Math.floor(t) - 1);
    expect(after.oldest_message_age_seconds!).toBeLessThanOrEqual(Math.ceil(t) + 6);

    // A received (in flight) message still counts; acked ones do not.
    const handles: { message_id: string; receipt_handle: string }[] = [];
    for (const end = Date.now() + 20_000; handles.length < 2 && Date.now() < end; ) {
      const got = await api('POST', '/queues/aged/messages/consume', { max_messages: 10, timeout_seconds: 1, visibility_timeout_seconds: 60 });
      handles.push(...(got.body.data as { messages: { message_id: string; receipt_handle: string }[] }).messages);
    }
    expect(handles).toHaveLength(2);
    expect((await stats()).oldest_message_age_seconds).not.toBeNull();
    const acked = await api('POST', '/queues/aged/messages/ack', { entries: handles.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) });
    expect((acked.body.data as { acknowledged_count: number }).acknowledged_count).toBe(2);
    expect(await stats()).toMatchObject({ oldest_message_age_seconds: null });
  });
});

describe('GET /streams/{name}/groups', () => {
  it("answers each partition's next offset and each group's commits and lag per partition", async () => {
    expect((await api('POST', '/streams', { name: 'ev', topic_filter: 'ev/#', partition_count: 2 })).status).toBe(201);
    const batch = await api('POST', '/topics/ev/x/messages/batch', { messages: ['a', 'b', 'c', 'd', 'e'].map((k) => ({ payload: k, partition_key: k })) });
    expect(batch.status).toBe(201);
    const empty = (await api('GET', '/streams/ev/groups')).body.data as { groups: unknown[]; partitions: { partition: number; next_offset: number }[]; latest_offset: number };
    expect(empty.groups).toEqual([]);
    expect(empty.latest_offset).toBe(5);
    expect(Math.max(...empty.partitions.map((p) => p.next_offset))).toBe(5);

    await api('POST', '/streams/ev/messages/consume', { consumer_group: 'all', max_messages: 1 });
    expect((await api('POST', '/streams/ev/offsets/commit', { consumer_group: 'per', offset: 5, partition: 0 })).status).toBe(200);
    const data = (await api('GET', '/streams/ev/groups')).body.data as {
      partitions: { partition: number; next_offset: number }[];
      groups: { group: string; committed_offset: number | null; partitions: { partition: number; committed_offset: number | null; lag: number }[] }[];
    };
    const all = data.groups.find((g) => g.group === 'all')!;
    expect(all.committed_offset).toBeNull();
    expect(all.partitions.map((p) => p.lag)).toEqual(data.partitions.map((p) => p.next_offset)); // nothing committed: from offset 0
    const per = data.groups.find((g) => g.group === 'per')!;
    expect(per.partitions[0]).toEqual({ partition: 0, committed_offset: 5, lag: 0 });
    expect(per.partitions[1]).toEqual({ partition: 1, committed_offset: null, lag: data.partitions[1].next_offset });
  });

  it('pages by limit (400 not an integer, 422 out of range) and answers 404 for an unknown stream', async () => {
    expect((await api('GET', '/streams/ev/groups?limit=1')).body.data).toMatchObject({ more: true });
    expect((await api('GET', '/streams/ev/groups?limit=x')).status).toBe(400);
    expect((await api('GET', '/streams/ev/groups?limit=0')).status).toBe(422);
    expect((await client(server.baseUrl, other.key)('GET', '/streams/ev/groups')).body.error?.code).toBe('STREAM_NOT_FOUND');
  });
});

describe('GET /subscriptions/{name}/subscribers', () => {
  it("answers each subscriber's cursor and lag", async () => {
    expect((await api('POST', '/subscriptions', { name: 'audit', topic_filter: 'au/#' })).status).toBe(201);
    for (const p of ['1', '2', '3', '4']) await api('POST', '/topics/au/x/messages', { payload: p });
    await api('POST', '/subscriptions/audit/messages/consume', { subscriber_id: 'fast', max_messages: 4 });
    await api('POST', '/subscriptions/audit/messages/consume', { subscriber_id: 'slow', max_messages: 1 });
    const data = (await api('GET', '/subscriptions/audit/subscribers')).body.data as { next_position: number; subscribers: { subscriber_id: string; cursor: number; lag: number; last_seen: string }[] };
    expect(data.next_position).toBe(4);
    expect(data.subscribers.map(({ subscriber_id, cursor, lag }) => ({ subscriber_id, cursor, lag }))).toEqual([
      { subscriber_id: 'fast', cursor: 4, lag: 0 },
      { subscriber_id: 'slow', cursor: 1, lag: 3 },
    ]);
    expect((await client(server.baseUrl, other.key)('GET', '/subscriptions/audit/subscribers')).body.error?.code).toBe('SUBSCRIPTION_NOT_FOUND');
  });
});
