/**
 * A retry held back by its webhook's limits or open circuit, after the workflow waited out its
 * backoff: the workflow's Attempt task hands it to the delivery queue as a job carrying its
 * attempt count (`retry`), and the execution ends (the ASL's `Queued`). From there it takes the
 * path of every first attempt (./deliver.ts `deliverFirst`): the same gate, parked with the others
 * while the circuit is open and released oldest first by the probe's success, or back on the queue
 * at its rate slot or in-flight place. It keeps its count, so its last failure ends the delivery
 * (counted, `on_failure`, a copy kept for replay) and a failure with retries left starts the next
 * execution. Before, the execution looped (a Choice, Wait, Attempt, Decide) once per probe gap
 * or limit wait: billed transitions without bound, and a Standard execution fails at 25,000 history
 * events (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html).
 *
 * Once: the record notes the hand-off first (`queued`, storage/webhook-deliveries.ts
 * `handRetry`), then the job is sent. Only a job whose count matches the note attempts
 * (`isQueuedRetry`); its attempt moves the note on (`advanceRetry`) or ends the record, so a copy
 * SQS hands out later reads that and does not POST. A Task repeated after the note (Step Functions
 * retries a Task whose Lambda failed) sends the job again rather than attempt: a copy at worst,
 * handled as SQS copies are (docs/design/0017-webhook-delivery-once.md).
 */
import { deferJobs } from '../adapters/delivery-queue';
import type { DeliveryJob, RetryState } from '../domain/delivery';
import { sqsJson } from '../domain/queue-messages';
import { handRetry, readDelivery, recordRetrying, type DeliveryRecord, type RecordFrom } from '../storage/webhook-deliveries';
import type { WebhookItem } from '../storage/webhooks';
import { keyOf, withSlot } from './delivery-key';
import { park } from './parking';

/** Whether `rec` is the record of the queued retry `job` carries: then that job makes the next attempt. */
export const isQueuedRetry = (job: DeliveryJob, rec: DeliveryRecord | undefined): boolean =>
  job.retry !== undefined && rec?.outcome === 'retrying' && rec.queued === job.retry.attempts;

/** Whether the record says this execution's retry was handed to the queue already (a repeated Task). */
export const handedAlready = (state: RetryState, rec: DeliveryRecord | undefined): boolean =>
  rec?.outcome === 'retrying' && rec.queued === state.attempts;

/** The job of the state's next attempt, as the queue carries it. */
const retryJob = (state: RetryState): DeliveryJob => ({ ...withSlot(state.job, undefined), retry: { attempts: state.attempts, last_error: state.last_error } });

/** How the gate held the attempt back. */
interface Held {
  reason: 'rate_limit' | 'max_in_flight' | 'circuit';
  waitSeconds: number;
  rateSlotAt?: number;
  probeAt?: number;
}

/**
 * Hands the state's next attempt to the delivery queue (parked at once when the circuit holds it:
 * it would be parked on arrival). Returns `handed`, or the record of a delivery that ended
 * meanwhile (the caller carries on from it). `held` undefined: a repeated Task, which sends the
 * job for the gate to place.
 */
export async function handToQueue(state: RetryState, w: WebhookItem, held: Held | undefined, from: RecordFrom): Promise<'handed' | DeliveryRecord> {
  const key = keyOf(state.job);
  // No record (its write after the workflow's start failed): written now, as the start would have.
  if (from === 'none') await recordRetrying(key, { nextRetry: Date.now(), error: state.last_error, now: Date.now() });
  if (!(await handRetry(key, state.attempts))) {
    const rec = await readDelivery(key);
    if (rec && rec.outcome !== 'retrying') return rec;
    throw new Error(`the retry of delivery ${key.messageId} to webhook ${state.job.webhook_name} was not handed to the queue: its record is missing`);
  }
  const job = retryJob(state);
  if (held?.reason === 'circuit') await park(job, w, held.probeAt ?? Date.now() + held.waitSeconds * 1000);
  else if (held) await deferJobs([sqsJson(withSlot(job, held.rateSlotAt, w.updated_at))], held.waitSeconds);
  else await deferJobs([sqsJson(job)], 0);
  return 'handed';
}
