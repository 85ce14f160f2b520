/**
 * A retry of a delivery, made by the delivery function like a first attempt. The attempt that
 * failed with retries left notes the hand-off in the delivery record (`queued`, its attempt
 * count: storage/webhook-deliveries.ts `recordRetrying` / `advanceRetry`) and starts the retry
 * workflow (lambda/webhooks/workflows/webhook-retry.asl.json) with the retry job; the workflow waits out
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
 *
 * Counted once: the note carries the hand-off's counts (`handoff_uncounted`: the first hand-off's
 * pending retry, every hand-off's next retry and error) and the run that starts the execution
 * takes them first ({@link countHandoff}), whether it wrote the note or found it (a copy of the
 * job, or the job handed back after its run threw past an applied note whose answer was lost).
 * The take and the pending retry are one transaction (../storage/webhook-delivery-once.ts), so
 * no run's memory decides whether it was counted.
 */
import type { DeliveryJob } from './rules/delivery';
import { countLater, type CountDelta } from './storage/webhook-counters';
import type { DeliveryRecord } from './storage/webhook-deliveries';
import { takeHandoff } from './storage/webhook-delivery-once';
import { countMetric, METRIC } from '../core/observability';
import { keyOf } from './delivery-key';

/** Whether `rec` is the record of the queued retry `job` carries: then that job makes the next attempt. */
export const isQueuedRetry = (job: DeliveryJob, rec: DeliveryRecord | undefined): boolean =>
  job.retry !== undefined && rec?.outcome === 'retrying' && rec.queued === job.retry.attempts;

/** The job of the retry after attempt `attempts` (a plain job: no slot, no start_retry), as the workflow puts it on the queue. */
export const retryJob = (plain: DeliveryJob, attempts: number, lastError: string): DeliveryJob => ({ ...plain, retry: { attempts, last_error: lastError } });

/**
 * Counts hand-off `queued`, which the record notes, once, with the retried metric: called before
 * its execution starts, so every end from `retrying`, which gives the pending retry back, finds
 * it counted (or counts it first: ../storage/webhook-delivery-once.ts `settleHandoff`).
 * `expected`: the counts the caller wrote or read. The take and its pending retry apply together
 * or not at all; a take whose every try failed throws (the job comes back and takes again, with
 * the same token: a take that applied answers as applied, for 10 minutes, then as taken).
 */
export async function countHandoff(job: DeliveryJob, queued: number, expected: CountDelta): Promise<void> {
  const k = keyOf(job);
  const d = await takeHandoff(k, queued, expected);
  if (d === 'taken') return;
  // The pending retry is counted by the take; the rest only shows (the latest next retry and error).
  const { pending: _, ...shown } = d;
  countLater(k.namespace, k.webhookId, shown);
  countMetric(METRIC.webhookRetried, 1, { namespace: job.namespace });
}
