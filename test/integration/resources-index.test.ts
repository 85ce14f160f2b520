/**
 * The `resourcesByKind` index on DynamoDB Local. Its partition key is the kind,
 * shared by every resource of that kind in every namespace, so no per-message write may touch it:
 * publishing to a queue, a stream and a subscription (queue counters move on the queue's item)
 * consumes no capacity of the index. The sweeper and the admin CLI still find what they need
 * through it without a scan.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { dynamoClient } from '../../lambda/core/storage/client';
import { allOfKind } from '../../lambda/core/storage/resources';
import { nextNamespaceWith } from '../../lambda/core/storage/sweep-sources';
import { listNamespaces } from '../../lambda/namespaces/storage/namespaces';
import { gsiLagMs } from '../../local/aws-harsh/dynamodb';
import type { StreamItem } from '../../lambda/streams/storage/streams';

jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let other: TestNamespace;
let api: ReturnType<typeof client>;

/** Capacity consumed per index, by every DynamoDB call of this test file while `on`. */
const indexUnits = new Map<string, number>();
let on = false;

beforeAll(async () => {
  server = await startTestServer();
  [ns, other] = await Promise.all([createTestNamespace('ix'), createTestNamespace('ix')]);
  api = client(server.baseUrl, ns.key);
  dynamoClient().middlewareStack.add(
    (next) => async (args) => {
      if (on) (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'INDEXES';
      const out = await next(args);
      const consumed = (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      for (const c of (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as { GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> }[]) {
        for (const [index, u] of Object.entries(c.GlobalSecondaryIndexes ?? {})) indexUnits.set(index, (indexUnits.get(index) ?? 0) + (u.CapacityUnits ?? 0));
      }
      return out;
    },
    { step: 'initialize', name: 'indexMeter' },
  );
});
afterAll(() => server.close());

const created = (res: { status: number; text: string }) => expect([res.status, res.text.slice(0, 200)]).toEqual([201, expect.any(String)]);

it('takes no index write for publishes and consumes, whatever counters they move', async () => {
  created(await api('POST', '/queues', { name: 'q', topic_filter: 'ix/#' }));
  created(await api('POST', '/streams', { name: 's', topic_filter: 'ix/#', partition_count: 4 }));
  created(await api('POST', '/subscriptions', { name: 'u', topic_filter: 'ix/#' }));
  on = true;
  for (let i = 0; i < 5; i++) created(await api('POST', '/topics/ix/a/messages/batch', { messages: [{ payload: `a${i}` }, { payload: `b${i}`, partition_key: 'k' }] }));
  expect((await api('POST', '/queues/q/messages/consume', { max_messages: 10, timeout_seconds: 0 })).status).toBe(200);
  expect((await api('POST', '/streams/s/messages/consume', { consumer_group: 'g', timeout_seconds: 0 })).status).toBe(200);
  expect((await api('POST', '/subscriptions/u/messages/consume', { subscriber_id: 'x', timeout_seconds: 0 })).status).toBe(200);
  on = false;
  expect(indexUnits.get('resourcesByKind') ?? 0).toBe(0);
  // The meter does see index writes: a create writes the index entry of the new resource.
  on = true;
  created(await api('POST', '/streams', { name: 's2', topic_filter: 'ix2/#' }));
  on = false;
  expect(indexUnits.get('resourcesByKind')).toBeGreaterThan(0);
});

it('lets the sweeper find, in name order, every namespace that has a resource of a kind', async () => {
  created(await client(server.baseUrl, other.key)('POST', '/streams', { name: 'o', topic_filter: 'o/#' }));
  // The index lags behind the create in AWS (local/aws-harsh/dynamodb.ts): a sweep round that
  // runs before it caught up finds the namespace the next round (docs/aws-parity.md).
  let seen: string[] = [];
  for (const end = Date.now() + gsiLagMs(process.env) + 5_000; !seen.includes(other.name) && Date.now() < end; ) {
    seen = [];
    for (let n = await nextNamespaceWith('STREAM'); n !== undefined; n = await nextNamespaceWith('STREAM', n)) seen.push(n);
  }
  expect(seen).toEqual([...seen].sort());
  expect(seen).toEqual(expect.arrayContaining([ns.name, other.name]));
  // Only namespaces with that kind: this one has a subscription, the other none.
  const subs: string[] = [];
  for (let n = await nextNamespaceWith('SUBSCRIPTION'); n !== undefined; n = await nextNamespaceWith('SUBSCRIPTION', n)) subs.push(n);
  expect(subs).toContain(ns.name);
  expect(subs).not.toContain(other.name);
});

it('still gives whole items to allOfKind and the namespace fields to the admin CLI', async () => {
  const streams = await allOfKind<StreamItem>('STREAM');
  expect(streams.find((s) => s.namespace === ns.name && s.name === 's')).toMatchObject({ partition_count: 4, topic_filter: 'ix/#' });
  const mine = (await listNamespaces()).find((n) => n.name === ns.name);
  expect(mine).toMatchObject({ status: 'active', limits: { publish: 1_000_000 } });
  expect(typeof mine?.created_at).toBe('number');
});
