/**
 * Webhook upkeep: a deleted webhook's delivery counters go with it (the delete removes them at
 * once; this removes any that a delivery in flight at that moment wrote afterwards) and its purge
 * job is closed. Retries of a deleted webhook stop by themselves at their next attempt.
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../storage/client';
import { purgeJobKey, purgeJobs } from '../storage/resources';
import { deleteWebhookStatus } from '../storage/webhooks';
import type { SweepStats } from './tasks';

/** A delivery attempt lasts at most 30 s (the largest timeout); later ones see the webhook gone. */
const SETTLE_MS = 2 * 60 * 1000;

export async function sweepWebhooks(now: number): Promise<SweepStats> {
  let purged = 0;
  for (const job of await purgeJobs('WEBHOOK')) {
    if (now - job.deleted_at < SETTLE_MS) continue;
    await deleteWebhookStatus(job.namespace, job.id);
    await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: purgeJobKey('WEBHOOK', job.id) }));
    purged++;
  }
  return { purged };
}
