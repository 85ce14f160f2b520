/**
 * Streams and subscriptions through the real local gateway on DynamoDB Local: concurrent
 * publishers, per-key order, commits, independent groups, concurrent consumes by one subscriber
 * id, and trimming by the sweeper task (called directly with a future clock).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { getStream } from '../../lambda/streams/storage/streams';
import { getSubscription } from '../../lambda/subscriptions/storage/subscriptions';
import { sweepStream } from '../../lambda/streams/sweep';
import { sweepSubscription } from '../../lambda/subscriptions/sweep';

const GIB = 1024 ** 3;
const trimStream = async (...a: Parameters<typeof sweepStream>) => (await sweepStream(...a)).trimmed ?? 0;
const trimSubscription = async (...a: Parameters<typeof sweepSubscription>) => (await sweepSubscription(...a)).trimmed ?? 0;

jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let api: ReturnType<typeof client>;
let n = 0;
const uniq = (p: string) => `${p}-${Date.now().toString(36)}-${n++}`;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('st');
  api = client(server.baseUrl, ns.key);
});
afterAll(() => server.close());

async function stream(fields: Record<string, unknown> = {}) {
  const name = uniq('s');
  const topic = `t/${name}`;
  const res = await api('POST', '/streams', { name, topic_filter: topic, ...fields });
  expect(res.status).toBe(201);
  return { name, topic };
}
const publish = async (topic: string, body: Record<string, unknown>) => {
  const res = await api('POST', `/topics/${topic}/messages`, body);
  expect(res.status).toBe(201);
};
const readAll = async (name: string, body: Record<string, unknown> = {}) => {
  const res = await api('POST', `/streams/${name}/messages/consume`, { consumer_group: 'reader', start_offset: 'earliest', max_messages: 1000, timeout_seconds: 0, ...body });
  expect(res.status).toBe(200);
  return res.body.data as { messages: { offset: number; partition: number; payload: string }[]; next_offset: number; count: number };
};

describe('streams', () => {
  it('gives concurrent publishers unique, increasing offsets and loses nothing', async () => {
    const { name, topic } = await stream({ partition_count: 3 });
    await Promise.all(
      Array.from({ length: 10 }, (_, w) =>
        (async () => {
          for (let i = 0; i < 8; i++) await publish(topic, { payload: `w${w}:${i}`, partition_key: `w${w}` });
        })(),
      ),
    );
    const batch = api('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: 20 }, (_, i) => ({ payload: `b:${i}` })) });
    expect((await batch).status).toBe(201);
    const { messages } = await readAll(name);
    expect(messages).toHaveLength(100);
    const offsets = messages.map((m) => m.offset);
    expect(new Set(offsets).size).toBe(100);
    expect([...offsets].sort((a, b) => a - b)).toEqual(offsets);
    // A batch gets one block: its messages are consecutive and in request order.
    const b = messages.filter((m) => m.payload.startsWith('b:'));
    expect(b.map((m) => m.payload)).toEqual(Array.from({ length: 20 }, (_, i) => `b:${i}`));
    expect(b[19].offset - b[0].offset).toBe(19);
    const s = (await api('GET', `/streams/${name}`)).body.data;
    expect([s.message_count, s.earliest_offset, s.latest_offset]).toEqual([100, 0, 100]);
  });

  it('never lets a reader that follows next_offset skip a block still being written', async () => {
    const { name, topic } = await stream();
    let publishing = true;
    const writers = Promise.all(
      Array.from({ length: 6 }, (_, w) =>
        (async () => {
          for (let i = 0; i < 8; i++) await publish(topic, { payload: `w${w}:${i}` });
        })(),
      ),
    ).finally(() => {
      publishing = false;
    });
    const seen: string[] = [];
    let next = 0;
    while (publishing || seen.length < 48) {
      const c = await readAll(name, { start_offset: next, timeout_seconds: publishing ? 1 : 0 });
      seen.push(...c.messages.map((m) => m.payload));
      next = c.next_offset;
      if (!publishing && c.count === 0) break;
    }
    await writers;
    expect(seen).toHaveLength(48);
    expect(new Set(seen).size).toBe(48);
  });

  it('keeps per-key order and one partition per key, and the partition filter returns exactly that partition', async () => {
    const { name, topic } = await stream({ partition_count: 4 });
    const keys = ['k1', 'k2', 'k3', 'k4', 'k5'];
    await Promise.all(keys.map(async (k) => {
      for (let i = 0; i < 6; i++) await publish(topic, { payload: `${k}:${i}`, partition_key: k });
    }));
    const all = (await readAll(name)).messages;
    for (const k of keys) {
      const mine = all.filter((m) => m.payload.startsWith(`${k}:`));
      expect(mine.map((m) => m.payload)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `${k}:${i}`));
      expect(new Set(mine.map((m) => m.partition)).size).toBe(1);
    }
    for (let p = 0; p < 4; p++) {
      const only = (await readAll(name, { partition: p })).messages;
      expect(only.map((m) => m.offset)).toEqual(all.filter((m) => m.partition === p).map((m) => m.offset));
    }
    expect((await api('POST', `/streams/${name}/messages/consume`, { consumer_group: 'g', partition: 4, timeout_seconds: 0 })).status).toBe(422);
  });

  it('resumes a group at its commit, keeps two groups independent, and refuses a commit past latest without a trace', async () => {
    const { name, topic } = await stream();
    for (const p of ['a', 'b', 'c', 'd']) await publish(topic, { payload: p });
    const consume = async (group: string) =>
      (await api('POST', `/streams/${name}/messages/consume`, { consumer_group: group, timeout_seconds: 0 })).body.data.messages.map((m: { payload: string }) => m.payload);
    expect((await api('POST', `/streams/${name}/offsets/commit`, { consumer_group: 'g1', offset: 2 })).status).toBe(200);
    expect(await consume('g1')).toEqual(['c', 'd']);
    expect(await consume('g2')).toEqual(['a', 'b', 'c', 'd']);
    expect((await api('POST', `/streams/${name}/offsets/commit`, { consumer_group: 'g2', offset: 3 })).status).toBe(200);
    expect(await consume('g1')).toEqual(['c', 'd']);
    expect(await consume('g2')).toEqual(['d']);
    const refused = await api('POST', `/streams/${name}/offsets/commit`, { consumer_group: 'g3', offset: 5 });
    expect([refused.status, refused.body.error?.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect((await api('GET', `/streams/${name}`)).body.data.consumer_count).toBe(2);
    // A per-partition commit is used by a consume of that partition.
    expect((await api('POST', `/streams/${name}/offsets/commit`, { consumer_group: 'g1', offset: 1, partition: 0 })).status).toBe(200);
    const p0 = await api('POST', `/streams/${name}/messages/consume`, { consumer_group: 'g1', partition: 0, timeout_seconds: 0 });
    expect(p0.body.data.messages.map((m: { payload: string }) => m.payload)).toEqual(['b', 'c', 'd']);
  });

  it('trims by retention and moves earliest_offset; a consume from earliest starts there', async () => {
    const { name, topic } = await stream({ retention_days: 1 });
    for (const p of ['old1', 'old2']) await publish(topic, { payload: p });
    const before = (await getStream(ns.name, name))!;
    expect(await trimStream(before, { now: Date.now() })).toBe(0);
    const removed = await trimStream(before, { now: Date.now() + 86_400_000 + 1000 });
    expect(removed).toBe(2);
    const s = (await api('GET', `/streams/${name}`)).body.data;
    expect([s.earliest_offset, s.latest_offset, s.message_count]).toEqual([2, 2, 0]);
    await publish(topic, { payload: 'new' });
    const c = await readAll(name);
    expect(c.messages.map((m) => [m.offset, m.payload])).toEqual([[2, 'new']]);
    const explicit = await readAll(name, { start_offset: 0 });
    expect(explicit.messages.map((m) => m.payload)).toEqual(['new']);
  });

  it('trims the oldest messages past max_size_gb', async () => {
    const { name, topic } = await stream();
    for (const p of ['x', 'y', 'z']) await publish(topic, { payload: p });
    const s = (await getStream(ns.name, name))!;
    // A cap of 1 byte: the two oldest one-byte messages must go.
    expect(await trimStream({ ...s, max_size_gb: 1 / GIB }, { now: Date.now() })).toBe(2);
    expect((await readAll(name)).messages.map((m) => m.payload)).toEqual(['z']);
  });
});

describe('subscriptions', () => {
  async function subscription(fields: Record<string, unknown> = {}) {
    const name = uniq('sub');
    const topic = `u/${name}`;
    expect((await api('POST', '/subscriptions', { name, topic_filter: topic, ...fields })).status).toBe(201);
    return { name, topic };
  }
  const consume = async (name: string, body: Record<string, unknown>) => {
    const res = await api('POST', `/subscriptions/${name}/messages/consume`, { timeout_seconds: 0, ...body });
    expect(res.status).toBe(200);
    return (res.body.data.messages as { payload: string }[]).map((m) => m.payload);
  };

  it('never returns a message twice to concurrent consumes with one subscriber id, and loses none', async () => {
    const { name, topic } = await subscription();
    expect((await api('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: 60 }, (_, i) => ({ payload: `m${i}` })) })).status).toBe(201);
    const got = (await Promise.all(Array.from({ length: 12 }, () => consume(name, { subscriber_id: 'shared', max_messages: 7 })))).flat();
    expect(new Set(got).size).toBe(got.length);
    const rest = await consume(name, { subscriber_id: 'shared', max_messages: 100 });
    expect(new Set([...got, ...rest]).size).toBe(60);
    expect(got.length + rest.length).toBe(60);
    // Another subscriber id still gets all 60, in order.
    expect(await consume(name, { subscriber_id: 'other', max_messages: 100 })).toEqual(Array.from({ length: 60 }, (_, i) => `m${i}`));
  });

  it('removes expired messages in the sweeper; a new subscriber starts at the oldest retained one', async () => {
    const { name, topic } = await subscription({ message_ttl_seconds: 60 });
    await publish(topic, { payload: 'early' });
    const sub = (await getSubscription(ns.name, name))!;
    expect(await trimSubscription(sub, { now: Date.now() + 61_000 })).toBe(1);
    await publish(topic, { payload: 'late' });
    expect(await consume(name, { subscriber_id: 'newcomer' })).toEqual(['late']);
    const d = (await api('GET', `/subscriptions/${name}`)).body.data;
    expect([d.message_count, d.subscriber_count]).toEqual([1, 1]);
  });

  it('refuses a bad consume without creating a subscriber', async () => {
    const { name } = await subscription();
    expect((await api('POST', `/subscriptions/${name}/messages/consume`, { subscriber_id: 'x', max_messages: 101 })).status).toBe(422);
    expect((await api('GET', `/subscriptions/${name}`)).body.data.subscriber_count).toBe(0);
  });
});

describe('stream consumer lag (the StreamConsumerLag metric)', () => {
  it('is the number of messages between the next offset and the latest offset after a read', async () => {
    const { consumeStream } = await import('../../lambda/streams/operations');
    const s = await stream();
    for (let i = 0; i < 5; i++) await publish(s.topic, { payload: `m${i}` });
    const read = (max: number, start?: number) =>
      consumeStream(ns.name, s.name, { consumer_group: 'lagging', start_offset: start, max_messages: max, timeout_seconds: 0 } as never);
    const first = await read(2, 0);
    expect([first.next_offset, first.lag]).toEqual([2, 3]);
    const rest = await read(10, first.next_offset);
    expect([rest.next_offset, rest.lag]).toEqual([5, 0]);
  });
});
