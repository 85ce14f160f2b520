/**
 * A stream of many partitions keeps a small head (docs/design/0001-log-storage.md), on DynamoDB Local through the
 * real local gateway and publish sink: its per-partition marks (the last offset reserved in each
 * partition, and each partition's message count) live on an item of their own, and its
 * reservations in flight on records of their own, so the head every publish writes once holds only
 * what every publish must agree on. The promises the marks keep
 * still hold: idle partitions are not read, each partition's lag is exact, and a partition's last
 * offset never moves back when publishes finish out of order.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding } from '../fixtures/logs';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { ddb, dynamoClient, tableName } from '../../lambda/core/storage/client';
import { consumeStream } from '../../lambda/streams/operations';
import { partitionFor } from '../../lambda/streams/rules';
import { metaKeys } from '../../lambda/core/storage/keys';
import { purgeJobs } from '../../lambda/core/storage/resources';
import { streamsTask } from '../../lambda/streams/sweep';
import { PENDING_SETTLE_MS } from '../../lambda/logs/rules/log-horizon';

jest.setTimeout(120_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;
let call: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('head');
  call = client(server.baseUrl, ns.key);
  logs = logApi(call);
});
afterAll(() => server.close());
afterEach(() => jest.restoreAllMocks());

/** Queries of the stream log while `fn` runs (this process's client). */
async function logQueries<T>(fn: () => Promise<T>): Promise<{ result: T; queries: number }> {
  const c = ddb();
  const send = c.send.bind(c);
  let queries = 0;
  jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    if (cmd instanceof QueryCommand && cmd.input.TableName === tableName('streamLog')) queries++;
    return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
  }) as never);
  const result = await fn();
  jest.restoreAllMocks();
  return { result, queries };
}

let mwCount = 0;
const uniqueName = () => `headUnits${mwCount++}`;

/** Keys that land in partitions below `below` of 64, one per partition. */
const keysBelow = (below: number) => {
  const keys = new Map<number, string>();
  for (let i = 0; keys.size < below; i++) {
    const p = partitionFor(`key-${i}`, 64, 0);
    if (p < below && !keys.has(p)) keys.set(p, `key-${i}`);
  }
  return keys;
};

