/**
 * Streams and subscriptions that keep up as their consumers need: regression tests of each defect, on DynamoDB
 * Local through the real local gateway and the real publish sinks.
 *
 * - a consume behind many expired, unswept messages skips them by position (a few probes of the
 *   log, not a read of every expired chunk) and answers within its budget;
 * - the size cap holds at read time (a consume never returns a message the cap excludes);
 * - `start_offset` above `latest_offset` is refused with 422, as a commit is;
 * - the consumer lag counts neither failed publishes (gaps) nor other partitions' messages;
 * - a gap merged (compacted) across `earliest` does not make `message_count` low;
 * - a publish whose block passed its settle time answers 503 (never 201) and writes no chunk late;
 * - the sweeper trims a log of many expired messages in one visit, by position.
 *
 * Workload: each case's count is the one its bound needs (200 expired chunks against 40 reads,
 * 6,000 expired messages against the old 5,000 a visit, 300 failed publishes to fill more gap
 * pages than a visit takes). Half the file's CPU is those 300 failed publishes (about 45 ms of
 * this process's CPU each, measured per case); the stored message beside each costs little.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { chunkCount, headOf, logApi, published, retryingRefusals, streamBinding, subscriptionBinding, unstorable } from '../fixtures/logs';
import { appendToStreams, streamLogKey } from '../../lambda/streams/storage/stream-log';
import { appendToSubscriptions } from '../../lambda/subscriptions/storage/subscription-log';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { sweepStream } from '../../lambda/streams/sweep';
import { PENDING_SETTLE_MS } from '../../lambda/logs/rules/log-horizon';
import { consumeStream } from '../../lambda/streams/operations';
import { ApiError } from '../../lambda/core/rules/errors';
import { isChunkWrite, isReservation, queriesOf, stallAt, streamLogBytes } from './logs-keep-up.fixture';

jest.setTimeout(120_000);

const DAY = 86_400_000;
let server: TestServer;
let ns: TestNamespace;
let call: ReturnType<typeof client>;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('keep');
  call = client(server.baseUrl, ns.key);
  logs = logApi(call);
});
afterAll(() => server.close());
afterEach(() => jest.restoreAllMocks());

/** `calls` publish calls of one message each, `at` in the past: one chunk each. */
async function pastStream(binding: Parameters<typeof appendToStreams>[1][0], calls: number, at: number) {
  for (let i = 0; i < calls; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, calls - i) }, (_, j) => appendToStreams({ namespace: ns.name, now: at }, [binding], [published(`old-${i + j}`, at, { partition_key: `k${(i + j) % 5}` })])),
    );
  }
}

describe('a consume behind many expired messages', () => {
  it('stream: skips the expired range by position, reading a few chunks, not all of them', async () => {
    const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 2 });
    const { binding } = await streamBinding(ns.name, name);
    await pastStream(binding, 200, Date.now() - DAY - 120_000);
    await logs.publishBatch(topic, [{ payload: 'fresh-a', partition_key: 'a' }, { payload: 'fresh-b', partition_key: 'b' }]);
    const { result, chunks } = await queriesOf('streamLog', () => logs.read(name, { max_messages: 10 }));
    expect(result.messages.map((m) => m.payload)).toEqual(['fresh-a', 'fresh-b']);
    expect(result.next_offset).toBe(202);
    // 200 chunks before the live ones: a binary search reads ~2 × log2(200) of them, a walk all 200.
    expect(chunks).toBeLessThan(40);
  });

  it('subscription: a subscriber idle past the TTL skips the expired range and its cursor moves on', async () => {
    const { name, topic } = await logs.subscription({ message_ttl_seconds: 60 });
    const { binding } = await subscriptionBinding(ns.name, name);
    const past = Date.now() - 600_000;
    for (let i = 0; i < 200; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => appendToSubscriptions({ namespace: ns.name, now: past }, [binding], [published(`old-${i + j}`, past)])));
    }
    await logs.publish(topic, { payload: 'fresh' });
    const { result, chunks } = await queriesOf('subscriptionLog', () => logs.consume(name, { subscriber_id: 'idle', max_messages: 10 }));
    expect(result.messages.map((m) => m.payload)).toEqual(['fresh']);
    expect(chunks).toBeLessThan(20);
    expect((await logs.consume(name, { subscriber_id: 'idle' })).messages).toEqual([]);
  });

  it('a read stopped by its budget answers the position it reached, and the next read goes on from it', async () => {
    const { name, topic } = await logs.stream({ partition_count: 1 });
    // 12 messages of 250 KB: one chunk each, 3 MB in all.
    for (let i = 0; i < 12; i++) await logs.publish(topic, { payload: `${String(i).padStart(2, '0')}${'x'.repeat(250_000)}` });
    const seen: number[] = [];
    let next = 0;
    for (let round = 0; round < 12 && seen.length < 12; round++) {
      const got = await logs.read(name, { start_offset: next, max_messages: 1000 });
      seen.push(...got.messages.map((m) => Number(m.payload.slice(0, 2))));
      expect(got.next_offset).toBeGreaterThan(next);
      next = got.next_offset;
    }
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });
});

