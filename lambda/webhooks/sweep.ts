/**
 * Webhook upkeep: a deleted webhook's delivery counters go with it (the delete removes them at
 * once; this removes any that a delivery in flight at that moment wrote afterwards) and its purge
 * job is closed. Retries of a deleted webhook stop by themselves at their next attempt.
 *
 * A `webhooks/disabled` event whose publish failed when health disabled its webhook is
 * published here, run after run until it goes: stored in the disable's own transaction, it is
 * never lost (./endpoint-limits.ts).
 */
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../core/storage/client';
import { purgeJobKey, purgeJobs } from '../core/storage/resources';
import { deleteWebhookStatus } from './storage/webhooks';
import type { PlainTask, SweepStats } from '../core/sweep-task';
import { logger } from '../core/observability';
import { pendingDisabledEvents } from './storage/webhook-health';
import { publishDisabledEvent } from './endpoint-limits';

/** A pending event younger than this is left to the delivery that disabled its webhook (it publishes it right after). */
const EVENT_SETTLE_MS = 30_000;

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
  let events = 0;
  let eventErrors = 0;
  for (const e of await pendingDisabledEvents(now - EVENT_SETTLE_MS)) {
    try {
      await publishDisabledEvent(e);
      events++;
    } catch (err) {
      eventErrors++; // tried again at the next run
      logger.warn('webhooks/disabled event not published; the next sweep tries again', { namespace: e.namespace, webhook_id: e.webhook_id, error: (err as Error).message });
    }
  }
  return { purged, disabled_events: events, ...(eventErrors ? { disabled_event_errors: eventErrors } : {}) };
}

/** The webhook task of the sweeper (lambda/sweeper/tasks.ts runs it). */
export const webhooksTask: PlainTask = { name: 'webhooks', run: (now) => sweepWebhooks(now) };
