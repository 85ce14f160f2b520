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
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../storage/client';
import { allOfKind, purgeJobKey, purgeJobs } from '../storage/resources';
import { deleteQueueCounters, getQueueCounters, setQueueCounts, type QueueItem } from '../storage/queues';
import { deleteSqsQueue, sqsQueueCounts, sqsQueueName } from '../adapters/service-queues';

/** A queue whose counters no request changed for this long is reconciled. */
export const QUIET_MS = 3 * 60 * 1000;
/** A reconciled queue is looked at again after this long. */
export const RECONCILE_EVERY_MS = 5 * 60 * 1000;

/** Deletes the SQS queues and counters of deleted queues; returns how many purge jobs finished. */
async function purgeDeleted(): Promise<number> {
  let done = 0;
  for (const job of await purgeJobs('QUEUE')) {
    await deleteSqsQueue(sqsQueueName(job.id)); // false: already gone, which is done too
    await deleteQueueCounters(job.namespace, job.id);
    await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: purgeJobKey('QUEUE', job.id) }));
    done++;
  }
  return done;
}

/**
 * Sets a quiet queue's counts to SQS's (visible + in flight + delayed). Returns whether the
 * counts were set (conditional on no request having changed the counters meanwhile).
 */
export async function reconcileQueue(q: QueueItem, now: number): Promise<boolean> {
  const c = await getQueueCounters(q.namespace, q.id);
  if (now - c.changed_at < QUIET_MS || now - (c.reconciled_at ?? 0) < RECONCILE_EVERY_MS) return false;
  const sqs = await sqsQueueCounts(q.sqs_queue);
  if (!sqs) return false; // deleted meanwhile: its purge job takes it
  const count = sqs.visible + sqs.inFlight + sqs.delayed;
  const bytes = count === 0 || c.message_count <= 0 ? 0 : Math.round((c.bytes * count) / c.message_count);
  return setQueueCounts(q.namespace, q.id, { count, bytes }, c.changed_at, now);
}

export async function sweepQueues(now: number) {
  const queues = await allOfKind<QueueItem>('QUEUE');
  let reconciled = 0;
  for (const q of queues) if (await reconcileQueue(q, now)) reconciled++;
  return { queues: queues.length, purged: await purgeDeleted(), reconciled };
}