describe('large messages on many partitions', () => {
  it('a consume reads about its byte budget, not a page of every partition, and loses nothing', async () => {
    const { name } = await logs.stream({ partition_count: 16 });
    const { binding } = await streamBinding(ns.name, name);
    // 160 messages of 100 KB, one publish call each (a chunk each), ten per partition: 16 MB.
    for (let i = 0; i < 160; i += 16) {
      await Promise.all(
        Array.from({ length: 16 }, (_, j) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [published(`${i + j}:${'x'.repeat(100_000)}`, Date.now(), { partition_key: `k${(i + j) % 16}` })])),
      );
    }
    const meter = streamLogBytes();
    const first = await logs.read(name, { max_messages: 1000 }).finally(meter.stop);
    // The response holds ~50 of them (5 MiB); the read budget is 8 MiB (a page of each partition was 16 MB).
    expect(first.messages.length).toBeGreaterThan(30);
    expect(meter.bytes()).toBeLessThan(9 * 1024 * 1024);
    const offsets = first.messages.map((m) => m.offset);
    expect(offsets).toEqual(offsets.map((_, i) => i));
    let next = first.next_offset;
    const seen = new Set(first.messages.map((m) => m.payload.split(':')[0]));
    while (next < 160) {
      const page = await logs.read(name, { max_messages: 1000, start_offset: next });
      page.messages.forEach((m) => seen.add(m.payload.split(':')[0]));
      expect(page.next_offset).toBeGreaterThan(next);
      next = page.next_offset;
    }
    expect(seen.size).toBe(160);
  });
});

describe('the size cap at read time', () => {
  it('a subscription over max_size_mb never returns the oldest messages the cap excludes, swept or not', async () => {
    const { name, topic } = await logs.subscription({ max_size_mb: 1 });
    for (const tag of ['m1', 'm2', 'm3', 'm4', 'm5']) await logs.publish(topic, { payload: `${tag}:${'q'.repeat(250_000 - 3)}` });
    const got = await logs.consume(name, { subscriber_id: 'unswept', max_messages: 10 });
    expect(got.messages.map((m) => m.payload.split(':')[0])).toEqual(['m2', 'm3', 'm4', 'm5']);
  });
});

describe('start_offset above latest_offset', () => {
  it('is refused with 422 naming latest_offset, as a commit is', async () => {
    const { name, topic } = await logs.stream();
    await logs.publish(topic, { payload: 'one' });
    const res = await call('POST', `/streams/${name}/messages/consume`, { consumer_group: 'g', start_offset: 5, timeout_seconds: 0 });
    expect(res.status).toBe(422);
    expect(res.text).toContain('latest_offset 1');
    expect((await call('POST', `/streams/${name}/messages/consume`, { consumer_group: 'g', start_offset: 1, timeout_seconds: 0 })).status).toBe(200);
  });
});

