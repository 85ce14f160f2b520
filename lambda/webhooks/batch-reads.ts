/**
 * What a delivery batch reads before its first attempts, read once per batch instead of once per
 * job (price):
 *
 * - the delivery records of the batch's jobs, with one strongly consistent BatchGetItem (the same
 *   1 read unit per record as a GetItem, one call instead of one per job);
 * - each webhook the batch's jobs go to, once per webhook and batch (a strongly consistent
 *   GetItem, its secrets unsealed once), instead of once per job: about 1 read unit per job less
 *   at ten jobs of one webhook a batch.
 *
 * Staleness: every job of a batch starts at the batch's start, so reading at the batch's start is
 * what each job read before; a `PUT`, `PATCH`, disable or delete is seen by the next batch, as it
 * was. Nothing outlives its batch (no container cache).
 *
 * If the batch read fails, each job reads its own record (as before), so a storage fault costs
 * calls, never a POST without the record read.
 */
import type { JobTarget } from './rules/delivery';
import { deliveryRecordId, readDeliveries, readDelivery, type DeliveryKey, type DeliveryRecord } from './storage/webhook-deliveries';
import { getWebhook, type WebhookItem } from './storage/webhooks';
import { logger } from '../core/observability';

export interface DeliveryReads {
  /** The delivery's record, as it was when the batch started (strongly consistent). */
  record(k: DeliveryKey): Promise<DeliveryRecord | undefined>;
  /** The job's webhook if it still exists as the same incarnation; deleted or recreated: undefined. */
  liveWebhook(job: JobTarget): Promise<WebhookItem | undefined>;
}

const live = (job: JobTarget) => (w: WebhookItem | undefined) => (w && w.id === job.webhook_id ? w : undefined);

/** Reads per job, as a single job (a Task, a tool) needs them. */
export const readsPerJob: DeliveryReads = {
  record: readDelivery,
  liveWebhook: (job) => getWebhook(job.namespace, job.webhook_name).then(live(job)),
};

/**
 * The reads of one batch: the records of `keys` are read at once, now; each webhook is read when
 * a job first asks for it, or now for the webhooks of `targets` (beside the records, so the
 * batch's first POST waits for one round trip for both: Lambda bills the handler's duration,
 * https://aws.amazon.com/lambda/pricing/), and shared by the batch's other jobs.
 */
export function batchReads(keys: DeliveryKey[], targets: JobTarget[] = []): DeliveryReads {
  const records = readDeliveries(keys).catch((e: unknown) => {
    logger.warn('webhook delivery records not read as a batch; each job reads its own', { error: (e as Error).message, jobs: keys.length });
    return undefined;
  });
  const webhooks = new Map<string, Promise<WebhookItem | undefined>>();
  const read = (job: JobTarget) => {
    const id = `${job.namespace}\n${job.webhook_name}`;
    let w = webhooks.get(id);
    if (!w) {
      w = getWebhook(job.namespace, job.webhook_name);
      // A failed read is not kept: the next job of the webhook reads again.
      w.catch(() => webhooks.delete(id));
      webhooks.set(id, w);
    }
    return w;
  };
  for (const t of targets) read(t);
  return {
    async record(k) {
      const all = await records;
      return all ? all.get(deliveryRecordId(k)) : readDelivery(k);
    },
    liveWebhook(job) {
      return read(job).then(live(job));
    },
  };
}
