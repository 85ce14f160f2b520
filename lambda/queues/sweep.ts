/**
 * Queue upkeep (DESIGN.md section 6): removes the SQS queues (and counters) of deleted queues,
 * retrying until SQS confirms, and reconciles the counters of quiet queues with SQS's own counts,
 * so messages SQS expired without anyone receiving them stop being counted within minutes.
 *
 * Requests only change counters: a queue that has had none for {@link QUIET_MS} is stable, and
 * SQS's approximate counts have settled by then (they lag about a minute). A reconciliation
 * applies only if no request changed the counters meanwhile (a condition on `changed_at`).
 * Bytes are scaled with the count (SQS does not report them).
 */
import type { PurgeJob } from '../core/storage/resources';
import type { ResourceTask, SweepStats } from '../core/sweep-task';
import { deleteQueueCounters, expiryBucketEnd, getQueueCounters, pruneExpiryBuckets, setQueueCounts, type QueueItem } from './storage/queues';
import { deleteSqsQueue, sqsQueueCounts, sqsQueueName } from './storage/service-queues';

/** A queue whose counters no request changed for this long is reconciled. */
export const QUIET_MS = 3 * 60 * 1000;
/** A reconciled queue is looked at again after this long. */
export const RECONCILE_EVERY_MS = 5 * 60 * 1000;

/**
 * Deletes a deleted queue's SQS queue (already gone counts as deleted) and its counters. The job
 * names the queue, not its kind: an ordered queue's SQS name ends with .fifo (extension), so both
 * names are deleted, one DeleteQueue more per deleted queue.
 */
async function purgeQueue(job: PurgeJob): Promise<{ done: boolean; stats: SweepStats }> {
  const deleted = (await Promise.all([deleteSqsQueue(sqsQueueName(job.id)), deleteSqsQueue(sqsQueueName(job.id, 'fifo'))])).some(Boolean);
  await deleteQueueCounters(job.namespace, job.id);
  return { done: true, stats: { sqs_queues_deleted: deleted ? 1 : 0 } };
}

/**
 * Prunes the queue's ended expiry buckets (./storage/queues.ts: the counters stop counting
 * expired messages at every read anyway; pruning keeps the totals, which enforce `max_size_mb`,
 * close to the live count), then, for a quiet queue, sets its live count to what SQS holds
 * (visible + in flight + delayed) plus what the service holds (held long-delayed messages, not in
 * SQS until their handover, live by their expiry buckets): that corrects a drift left by counter
 * updates lost or doubled under faults. The totals keep the amounts of ended buckets not yet
 * pruned, and the correction goes into the bucket a message published now would be in, in the
 * same transaction, so `totals = Σ buckets` holds on. Why this is exact: SQS's retention is the
 * TTL (counted from the send, which is at or after the publish), so every message SQS counts is
 * one whose bucket has not ended, or one it will drop within the bucket width; the held part is
 * counted by the same bucket arithmetic as the totals. A correction put in the newest bucket
 * leaves the count right now and once that bucket ends; in between, the drift it corrected can
 * show again as older buckets end, and the next reconciliation (every 5 minutes of quiet) corrects
 * it again. Bytes are scaled with SQS's count (SQS does not report them); held bytes are known.
 * A handover marks the counters changed before its SQS send (lambda/schedules/delayed.ts), so a
 * message is never read both in SQS's count and as held. The held amounts are taken as they are
 * (nothing else can tell them), so every write of them applies once (./storage/queue-held.ts). Returns whether the counts were set
 * (conditional on no request, handover or prune having changed the counters meanwhile).
 */
export async function reconcileQueue(q: QueueItem, now: number): Promise<boolean> {
  await pruneExpiryBuckets(q.namespace, q.id, now);
  const c = await getQueueCounters(q.namespace, q.id, now);
  if (now - c.changed_at < QUIET_MS || now - (c.reconciled_at ?? 0) < RECONCILE_EVERY_MS) return false;
  const sqs = await sqsQueueCounts(q.sqs_queue);
  if (!sqs) return false; // deleted meanwhile: its purge job takes it
  const inSqs = sqs.visible + sqs.inFlight + sqs.delayed;
  const held = { count: Math.max(0, c.held.count), bytes: Math.max(0, c.held.bytes) };
  const counted = { count: c.message_count - held.count, bytes: c.bytes - held.bytes };
  const sqsBytes = inSqs === 0 || counted.count <= 0 ? 0 : Math.round((counted.bytes * inSqs) / counted.count);
  const ended = { count: c.totals.count - c.message_count, bytes: c.totals.bytes - c.bytes };
  return setQueueCounts(
    q.namespace,
    q.id,
    { count: inSqs + held.count + ended.count, bytes: sqsBytes + held.bytes + ended.bytes },
    { changedAt: c.changed_at, prunedAt: c.pruned_at, totals: c.totals, bucketEnd: expiryBucketEnd(now, q.message_ttl_seconds) },
    now,
  );
}

/**
 * The queue task of the sweeper (lambda/sweeper/tasks.ts runs it): visits every live queue in turn, fairly
 * between namespaces, reconciling quiet ones (one GetItem, and for a quiet queue one
 * GetQueueAttributes and one conditional UpdateItem), and purges deleted ones.
 */
export const queuesTask: ResourceTask<QueueItem> = {
  name: 'queues',
  kind: 'QUEUE',
  visit: async (q, ctx) => ({ reconciled: (await reconcileQueue(q, ctx.now)) ? 1 : 0 }),
  purge: (job) => purgeQueue(job),
};
