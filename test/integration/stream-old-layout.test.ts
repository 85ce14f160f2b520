/**
 * A 64-partition stream created before partition marks moved to their own item (its head holds
 * `lp`/`lc`, its binding has no `marks`) keeps working: concurrent publishes are all stored, a
 * group reading page by page sees every message once with increasing offsets, and each
 * partition's read holds exactly that partition's messages.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { logApi, uniq, type StreamMessage } from '../fixtures/logs';
import { newResourceFields } from '../../lambda/core/storage/resources';
import { createResource } from '../../lambda/core/storage/resource-writes';
import { newHead } from '../../lambda/logs/storage/log-heads';
import type { StreamItem } from '../../lambda/streams/storage/streams';

jest.setTimeout(180_000);

let server: TestServer;
let ns: TestNamespace;
let api: ReturnType<typeof logApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('oldlay');
  api = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/** The stream as a create before the change wrote it: marks in the head, no marks item. */
async function oldLayoutStream(partitions: number) {
  const name = uniq('old');
  const topic = `t/${name}`;
  const item: StreamItem = { ...newResourceFields('STREAM', ns.name, name, topic, Date.now()), retention_days: 7, max_size_gb: 1, partition_count: partitions };
  const { marks: _, ...head } = newHead({ namespace: ns.name, id: item.id, name, log_kind: 'STREAM', partition_count: partitions }) as Record<string, unknown>;
  expect(await createResource(item, { partition_count: partitions, retention_days: 7 }, [{ ...head, lp: {}, lc: {} }])).toBe(true);
  return { name, topic };
}

it('stores every concurrent publish and lets a group read each message once, in offset order', async () => {
  const { name, topic } = await oldLayoutStream(64);
  const N = 200;
  await Promise.all(Array.from({ length: N }, (_, i) => api.publish(topic, { payload: `m${i}`, partition_key: `k${i % 80}` })));
  const seen: StreamMessage[] = [];
  let next = 0;
  for (let page = 0; page < 50 && seen.length < N; page++) {
    const r = await api.read(name, { start_offset: next, max_messages: 37 });
    seen.push(...r.messages);
    next = r.next_offset;
  }
  expect(seen.map((m) => m.payload).sort()).toEqual(Array.from({ length: N }, (_, i) => `m${i}`).sort());
  const offsets = seen.map((m) => m.offset);
  expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  expect(new Set(offsets).size).toBe(N);
  const byPartition = new Map<number, number>();
  for (const m of seen) byPartition.set(m.partition, (byPartition.get(m.partition) ?? 0) + 1);
  for (const [p, n] of byPartition) expect((await api.read(name, { partition: p })).messages.length).toBe(n);
  expect(await api.getStream(name)).toMatchObject({ message_count: N, latest_offset: Math.max(...offsets) + 1 });
});
