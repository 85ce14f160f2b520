/**
 * Queue upkeep: removes expired messages (through the expiry index, reading only what it
 * deletes), purges the messages of deleted queues, and reconciles each queue's counters with a
 * recount every ten minutes (the counters are maintained per request; a crash between a message
 * write and its counter update would otherwise leave them off for good).
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../storage/client';
import { allOfKind, purgeJobKey, purgeJobs } from '../storage/resources';
import { getQueue, releaseQueueRoom, setQueueCounters, type QueueItem } from '../storage/queues';
import { countMessages, expiredMessages, oldestMessageAt, purgeMessages, removeExpired } from '../storage/queue-messages';

const EXPIRED_PER_QUEUE_PER_RUN = 500;
const PURGE_PER_JOB_PER_RUN = 2000;
export const RECONCILE_EVERY_MS = 10 * 60 * 1000;

async function expireQueue(q: QueueItem, now: number): Promise<number> {
  const expired = await expiredMessages(q.id, now, EXPIRED_PER_QUEUE_PER_RUN);
  let removed = 0;
  let bytes = 0;
  for (const m of expired) {
    if (await removeExpired(m)) {
      removed++;
      bytes += m.size;
    }
  }
  if (removed) await releaseQueueRoom(q.namespace, q.name, q.id, removed, bytes);
  return removed;
}

async function purgeDeleted(): Promise<number> {
  let purged = 0;
  for (const job of await purgeJobs('QUEUE')) {
    let n: number;
    let total = 0;
    do {
      n = await purgeMessages(job.id, 500);
      total += n;
    } while (n > 0 && total < PURGE_PER_JOB_PER_RUN);
    purged += total;
    if (n === 0) await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: purgeJobKey('QUEUE', job.id) }));
  }
  return purged;
}

/**
 * Recounts a queue's messages and sets its counters to the count, unless they changed while it
 * counted (see setQueueCounters). Returns whether the counters were set.
 */
export async function reconcileQueue(q: QueueItem, now: number): Promise<boolean> {
  // The counters as they are before the count (strongly consistent).
  const before = await getQueue(q.namespace, q.name);
  if (before?.id !== q.id) return false;
  const counted = await countMessages(q.id);
  return setQueueCounters(q.namespace, q.name, q.id, counted, { count: before.message_count ?? 0, bytes: before.bytes ?? 0 }, now);
}

export async function sweepQueues(now: number) {
  const queues = await allOfKind<QueueItem>('QUEUE');
  let expired = 0;
  let reconciled = 0;
  // For the dashboard (QueueDepth, QueueOldestMessageAgeSeconds): totals over all queues, since a
  // per-queue metric would grow with the number of queues. Only non-empty queues cost a read.
  let depth = 0;
  let oldest = now;
  for (const q of queues) {
    expired += await expireQueue(q, now);
    const count = Math.max(0, q.message_count ?? 0);
    depth += count;
    if (count > 0) oldest = Math.min(oldest, (await oldestMessageAt(q.id)) ?? now);
    const last = (q as QueueItem & { reconciled_at?: number }).reconciled_at ?? q.created_at;
    if (now - last >= RECONCILE_EVERY_MS) {
      if (await reconcileQueue(q, now)) reconciled++;
    }
  }
  return { queues: queues.length, expired, purged: await purgeDeleted(), reconciled, depth, oldest_age_seconds: Math.max(0, Math.floor((now - oldest) / 1000)) };
}
