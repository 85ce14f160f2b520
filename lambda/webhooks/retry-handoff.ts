/**
 * A retry of a delivery, made by the delivery function like a first attempt. The attempt that
 * failed with retries left notes the hand-off in the delivery record (`queued`, its attempt
 * count: storage/webhook-deliveries.ts `recordRetrying` / `advanceRetry`) and starts the retry
 * workflow (lambda/workflows/webhook-retry.asl.json) with the retry job; the workflow waits out
 * the backoff and puts the job on the delivery queue (the SQS integration), and nothing else: it
 * never waits on a limit. From there the job takes the path of every first attempt (./deliver.ts
 * `deliverFirst`): the same gate, parked with the others while the circuit is open and released
 * oldest first by the probe's success, or back on the queue at its rate slot or in-flight place.
 * It keeps its count, so its last failure ends the delivery (counted, `on_failure`, a copy kept
 * for replay) and a failure with retries left starts the next execution. Two billed transitions
 * per retry (Wait, Queue); before, the execution made the attempt itself and looped on held
 * retries without bound (a Standard execution fails at 25,000 history events,
 * https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html).
 *
 * Once: only a job whose count matches the note attempts (`isQueuedRetry`); its attempt moves the
 * note on or ends the record, so a copy SQS hands out later reads that and does not POST.
 */
import type { DeliveryJob } from '../domain/delivery';
import type { DeliveryRecord } from '../storage/webhook-deliveries';

/** Whether `rec` is the record of the queued retry `job` carries: then that job makes the next attempt. */
export const isQueuedRetry = (job: DeliveryJob, rec: DeliveryRecord | undefined): boolean =>
  job.retry !== undefined && rec?.outcome === 'retrying' && rec.queued === job.retry.attempts;

/** The job of the retry after attempt `attempts` (a plain job: no slot, no start_retry), as the workflow puts it on the queue. */
export const retryJob = (plain: DeliveryJob, attempts: number, lastError: string): DeliveryJob => ({ ...plain, retry: { attempts, last_error: lastError } });
