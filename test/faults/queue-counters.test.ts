/**
 * Reading a queue's counters (lambda/queues/storage/queues.ts `getQueueCounters`): the live count is the
 * totals less the ended expiry buckets, so both must be read as of one state of the queue, and
 * every ended bucket must be read, however many there are.
 */
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unique } from '../fixtures/queues';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { getQueue, getQueueCounters, pruneExpiryBuckets } from '../../lambda/queues/storage/queues';
import { placedFaults } from './placed';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'fault-counters', seed: 9, services: ['dynamodb'] });

async function newQueue(ttl: number) {
  const name = unique('q');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#`, message_ttl_seconds: ttl })).status).toBe(201);
  return (await getQueue(t.namespace, name))!;
}

describe('queue counters', () => {
  it('never subtracts an ended bucket twice when a prune lands between the reads', async () => {
    const q = await newQueue(1);
    expect((await t.api.call('POST', `/topics/${q.name}/t/messages`, { payload: 'abc' })).status).toBe(201);
    const later = Date.now() + 10_000; // the message's bucket has ended
    // The counters item is read late; a prune commits meanwhile.
    t.injector.failNext({ service: 'dynamodb', command: 'GetItemCommand', timing: 'before', attempts: 0, delayMs: 600, matches: (input) => JSON.stringify(input).includes('#COUNTERS') && JSON.stringify(input).includes(q.id) });
    const read = getQueueCounters(t.namespace, q.id, later);
    await new Promise((r) => setTimeout(r, 200));
    expect(await pruneExpiryBuckets(t.namespace, q.id, later)).toBe(1);
    const c = await read;
    expect(t.injector.unused).toBe(0);
    expect([c.message_count, c.bytes]).toEqual([0, 0]);
  });

  it('reads every ended bucket, beyond one page of 1,000', async () => {
    const q = await newQueue(60);
    const now = Date.now();
    const ends = Array.from({ length: 1001 }, (_, i) => now - 2_000_000 + i * 1000);
    for (let i = 0; i < ends.length; i += 25) {
      await ddb().send(
        new BatchWriteCommand({
          RequestItems: { [tableName('meta')]: ends.slice(i, i + 25).map((end) => ({ PutRequest: { Item: { ...metaKeys.queueExpiryBucket(t.namespace, q.id, end), n: 1, b: 2 } } })) },
        }),
      );
    }
    // The totals hold those 1,001 expired messages, as they would before a prune.
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.queueCounters(t.namespace, q.id),
        UpdateExpression: 'SET message_count = :n, #b = :b',
        ExpressionAttributeNames: { '#b': 'bytes' },
        ExpressionAttributeValues: { ':n': 1001, ':b': 2002 },
      }),
    );
    const c = await getQueueCounters(t.namespace, q.id, now);
    expect([c.message_count, c.bytes]).toEqual([0, 0]);
  });
});