describe('a stream of 64 partitions', () => {
  it('keeps its per-partition marks off the head, which stays under 1 KB after 40 calls in flight', async () => {
    const { name, topic } = await logs.stream({ partition_count: 64 });
    const keys = [...keysBelow(48).values()];
    await Promise.all(Array.from({ length: 40 }, (_, c) => logs.publishBatch(topic, Array.from({ length: 10 }, (_, i) => ({ payload: `c${c}-${i}`, partition_key: keys[(c * 10 + i) % keys.length] })))));
    const { s } = await streamBinding(ns.name, name);
    const head = (await headOf(ns.name, s.id))!;
    expect(head.lp).toBeUndefined();
    expect(head.lc).toBeUndefined();
    expect(Object.keys(head.pending)).toEqual([]);
    expect(Buffer.byteLength(JSON.stringify(head))).toBeLessThan(1024);
    // Every message, once, in offset order.
    const all = await logs.read(name);
    expect(all.messages.map((m) => m.offset)).toEqual(Array.from({ length: 400 }, (_, i) => i));
  });

  it('takes one head write unit per publish call with 100 publishes in flight, and one on its records key', async () => {
    const { name } = await logs.stream({ partition_count: 64 });
    const { s, binding } = await streamBinding(ns.name, name);
    const append = (payload: string, key: string) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], Array.from({ length: 10 }, (_, i) => published(`${payload}-${i}`, Date.now(), { partition_key: `${key}-${i}` })));
    // 100 publishes held after their reservation (at their marks update, before any chunk): 100
    // reservations in flight, as 100 concurrent publish calls leave them.
    const HELD = 100;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held = 0;
    let allHeld!: () => void;
    const heldAll = new Promise<void>((r) => (allHeld = r));
    const c = ddb();
    const send = c.send.bind(c);
    jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
      if (held < HELD && cmd instanceof UpdateCommand && (cmd.input.Key as { sk?: string }).sk === '#MARKS') {
        if (++held === HELD) allHeld();
        await released;
      }
      return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
    }) as never);
    const inFlight = Array.from({ length: HELD }, (_, i) => append(`held${i}`, `h${i}`));
    await heldAll;
    // The head write units of one more publish call (ReturnConsumedCapacity; DynamoDB bills an
    // update by the larger of the item before and after, in 1 KB units:
    // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption).
    const units: number[] = [];
    const recordUnits: number[] = [];
    const mw = uniqueName();
    dynamoClient().middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        const key = JSON.stringify(input.Key ?? input.Item ?? {});
        const onHead = key.includes(`#LOG#${s.id}`);
        const onRecords = key.includes(`#RESV#${s.id}`);
        if (!['UpdateItemCommand', 'PutItemCommand'].includes(String(context.commandName)) || !(onHead || onRecords)) return next(args);
        input.ReturnConsumedCapacity = 'TOTAL';
        const out = await next(args);
        (onHead ? units : recordUnits).push((out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? Number.NaN);
        return out;
      },
      { step: 'initialize', name: mw },
    );
    try {
      await append('measured', 'm');
    } finally {
      dynamoClient().middlewareStack.remove(mw);
      release();
    }
    await Promise.all(inFlight);
    jest.restoreAllMocks();
    // The reservation alone on the head (the goal is at most 2.5 per call; with a pending entry per
    // reservation on the head it was [3, 3] here), and the block's record on a key of its own.
    expect(units).toEqual([1]);
    expect(recordUnits).toEqual([1]);
    const first = await logs.read(name);
    const rest = await logs.read(name, { start_offset: first.next_offset });
    expect(first.messages.length + rest.messages.length).toBe((HELD + 1) * 10);
    expect((await logs.getStream(name)).message_count).toBe((HELD + 1) * 10);
  });

  it('does not read idle partitions, and counts each partition exactly in its lag', async () => {
    const { name, topic } = await logs.stream({ partition_count: 64 });
    const keys = keysBelow(32);
    const byPartition = [...keys].sort((x, y) => x[0] - y[0]).map(([, k]) => k);
    for (let b = 0; b < 4; b++) await logs.publishBatch(topic, byPartition.slice(b * 8, b * 8 + 8).flatMap((k) => [0, 1, 2].map((i) => ({ payload: `${k}-${i}`, partition_key: k }))));
    const read = (opts: Record<string, unknown>) => consumeStream(ns.name, name, { consumer_group: 'g', timeout_seconds: 0, max_messages: 1, ...opts } as never);
    // Partition 40 was never written: its consume reads no chunk.
    const idle = await logQueries(() => read({ start_offset: 0, partition: 40 }));
    expect(idle.result.messages).toEqual([]);
    expect(idle.queries).toBe(0);
    // Partition 3 holds 3 messages, all before offset 30: a consume from 30 reads nothing of it.
    const p3 = await read({ start_offset: 0, partition: 3, max_messages: 10 });
    expect(p3.messages.map((m) => m.payload)).toEqual([0, 1, 2].map((i) => `${keys.get(3)}-${i}`));
    expect(Math.max(...p3.messages.map((m) => m.offset))).toBeLessThan(30);
    const passed = await logQueries(() => read({ start_offset: 30, partition: 3 }));
    expect([passed.result.messages.length, passed.queries]).toEqual([0, 0]);
    // After reading 1 of partition 5's 3 messages, 2 are left, whatever the other 31 partitions hold.
    expect((await read({ start_offset: 0, partition: 5 })).lag).toBe(2);
    expect((await read({ start_offset: 0 })).lag).toBe(95);
  });

  it("never moves a partition's last offset back when concurrent publishes mark out of order", async () => {
    const { name } = await logs.stream({ partition_count: 64 });
    const { binding } = await streamBinding(ns.name, name);
    const key = keysBelow(1).get(0)!;
    const append = (payload: string) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [published(payload, Date.now(), { partition_key: key })]);
    // A reserves first (the lower offset), but its marks arrive only after B has published whole.
    const c = ddb();
    const send = c.send.bind(c);
    let later: Promise<void> | undefined;
    jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
      if (!later && cmd instanceof UpdateCommand && (cmd.input.Key as { sk?: string }).sk === '#MARKS') {
        later = append('B');
        await later;
      }
      return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
    }) as never);
    await append('A');
    await later;
    jest.restoreAllMocks();
    const all = await logs.read(name);
    expect(all.messages.map((m) => [m.payload, m.offset])).toEqual([['A', 0], ['B', 1]]);
    // B, the newest offset of partition 0, is still found from itself on.
    const last = await consumeStream(ns.name, name, { consumer_group: 'g', start_offset: 1, partition: 0, timeout_seconds: 0, max_messages: 10 } as never);
    expect(last.messages.map((m) => m.payload)).toEqual(['B']);
  });

  it('purges the marks item with the rest of a deleted stream', async () => {
    const { name, topic } = await logs.stream({ partition_count: 64 });
    await logs.publishBatch(topic, [{ payload: 'a', partition_key: 'a' }]);
    const { s } = await streamBinding(ns.name, name);
    const marksItem = async () => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.logMarks(ns.name, s.id), ConsistentRead: true }))).Item;
    expect(await marksItem()).toBeDefined();
    expect((await call('DELETE', `/streams/${name}`)).status).toBe(200);
    const job = (await purgeJobs('STREAM')).find((j) => j.id === s.id)!;
    const ctx = { now: Date.now() + PENDING_SETTLE_MS + 1000, deadline: Date.now() + 30_000, log: () => undefined };
    for (let visit = 0; visit < 5 && !(await streamsTask.purge!(job, ctx)).done; visit++);
    expect(await headOf(ns.name, s.id)).toBeUndefined();
    expect(await marksItem()).toBeUndefined();
  });
});
