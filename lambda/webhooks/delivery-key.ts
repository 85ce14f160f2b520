/**
 * A delivery job's record key, its rate slot, and the read of its record again after a wait
 * (./deliver.ts).
 */
import { isReferenceJob, jobMessageId, type DeliveryJob } from '../domain/delivery';
import { readDelivery, type DeliveryKey, type DeliveryRecord } from '../storage/webhook-deliveries';

// A replay (extension) is a delivery of its own (its own record and counts), and never releases
// the stored copy of the original delivery's message: it reads the replay's own copy.
export const keyOf = (job: DeliveryJob): DeliveryKey => ({
  namespace: job.namespace,
  webhookId: job.webhook_id,
  messageId: jobMessageId(job),
  stored: isReferenceJob(job) && !job.replay_id,
  ...(job.replay_id ? { replayId: job.replay_id } : {}),
});

/**
 * How old the read of a delivery record may be when its POST starts. The record is read once per
 * batch, before the gate; a job that waited at the gate for its rate slot (under 1.5 s),
 * or whose storage calls were slow, reads it again (one strongly consistent GetItem, only for such
 * jobs), so a copy of the job that ended meanwhile is carried on from, not POSTed again.
 */
const FRESH_RECORD_MS = 1000;

/** The record as it is now, if the job waited since `readAt` and the record shows an end (or the workflow's). */
export async function readAgainAfterWait(job: DeliveryJob, waited: boolean, readAt: number): Promise<DeliveryRecord | undefined> {
  if (!waited && Date.now() - readAt <= FRESH_RECORD_MS) return undefined;
  return (await readDelivery(keyOf(job))) ?? undefined;
}

/**
 * The job carrying the rate slot it reserved and the webhook version (`updated_at`) it reserved
 * it under (extension: delivery limits), or without one.
 */
export function withSlot(job: DeliveryJob, at: number | undefined, of?: number): DeliveryJob {
  const { rate_slot_at: _, rate_slot_of: __, ...plain } = job;
  return (at === undefined ? plain : { ...plain, rate_slot_at: at, rate_slot_of: of }) as DeliveryJob;
}
