/**
 * Subscription upkeep as a resource task (../sweeper/tasks.ts): each visit settles dead reservations and
 * trims messages older than `message_ttl_seconds` and the oldest beyond `max_size_mb` (moving the
 * oldest retained sequence number; DynamoDB TTL reclaims the chunks), and each purge visit removes
 * part of a deleted subscription's log and cursors (../logs/sweep.ts).
 */
import type { SubscriptionItem } from './storage/subscriptions';
import { purgeLog, visitLog, type LogSpec } from '../logs/sweep';
import type { ResourceTask, SweepContext } from '../core/sweep-task';

const MIB = 1024 ** 2;

const SUBSCRIPTION_LOG: LogSpec<SubscriptionItem> = {
  kind: 'SUBSCRIPTION',
  table: 'subscriptionLog',
  logKey: (id) => id,
  partitionsFrom: (head, from) => (head.next > from ? [0] : []),
  retentionMs: (s) => s.message_ttl_seconds * 1000,
  maxBytes: (s) => s.max_size_mb * MIB,
};

/** One visit of one subscription (tests call it with a later clock). */
export const sweepSubscription = (s: SubscriptionItem, ctx: Pick<SweepContext, 'now'>, walkLimit?: number) => visitLog(s, SUBSCRIPTION_LOG, ctx, walkLimit);

export const subscriptionsTask: ResourceTask<SubscriptionItem> = {
  name: 'subscriptions',
  kind: 'SUBSCRIPTION',
  visit: (s, ctx) => sweepSubscription(s, ctx),
  purge: (job, ctx) => purgeLog(job, SUBSCRIPTION_LOG, ctx),
};
