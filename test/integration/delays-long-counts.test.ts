/**
 * Held messages (a delay beyond 900 s) in the queue counters (DESIGN.md section 6,
 * `message_count`): counted from the publish in the expiry bucket of their TTL like any message,
 * so they leave the count when the TTL ends whether or not they were handed over, and leave it
 * once on cancel or ack; the quiet-queue reconciliation counts what SQS holds plus what the
 * service holds, keeping the totals equal to the sum of the buckets. The tick and the sweeper
 * are the real ones, called with clocks in the future.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { tick as runTick } from '../../lambda/schedules/tick';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { ddb, tableName } from '../../lambda/storage/client';
import { metaKeys } from '../../lambda/storage/keys';
import { getQueue, getQueueCounters, pruneExpiryBuckets } from '../../lambda/storage/queues';
import { QUIET_MS, reconcileQueue } from '../../lambda/sweeper/queues';

const tick = async (now: number) => {
  await afterIndexLag();
  return runTick(now);
};

jest.setTimeout(60_000);

const HOUR = 3600;
let server: TestServer;
let ns: TestNamespace;
let call: ReturnType<typeof client>;
let q: ReturnType<typeof queueApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('dlc');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

const queueId = async (name: string) => (await getQueue(ns.name, name))!.id;

/** The queue's count as read at `at`, its totals, and the sum of its expiry buckets (totals must equal it). */
async function counts(name: string, at: number) {
  const id = await queueId(name);
  const c = await getQueueCounters(ns.name, id, at);
  const out = await ddb().send(new QueryCommand({ TableName: tableName('meta'), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': metaKeys.queueExpiryBuckets(ns.name, id) }, ConsistentRead: true }));
  const buckets = (out.Items ?? []).reduce((s, i) => ({ count: s.count + Number(i.n ?? 0), bytes: s.bytes + Number(i.b ?? 0) }), { count: 0, bytes: 0 });
  return { count: c.message_count, bytes: c.bytes, totals: c.totals, buckets };
}

describe('held messages in the counters', () => {
  it('leaves the count once when acked after its handover, also once its expiry bucket has ended', async () => {
    const { name, topic } = await q.createOnOwnTopic({ message_ttl_seconds: 2 * HOUR });
    const t0 = Date.now();
    const { message_id } = await q.publish(topic, { payload: 'held', delay_seconds: HOUR });
    expect(await counts(name, t0)).toMatchObject({ count: 1, bytes: 4 });
    await tick(t0 + HOUR * 1000);
    const [m] = await q.consume(name, { timeout_seconds: 10 });
    expect(m.message_id).toBe(message_id);
    expect((await q.ack(name, m.message_id, m.receipt_handle)).status).toBe(200);
    expect(await counts(name, Date.now())).toMatchObject({ count: 0, bytes: 0 });
    // Past the message's TTL: its bucket has ended; nothing is counted again.
    const later = t0 + 2 * HOUR * 1000 + 120_000;
    expect(await counts(name, later)).toMatchObject({ count: 0, bytes: 0 });
    await pruneExpiryBuckets(ns.name, await queueId(name), later);
    const after = await counts(name, later);
    expect([after.count, after.totals.count, after.buckets.count]).toEqual([0, 0, 0]);
  });

  it('leaves the count when its TTL ends before it is due, and is not handed over then', async () => {
    const { name, topic } = await q.createOnOwnTopic({ message_ttl_seconds: 1200 });
    const t0 = Date.now();
    await q.publish(topic, { payload: 'too late', delay_seconds: HOUR });
    expect((await counts(name, t0)).count).toBe(1);
    expect((await counts(name, t0 + 1200_000 + 120_000)).count).toBe(0);
    await tick(t0 + HOUR * 1000);
    expect(await q.consume(name, { timeout_seconds: 1 })).toEqual([]);
    await pruneExpiryBuckets(ns.name, await queueId(name), t0 + HOUR * 1000);
    const after = await counts(name, t0 + HOUR * 1000);
    expect([after.count, after.totals.count, after.buckets.count]).toEqual([0, 0, 0]);
  });

  it('leaves the count once on cancel, its bucket with it', async () => {
    const { name, topic } = await q.createOnOwnTopic({ message_ttl_seconds: 2 * HOUR });
    const t0 = Date.now();
    const { message_id } = await q.publish(topic, { payload: 'cancel me', delay_seconds: HOUR });
    expect((await call('DELETE', `/messages/${message_id}/delivery`)).status).toBe(200);
    for (const at of [t0, t0 + 2 * HOUR * 1000 + 120_000]) {
      const c = await counts(name, at);
      expect([c.count, c.bytes, c.totals.count, c.buckets.count]).toEqual([0, 0, 0, 0]);
    }
  });

  it('is counted by the quiet-queue reconciliation, which keeps the totals equal to the buckets', async () => {
    const { name, topic } = await q.createOnOwnTopic({ message_ttl_seconds: 2 * HOUR });
    const { message_id } = await q.publish(topic, { payload: 'held', delay_seconds: HOUR });
    const queue = (await getQueue(ns.name, name))!;
    await new Promise((r) => setTimeout(r, 1500)); // SQS (and the harsh layer) may not know a queue created a second ago
    const quiet = Date.now() + QUIET_MS + 1000;
    expect(await reconcileQueue(queue, quiet)).toBe(true);
    expect((await counts(name, quiet)).count).toBe(1);
    // Cancelled, then one ordinary message: counted 1, as a consume finds.
    expect((await call('DELETE', `/messages/${message_id}/delivery`)).status).toBe(200);
    await q.publish(topic, { payload: 'now' });
    const c = await counts(name, Date.now());
    expect([c.count, c.totals.count, c.buckets.count]).toEqual([1, 1, 1]);
    expect(await q.consume(name)).toHaveLength(1);
  });
});
