/**
 * A delivery job's record key, its rate slot, and the read of its record again before its POST
 * (./deliver.ts).
 */
import { isReferenceJob, jobMessageId, type DeliveryJob } from './rules/delivery';
import { readDelivery, type DeliveryKey, type DeliveryRecord } from './storage/webhook-deliveries';
import { rateVersion, type WebhookItem } from './storage/webhooks';

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
 * batch, before the gate; a job that waits for its rate slot, or whose read would be older than
 * this at its POST (slow calls), reads it again (one strongly consistent GetItem, only for such
 * jobs), so that a copy of the job that ended meanwhile is carried on from, not POSTed again.
 *
 * The guarantee, for a copy of the job that ended (2xx recorded) while this one went on: the job
 * does not POST if that end was recorded before the record read it goes on started. That read
 * answered at most this long before its POST for a job that does not wait; for one that waits
 * for its slot, it started the gate's read lead (100 ms to 3 s, as long as the container's recent
 * reads took: ./rate-slot.ts) before the slot, and the POST goes at most half a slot after it with
 * no call in between. When storage answered so slowly that the job missed its slot, it goes at
 * the next free slot on that read if the slot is near (at most 1.5 s and the lead later), else it
 * reads again before that slot. A copy that ended within that window is POSTed again, which
 * at-least-once delivery allows (SQS standard queues: docs/webhooks.md).
 */
const FRESH_RECORD_MS = 1000;

/**
 * The gate's `beforePost` (./endpoint-limits.ts): the record as it is now, if the job waits for
 * its slot (`postAt` ahead) or its read at `readAt` would be too old at `postAt`, and the record
 * shows an end (or the workflow's); with `load`, the job's message loaded meanwhile.
 */
export async function readAgainBeforePost(job: DeliveryJob, postAt: number, readAt: number, load?: () => Promise<unknown>): Promise<DeliveryRecord | undefined> {
  const again = postAt > Date.now() || postAt - readAt > FRESH_RECORD_MS;
  const [rec] = await Promise.all([again ? readDelivery(keyOf(job)) : undefined, load?.()]);
  return rec ?? undefined;
}

/** A promise's function made once, on its first call (a job's message, loaded with its reads). */
export function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

/**
 * The job carrying the rate slot it reserved and the version of the webhook's rate it reserved
 * it under (extension: delivery limits, ./storage/webhooks.ts `rateVersion`), or without one.
 */
export function withSlot(job: DeliveryJob, at: number | undefined, w?: Pick<WebhookItem, 'updated_at' | 'rate_of'>, lease?: string): DeliveryJob {
  const { rate_slot_at: _, rate_slot_of: __, place_lease: ___, ...plain } = job;
  const slotted = at === undefined || !w ? plain : { ...plain, rate_slot_at: at, rate_slot_of: rateVersion(w) };
  // The in-flight place it keeps while it waits for its slot (./endpoint-limits.ts, both limits).
  return (lease ? { ...slotted, place_lease: lease } : slotted) as DeliveryJob;
}