describe('consumer lag', () => {
  it('counts neither gaps nor other partitions, and is per stream, group and partition', async () => {
    const { name, topic } = await logs.stream({ partition_count: 2 });
    const { binding } = await streamBinding(ns.name, name);
    // Keys of partition 0 and 1 (FNV-1a mod 2).
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    const { partitionFor } = await import('../../lambda/streams/rules');
    const k0 = keys.find((k) => partitionFor(k, 2, 0) === 0)!;
    const k1 = keys.find((k) => partitionFor(k, 2, 0) === 1)!;
    await logs.publishBatch(topic, [0, 1, 2].map((i) => ({ payload: `p0-${i}`, partition_key: k0 })));
    // A failed publish into partition 1: a gap of the stream, and partition 1's first reserved message.
    await expect(appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [{ ...unstorable(Date.now()), partition_key: k1 }])).rejects.toThrow();
    await logs.publishBatch(topic, [0, 1, 2, 3, 4].map((i) => ({ payload: `p1-${i}`, partition_key: k1 })));
    const read = (opts: Record<string, unknown>) => consumeStream(ns.name, name, { consumer_group: 'lag', timeout_seconds: 0, ...opts } as never);
    // 9 offsets, one of them a gap: 8 messages; after 1 read, 7 left.
    const all = await read({ start_offset: 0, max_messages: 1 });
    expect([all.next_offset, all.lag]).toEqual([1, 7]);
    // Partition 0 holds 3 messages: after reading 1, 2 left, whatever partition 1 holds.
    const p0 = await read({ start_offset: 0, max_messages: 1, partition: 0 });
    expect(p0.lag).toBe(2);
    // Past the failed one and 2 messages of partition 1: 3 left.
    const p1 = await read({ start_offset: 0, max_messages: 2, partition: 1 });
    expect(p1.lag).toBe(3);
    expect(p1.lagKey).toEqual({ stream: name, consumer_group: 'lag', partition: '1' });
  });
});

describe('a gap merged across earliest', () => {
  it('leaves message_count exact after the sweeper trims into it', async () => {
    const { name, topic } = await logs.stream({ retention_days: 1 });
    const { s, binding } = await streamBinding(ns.name, name);
    const past = Date.now() - DAY - 120_000;
    // 35 × (an expired message, a failed publish), then F, a failed publish, G: 36 gaps, more than
    // the head holds (HEAD_MAX_GAPS, 32): 33 spill to a page, the last 3 stay on the head, the
    // last one after F, the first live message. (Written for a head that compacted gaps past 100
    // in pairs: then 102 gaps; the same shape, pages and head, at the present limit.)
    for (let i = 0; i < 35; i++) {
      await appendToStreams({ namespace: ns.name, now: past }, [binding], [published(`old-${i}`, past)]);
      await expect(appendToStreams({ namespace: ns.name, now: past }, [binding], [unstorable(past)])).rejects.toThrow();
    }
    await logs.publish(topic, { payload: 'F' });
    await expect(appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [unstorable(Date.now())])).rejects.toThrow();
    await logs.publish(topic, { payload: 'G' });
    for (let i = 0; i < 5; i++) await sweepStream(s, { now: Date.now() });
    const d = await logs.getStream(name);
    expect([d.earliest_offset, d.latest_offset]).toEqual([70, 73]);
    expect(d.message_count).toBe(2);
    expect((await logs.read(name)).messages.map((m) => m.payload)).toEqual(['F', 'G']);
  });
});

