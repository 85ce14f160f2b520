/**
 * Counter reconciliation (lambda/queues/sweep.ts) on DynamoDB Local and fauxqs: a quiet queue's
 * counters are set to SQS's own counts, so messages that left SQS without the service knowing
 * (in AWS: expired by retention before anyone received them) stop being counted.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { getQueue, getQueueCounters, setQueueCounts } from '../../lambda/queues/storage/queues';
import { deleteFromSqsQueue, receiveFromSqsQueue } from '../../lambda/queues/storage/service-queues';
import { QUIET_MS, reconcileQueue } from '../../lambda/queues/sweep';

let server: TestServer;
let ns: TestNamespace;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('rec');
});
afterAll(() => server.close());

async function queueWithMessages(name: string, n: number) {
  const api = client(server.baseUrl, ns.key);
  expect((await api('POST', '/queues', { name, topic_filter: `rec/${name}` })).status).toBe(201);
  for (let i = 0; i < n; i++) expect((await api('POST', `/topics/rec/${name}/messages`, { payload: 'abcd' })).status).toBe(201);
  return (await getQueue(ns.name, name))!;
}

/** Sets the counters as if they had drifted, last changed `ageMs` ago. */
async function drift(queueId: string, count: number, bytes: number, ageMs: number) {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: metaKeys.queueCounters(ns.name, queueId),
      UpdateExpression: 'SET message_count = :n, #b = :b, changed_at = :t',
      ExpressionAttributeNames: { '#b': 'bytes' },
      ExpressionAttributeValues: { ':n': count, ':b': bytes, ':t': Date.now() - ageMs },
    }),
  );
}

describe('counter reconciliation', () => {
  it("sets a quiet queue's drifted count to SQS's and scales its bytes", async () => {
    const q = await queueWithMessages('drifted', 3);
    await drift(q.id, 6, 24, QUIET_MS + 1000);
    expect(await reconcileQueue(q, Date.now())).toBe(true);
    const after = await getQueueCounters(ns.name, q.id);
    expect([after.message_count, after.bytes]).toEqual([3, 12]);
    expect((await client(server.baseUrl, ns.key)('GET', '/queues/drifted')).body.data.message_count).toBe(3);
  });

  it('stops counting messages that left SQS without the service knowing', async () => {
    const q = await queueWithMessages('vanished', 2);
    // Like SQS expiring them by retention: gone from SQS, still in the counters.
    const got = await receiveFromSqsQueue(q.sqs_queue, { max: 10, waitSeconds: 0, visibilitySeconds: 60 });
    expect(got).toHaveLength(2);
    await deleteFromSqsQueue(q.sqs_queue, got.map((m) => m.handle));
    await drift(q.id, 2, 8, QUIET_MS + 1000);
    expect(await reconcileQueue(q, Date.now())).toBe(true);
    expect(await getQueueCounters(ns.name, q.id)).toMatchObject({ message_count: 0, bytes: 0 });
  });

  it('leaves a queue alone while requests still change its counters', async () => {
    const q = await queueWithMessages('busy', 2);
    await drift(q.id, 9, 36, 1000);
    expect(await reconcileQueue(q, Date.now())).toBe(false);
    expect((await getQueueCounters(ns.name, q.id)).message_count).toBe(9);
  });

  it('does not apply a count when a request changed the counters after they were read', async () => {
    const q = await queueWithMessages('raced', 2);
    const seen = (await getQueueCounters(ns.name, q.id)).changed_at;
    expect((await client(server.baseUrl, ns.key)('POST', '/topics/rec/raced/messages', { payload: 'x' })).status).toBe(201);
    expect(await setQueueCounts(ns.name, q.id, { count: 0, bytes: 0 }, { changedAt: seen }, Date.now())).toBe(false);
    expect((await getQueueCounters(ns.name, q.id)).message_count).toBe(3);
  });
});
