/**
 * The namespace share's batch entries (lambda/webhooks/storage/webhook-share.ts): one number holds a batch's
 * start, jobs and batch flag (start × 64 + jobs × 2 + flag), and a reclaim subtracts what it reads
 * back.
 *
 * Promise (record 0019): a reclaim subtracts a crashed batch's counts exactly, and counts never
 * drift. The encoding's 5 bits of jobs are enough because "a lane's jobs in a batch are at most 10"
 * (DELIVERY_BATCH_SIZE); `admitDeliveries` itself accepts any number of jobs.
 * Scenario: a batch admits 40 jobs in a lane (more than 31) and crashes; past the stale age, an
 * admission finds the lane full and reclaims it.
 * Observed: the entry reads back as 8 jobs (40 × 2 overflows into the start), the reclaim
 * subtracts 8 (and it looks 1 s younger), and 32 deliveries stay counted with no entry left to reclaim them: the lane is
 * short of 32 for ever (the item's TTL moves with each write). Latent: the delivery function's
 * batches hold at most 10 jobs, so it cannot happen there today; a larger batch size (SQS allows
 * up to 10,000 with a batching window) would make it real.
 * Fix (record 0019): an entry holds at most 31 jobs (`MAX_ENTRY_JOBS`): an admission or read asks
 * for 31 at most and admits no more, so the 40 are admitted 31 (the other 9 wait as over the share),
 * and the reclaim subtracts those 31 exactly.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { admitDeliveries, MAX_ENTRY_JOBS } from '../../lambda/webhooks/storage/webhook-share';
import { unique } from '../fixtures/queues';

it('admits at most 31 jobs in one entry, and reclaims a crashed batch of them exactly, leaving nothing counted', async () => {
  const ns = unique('enc');
  const start = Math.floor(Date.now() / 1000);
  const crashed = { start, staleBefore: start - 120 };
  expect(await admitDeliveries(ns, crashed, 'c0c0c0c0c0c0', 40, 40, 10, 'slow')).toBe(MAX_ENTRY_JOBS);
  // Past the stale age: an admission of 20 does not fit beside the 31 (share 40), is refused, and reclaims them.
  const later = { start: start + 122, staleBefore: start + 2 };
  expect(await admitDeliveries(ns, later, 'd0d0d0d0d0d0', 20, 40, 10, 'slow')).toBe(20);
  const item = (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.webhookInFlight(ns), ConsistentRead: true }))).Item ?? {};
  expect({ slow_in_flight: item.slow_in_flight, slow_batches: item.slow_batches }).toEqual({ slow_in_flight: 20, slow_batches: 1 });
});
