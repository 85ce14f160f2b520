/**
 * Subscription upkeep: removes messages older than `message_ttl_seconds` and the oldest beyond
 * `max_size_mb` (moving the oldest retained sequence number), and purges the log and cursors of
 * deleted subscriptions.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../storage/client';
import { allOfKind, purgeJobKey, purgeJobs } from '../storage/resources';
import { purgeCursors, type SubscriptionItem } from '../storage/subscriptions';
import { deleteSubscriptionItems, purgeSubscriptionLog, readSubscriptionLog } from '../storage/subscription-log';
import { trimLog } from './logs';

const MIB = 1024 ** 2;
const PURGE_PER_RUN = 5000;

/** Trims one subscription; returns how many messages it removed. */
export function trimSubscription(s: SubscriptionItem, now: number): Promise<number> {
  return trimLog(
    {
      item: s,
      earliest: s.earliest_seq,
      next: s.next_seq,
      cutoff: now - s.message_ttl_seconds * 1000,
      maxBytes: s.max_size_mb * MIB,
      read: async (from, to, max) =>
        (await readSubscriptionLog(s.id, from, to, max, true)).map((m) => ({ position: m.seq, published_at: m.published_at, size: m.size })),
      remove: (seqs) => deleteSubscriptionItems(s.id, seqs),
    },
    now,
  );
}

async function purgeDeletedSubscriptions(): Promise<number> {
  let purged = 0;
  for (const job of await purgeJobs('SUBSCRIPTION')) {
    const id = job.id;
    let n: number;
    do {
      n = await purgeSubscriptionLog(id, 500);
      purged += n;
    } while (n > 0 && purged < PURGE_PER_RUN);
    if (n === 0) {
      purged += await purgeCursors(job.namespace as string, id);
      await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: purgeJobKey('SUBSCRIPTION', id) }));
    }
  }
  return purged;
}

export async function sweepSubscriptions(now: number) {
  const subs = await allOfKind<SubscriptionItem>('SUBSCRIPTION');
  let trimmed = 0;
  for (const s of subs) trimmed += await trimSubscription(s, now);
  return { subscriptions: subs.length, trimmed, purged: await purgeDeletedSubscriptions() };
}