describe('a publish past its settle time', () => {
  it('writes no chunk once its reservation passed the settle time, and answers 503', async () => {
    const { name } = await logs.stream();
    const { s, binding } = await streamBinding(ns.name, name);
    stallAt(isReservation, PENDING_SETTLE_MS + 1000);
    const out = appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [published('late', Date.now())]);
    await expect(out).rejects.toThrow(ApiError);
    await out.catch((e: ApiError) => expect(e.status).toBe(503));
    jest.restoreAllMocks();
    expect(await chunkCount('streamLog', streamLogKey(s.id, 0))).toBe(0);
    const head = (await headOf(ns.name, s.id))!;
    expect(head.pending).toEqual({});
    expect((await logs.getStream(name)).message_count).toBe(0);
  });

  // A record put and a settle of its block are both conditional on the record key being empty
  // (lambda/logs/storage/log-records.ts), so a record that lands, however late, means no one settled the block.
  it('answers 201 when its record lands past the settle time but before anyone settled the block, and readers read it', async () => {
    const { name } = await logs.stream();
    const { binding } = await streamBinding(ns.name, name);
    stallAt(isChunkWrite, PENDING_SETTLE_MS + 1000);
    try {
      await appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [published('late', Date.now())]);
    } finally {
      jest.restoreAllMocks();
    }
    expect((await logs.read(name, { consumer_group: 'after' })).messages.map((m) => m.payload)).toEqual(['late']);
  });

  it('answers 503, not 201, when a reader settled its block before its record landed, and nothing of it is read', async () => {
    const { name } = await logs.stream();
    const { binding } = await streamBinding(ns.name, name);
    const isRecordPut = (cmd: unknown) => cmd instanceof PutCommand && String(cmd.input.Item?.pk).includes('#RESV#') && cmd.input.Item?.claim === undefined;
    let settledBy: string[] | undefined;
    // Stalled well past any settle time after its chunks; a reader meets the dead block first.
    stallAt(isChunkWrite, 300_000, async (cmd, shifted) => {
      if (!shifted || settledBy || !isRecordPut(cmd)) return;
      settledBy = [];
      settledBy = (await logs.read(name, { consumer_group: 'during' })).messages.map((m) => m.payload);
    });
    let status: number | undefined;
    try {
      await appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [published('late', Date.now())]).catch((e: ApiError) => (status = e.status));
    } finally {
      jest.restoreAllMocks();
    }
    const after = (await logs.read(name, { consumer_group: 'after' })).messages.map((m) => m.payload);
    expect({ status, settledBy, after }).toEqual({ status: 503, settledBy: [], after: [] });
  });
});

describe('the sweeper keeps pace', () => {
  it('trims thousands of expired messages in one visit, by position', async () => {
    const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 2 });
    const { s, binding } = await streamBinding(ns.name, name);
    const past = Date.now() - DAY - 120_000;
    // 60 calls of 100 messages: 6,000 expired messages, more than the old 5,000 per visit.
    for (let i = 0; i < 60; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          appendToStreams({ namespace: ns.name, now: past }, [binding], Array.from({ length: 100 }, (_, k) => published(`o${i + j}-${k}`, past, { partition_key: `k${(j + k) % 4}` }))),
        ),
      );
    }
    await logs.publish(topic, { payload: 'live' });
    const { result: stats, chunks } = await queriesOf('streamLog', () => sweepStream(s, { now: Date.now() }));
    expect(stats.trimmed).toBe(6000);
    expect(chunks).toBeLessThan(60);
    const d = await logs.getStream(name);
    expect([d.earliest_offset, d.message_count]).toEqual([6000, 1]);
  });
});

describe('bounded counting of groups and subscribers', () => {
  it('counts groups active within retention, at most 1,000 per request, and lets idle ones expire', async () => {
    const { recordGroup } = await import('../../lambda/streams/storage/streams');
    const { batchWrite } = await import('../../lambda/core/storage/client');
    const { metaKeys } = await import('../../lambda/core/storage/keys');
    const getItem = async (Key: Record<string, unknown>) => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key, ConsistentRead: true }))).Item;
    const { name } = await logs.stream({ retention_days: 1 });
    const { s } = await streamBinding(ns.name, name);
    await recordGroup(ns.name, s.id, 'idle-for-days', Date.now() - 3 * DAY, DAY);
    await logs.read(name, { consumer_group: 'active' });
    expect((await logs.getStream(name)).consumer_count).toBe(1);
    const record = await getItem(metaKeys.logMember(ns.name, s.id, 'GROUP#active'));
    // Expires a retention and 2 days after its last use.
    expect(record?.ttl).toBeGreaterThan(Date.now() / 1000 + DAY / 1000);
    expect(record?.ttl).toBeLessThan(Date.now() / 1000 + (4 * DAY) / 1000);
    // 1,100 short-lived group names: the count reads one bounded page.
    const now = Date.now();
    await batchWrite(
      tableName('meta'),
      Array.from({ length: 1100 }, (_, i) => ({ PutRequest: { Item: { ...metaKeys.logMember(ns.name, s.id, `GROUP#g${i}`), seen: now, stream_id: s.id, group: `g${i}` } } })),
    );
    const { result, queries } = await queriesOf('meta', () => logs.getStream(name));
    expect(result.consumer_count).toBe(1000);
    expect(queries).toBe(1);
  });
});

