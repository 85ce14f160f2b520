import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { ddb, tableName } from '../../lambda/storage/client';
import { metaKeys } from '../../lambda/storage/keys';
import { getQueue, setQueueCounters } from '../../lambda/storage/queues';
import { reconcileQueue } from '../../lambda/sweeper/queues';

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

async function corrupt(name: string, count: number, bytes: number) {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: metaKeys.resource(ns.name, 'QUEUE', name),
      UpdateExpression: 'SET message_count = :n, #b = :b',
      ExpressionAttributeNames: { '#b': 'bytes' },
      ExpressionAttributeValues: { ':n': count, ':b': bytes },
    }),
  );
}

describe('counter reconciliation', () => {
  it('sets drifted counters back to the recounted messages and bytes', async () => {
    const q = await queueWithMessages('drifted', 3);
    await corrupt('drifted', 42, 9999);
    expect(await reconcileQueue(q, Date.now())).toBe(true);
    const after = await getQueue(ns.name, 'drifted');
    expect([after?.message_count, after?.bytes]).toEqual([3, 12]);
    const got = await client(server.baseUrl, ns.key)('GET', '/queues/drifted');
    expect(got.body.data.message_count).toBe(3);
  });

  it('leaves counters that changed during the count alone', async () => {
    const q = await queueWithMessages('busy', 2);
    // The counters moved on (e.g. a publish reserved room) after the sweeper read them.
    const applied = await setQueueCounters(ns.name, 'busy', q.id, { count: 0, bytes: 0 }, { count: 7, bytes: 70 }, Date.now());
    expect(applied).toBe(false);
    expect((await getQueue(ns.name, 'busy'))?.message_count).toBe(2);
  });

  it('does not recount a queue that was deleted and recreated meanwhile', async () => {
    const q = await queueWithMessages('reborn', 1);
    const api = client(server.baseUrl, ns.key);
    expect((await api('DELETE', '/queues/reborn')).status).toBe(200);
    expect((await api('POST', '/queues', { name: 'reborn', topic_filter: 'rec/reborn' })).status).toBe(201);
    expect(await reconcileQueue(q, Date.now())).toBe(false);
    expect((await getQueue(ns.name, 'reborn'))?.message_count).toBe(0);
  });
});
