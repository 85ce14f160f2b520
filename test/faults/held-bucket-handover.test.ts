/**
 * A held message's handover ends its held part in the queue's totals and in its expiry bucket in
 * one transaction (lambda/queues/storage/queue-held.ts), so a failure leaves both for the retry after the
 * claim expires: the counts stay exact once its TTL has ended, before and after the prune. Found
 * in review, seen failing: the bucket's write was separate and a failure of it only logged, so
 * after the TTL the queue read held -1 (and held bytes -4) for good.
 */
import { afterIndexLag } from '../fixtures/harsh-waits';
import { tick } from '../../lambda/schedules/tick';
import { getQueue, getQueueCounters, pruneExpiryBuckets, type QueueItem } from '../../lambda/queues/storage/queues';
import { sqsQueueCounts } from '../../lambda/queues/storage/service-queues';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';

jest.setTimeout(90_000);

const t = placedFaults({ namespace: 'held-bucket-handover', seed: 41, services: ['dynamodb', 'sqs'] });

afterEach(() => t.injector.clearOneShots());

it("a held message's handover whose held-part write fails ends it at the retry, totals and bucket, so the counts stay exact after its TTL", async () => {
  const name = unique('hb');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#`, message_ttl_seconds: 1200 })).status).toBe(201);
  const queue = (await getQueue(t.namespace, name)) as QueueItem;
  const t0 = Date.now();
  expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 1000 })).status).toBe(201);
  await afterIndexLag();
  // The handover's write of the bucket's held part (hn -1) fails every attempt of every call.
  const matches = (input: Record<string, unknown>) => {
    const s = JSON.stringify(input);
    return s.includes(queue.id) && /#EXP.*hn :hn|hn :hn.*#EXP/.test(s);
  };
  for (const command of ['UpdateItemCommand', 'TransactWriteItemsCommand'])
    for (let i = 0; i < 5; i++) t.injector.failNext({ service: 'dynamodb', command, matches, kind: { code: 'InternalServerError', status: 500 }, timing: 'before', attempts: Number.POSITIVE_INFINITY });
  const at = t0 + 200_000;
  await tick(at).catch(() => undefined);
  t.injector.clearOneShots();
  const c = (await sqsQueueCounts(queue.sqs_queue))!;
  expect(c.visible + c.inFlight + c.delayed).toBe(1);
  expect((await getQueueCounters(t.namespace, queue.id, at)).message_count).toBe(1);
  // The retry after the claim expires ends the held part (totals and bucket), sending nothing.
  await tick(at + 300_000).catch(() => undefined);
  const c2 = (await sqsQueueCounts(queue.sqs_queue))!;
  expect(c2.visible + c2.inFlight + c2.delayed).toBe(1);
  const now = await getQueueCounters(t.namespace, queue.id, at + 300_000);
  expect({ count: now.message_count, held: now.held.count }).toEqual({ count: 1, held: 0 });
  // Past the message's TTL (and its bucket's end), before and after the sweeper's prune.
  const later = t0 + 1200_000 + 120_000;
  const seen: unknown[] = [];
  for (const prune of [false, true]) {
    if (prune) await pruneExpiryBuckets(t.namespace, queue.id, later);
    const after = await getQueueCounters(t.namespace, queue.id, later);
    seen.push({ prune, count: after.message_count, held: after.held.count, heldBytes: after.held.bytes, bytes: after.bytes });
  }
  expect(seen).toEqual([
    { prune: false, count: 0, held: 0, heldBytes: 0, bytes: 0 },
    { prune: true, count: 0, held: 0, heldBytes: 0, bytes: 0 },
  ]);
});
