/**
 * The sweeper's queue task on DynamoDB Local and fauxqs: deleting a queue answers at once and
 * its SQS queue and counters are removed in the background; a recreated queue is a new SQS queue
 * that never sees the old messages (DESIGN.md section 6).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { purgeJobKey } from '../../lambda/core/storage/resources';
import { getQueue } from '../../lambda/queues/storage/queues';
import { sqsQueueCounts } from '../../lambda/queues/storage/service-queues';
import { queuesTask } from '../../lambda/queues/sweep';
import { sweep } from '../../lambda/sweeper/tasks';

/** One sweep of the queue task alone. */
const sweepQueues = (now: number) => sweep(now, () => undefined, { tasks: [queuesTask] });

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

describe('purging deleted queues', () => {
  it("removes the old incarnation's SQS queue and counters and leaves the recreated queue's alone", async () => {
    const name = unique('reborn');
    await q.create({ name, topic_filter: `${name}/#` });
    await q.publishBatch(`${name}/t`, [{ payload: '1' }, { payload: '2' }, { payload: '3' }]);
    const old = (await getQueue(ns.name, name))!;
    await q.remove(name);
    await q.create({ name, topic_filter: `${name}/#` });
    const reborn = (await getQueue(ns.name, name))!;
    expect(reborn.sqs_queue).not.toBe(old.sqs_queue);
    await q.publish(`${name}/t`, { payload: 'new' });

    // Deleting is immediate for clients; the SQS queue stays until the sweeper removes it.
    expect(await sqsQueueCounts(old.sqs_queue)).toMatchObject({ visible: 3 });
    await sweepQueues(Date.now());
    expect(await sqsQueueCounts(old.sqs_queue)).toBeUndefined();
    const counters = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.queueCounters(ns.name, old.id), ConsistentRead: true }));
    expect(counters.Item).toBeUndefined();
    const job = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: purgeJobKey('QUEUE', old.id), ConsistentRead: true }));
    expect(job.Item).toBeUndefined();
    expect((await q.consume(name, { max_messages: 10 })).map((m) => m.payload)).toEqual(['new']);
    expect((await q.get(name)).message_count).toBe(1);
  });

  it('finishes a purge whose SQS queue is already gone', async () => {
    const name = unique('gone');
    await q.create({ name, topic_filter: `${name}/#` });
    const old = (await getQueue(ns.name, name))!;
    await q.remove(name);
    await sweepQueues(Date.now());
    // A second sweep finds nothing left to do and does not fail.
    await expect(sweepQueues(Date.now())).resolves.toMatchObject({ queues: expect.any(Object) });
    expect(await sqsQueueCounts(old.sqs_queue)).toBeUndefined();
  });
});
