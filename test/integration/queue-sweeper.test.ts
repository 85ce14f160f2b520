/**
 * The sweeper's queue task against DynamoDB Local, called directly with a chosen `now`: it removes
 * expired messages and keeps message_count right, and purges the messages of deleted queues
 * (DESIGN.md section 6). Only this file runs the sweeper, so the item counts below are its work.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { ddb, tableName } from '../../lambda/storage/client';
import { purgeJobKey } from '../../lambda/storage/resources';
import { getQueue } from '../../lambda/storage/queues';
import { sweepQueues } from '../../lambda/sweeper/queues';

jest.setTimeout(30_000);

let server: TestServer;
let ns: TestNamespace;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('sw');
  q = queueApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/** Message items stored under a queue id, read straight from the table. */
async function storedItems(queueId: string): Promise<number> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('queueMessages'),
      KeyConditionExpression: 'queue_id = :q',
      ExpressionAttributeValues: { ':q': queueId },
      Select: 'COUNT',
      ConsistentRead: true,
    }),
  );
  return out.Count ?? 0;
}

const idOf = async (name: string) => (await getQueue(ns.name, name))!.id;

describe('sweeping expired messages', () => {
  it('removes messages past message_ttl_seconds and lowers message_count, leaving live ones', async () => {
    const short = unique('short');
    const long = unique('long');
    await q.create({ name: short, topic_filter: `${short}/#`, message_ttl_seconds: 1 });
    await q.create({ name: long, topic_filter: `${long}/#` });
    await q.publishBatch(`${short}/t`, [{ payload: 'a' }, { payload: 'b' }]);
    await q.publish(`${long}/t`);
    const [shortId, longId] = [await idOf(short), await idOf(long)];

    // Before the TTL ends the sweeper leaves them alone.
    await sweepQueues(Date.now());
    expect(await storedItems(shortId)).toBe(2);

    const stats = await sweepQueues(Date.now() + 2000);
    expect(stats.expired).toBeGreaterThanOrEqual(2);
    expect(await storedItems(shortId)).toBe(0);
    expect((await q.get(short)).message_count).toBe(0);
    expect(await storedItems(longId)).toBe(1);
    expect((await q.get(long)).message_count).toBe(1);
  });
});

describe('purging deleted queues', () => {
  it("purges the old incarnation's messages and leaves the recreated queue's alone", async () => {
    const name = unique('reborn');
    await q.create({ name, topic_filter: `${name}/#` });
    await q.publishBatch(`${name}/t`, [{ payload: '1' }, { payload: '2' }, { payload: '3' }]);
    const oldId = await idOf(name);
    await q.remove(name);
    await q.create({ name, topic_filter: `${name}/#` });
    const newId = await idOf(name);
    await q.publish(`${name}/t`, { payload: 'new' });

    // Deleting is immediate for clients; the items stay until the sweeper purges them.
    expect(await storedItems(oldId)).toBe(3);
    await sweepQueues(Date.now());
    expect(await storedItems(oldId)).toBe(0);
    expect(await storedItems(newId)).toBe(1);
    const job = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: purgeJobKey('QUEUE', oldId) }));
    expect(job.Item).toBeUndefined();
    expect((await q.consume(name, { max_messages: 10 })).map((m) => m.payload)).toEqual(['new']);
  });
});