describe('the head stays small', () => {
  /** The head item's size as DynamoDB bills it, about: its JSON (names and values), never below. */
  const headBytes = async (id: string) => {
    const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: { pk: `NS#${ns.name}#LOG#${id}`, sk: '#HEAD' }, ConsistentRead: true }));
    return Buffer.byteLength(JSON.stringify(out.Item ?? {}), 'utf8');
  };
  const gapPages = async (id: string) => {
    const out = await ddb().send(
      new QueryCommand({ TableName: tableName('meta'), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': `NS#${ns.name}#LOG#${id}`, ':p': 'GAP' }, ConsistentRead: true }),
    );
    return out.Items ?? [];
  };

  it('many failed publishes spill their gaps to pages: the head stays under 2 KB, the counters stay exact, and trimming drops the pages', async () => {
    const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 2 });
    const { s, binding } = await streamBinding(ns.name, name);
    const past = Date.now() - DAY - 120_000;
    // 300 failed publishes (each a gap of ~32 bytes in the head, ~10 KB in all), each after a stored one.
    for (let i = 0; i < 300; i += 5) {
      await Promise.all(
        Array.from({ length: 5 }, async (_, j) => {
          // Each reserves its position: a publish refused before it reserves is tried again, as a client retries its 503.
          await retryingRefusals(() => appendToStreams({ namespace: ns.name, now: past }, [binding], [published(`old-${i + j}`, past, { partition_key: `k${j}` })]));
          await expect(retryingRefusals(() => appendToStreams({ namespace: ns.name, now: past }, [binding], [unstorable(past)]))).rejects.toThrow();
        }),
      );
      expect(await headBytes(s.id)).toBeLessThan(2048);
    }
    const head = (await headOf(ns.name, s.id))!;
    expect([head.next, head.pending]).toEqual([600, {}]);
    // Every failed publish's position is in a gap (its first position `s`, its `n` messages) on the
    // head or a spilled page: put on the head with its block's record, moved off it with its page
    // (one transaction each). Counted by positions: blocks reserved together may fail as one gap.
    const gaps = new Map<string, { n: number }>([...Object.entries(head.gaps), ...(await gapPages(s.id)).flatMap((p) => Object.entries(p.g as Record<string, { n: number }>))]);
    expect([...gaps.values()].reduce((n, g) => n + g.n, 0)).toBe(300);
    let d = await logs.getStream(name);
    expect([d.latest_offset, d.message_count]).toEqual([600, 300]);
    await logs.publish(topic, { payload: 'live', partition_key: 'k0' });
    // 9 or more pages: a visit takes 8 and stops before the rest, the next one goes on.
    for (let i = 0; i < 4; i++) await sweepStream(s, { now: Date.now() });
    d = await logs.getStream(name);
    expect([d.earliest_offset, d.message_count]).toEqual([600, 1]);
    expect(await gapPages(s.id)).toEqual([]);
    expect((await logs.read(name)).messages.map((m) => m.payload)).toEqual(['live']);
  });

  it('a log with too many publishes in flight answers 503 instead of growing its head', async () => {
    const { name, topic } = await logs.stream();
    const { s } = await streamBinding(ns.name, name);
    // 128 reservations of publishes that hang (fresh: readers still wait for them).
    const tokens = Array.from({ length: 128 }, (_, i) => `${Date.now().toString(36)}-1-1-hang${i}`);
    for (let i = 0; i < tokens.length; i += 32) {
      const some = tokens.slice(i, i + 32);
      await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key: { pk: `NS#${ns.name}#LOG#${s.id}`, sk: '#HEAD' },
          UpdateExpression: `SET ${some.map((_, j) => `pending.#t${j} = :z`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(some.map((t, j) => [`#t${j}`, t])),
          ExpressionAttributeValues: { ':z': 0 },
        }),
      );
    }
    const res = await call('POST', `/topics/${topic}/messages`, { payload: 'x' });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(Object.keys((await headOf(ns.name, s.id))!.pending)).toHaveLength(128);
  });
});
