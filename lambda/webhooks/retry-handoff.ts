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
 */
import { randomUUID } from 'node:crypto';
import type { DeliveryJob } from './rules/delivery';
import { isRetryableDependencyFailure, withRetries } from '../core/rules/dependency-errors';
import { countLater, type CountDelta } from './storage/webhook-counters';
import { readDelivery, takeHandoff, type DeliveryRecord } from './storage/webhook-deliveries';
import { countMetric, METRIC } from '../core/observability';
import { keyOf } from './delivery-key';

/** Whether `rec` is the record of the queued retry `job` carries: then that job makes the next attempt. */
export const isQueuedRetry = (job: DeliveryJob, rec: DeliveryRecord | undefined): boolean =>
  job.retry !== undefined && rec?.outcome === 'retrying' && rec.queued === job.retry.attempts;

/** The job of the retry after attempt `attempts` (a plain job: no slot, no start_retry), as the workflow puts it on the queue. */
export const retryJob = (plain: DeliveryJob, attempts: number, lastError: string): DeliveryJob => ({ ...plain, retry: { attempts, last_error: lastError } });

/** A take is tried about 3 s beyond the SDK's retries, as the note's write is (./deliver.ts). */
const TAKE_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/**
 * Counts the hand-off the record notes, once, with the retried metric: called before its
 * execution starts (and before a delivery found `retrying` is dropped), so every end from
 * `retrying`, which gives the pending retry back, follows the count of it. `expected`: the counts
 * the caller wrote or read. A take whose every answer was lost is told apart by one strongly
 * consistent read: taken by this run (counted), taken by another (nothing to count), or still
 * noted (thrown: the job comes back and takes it, and nothing starts meanwhile).
 */
export async function countHandoff(job: DeliveryJob, expected: CountDelta): Promise<void> {
  const k = keyOf(job);
  const run = randomUUID();
  let d: CountDelta | 'taken';
  try {
    d = await withRetries(() => takeHandoff(k, run, expected), TAKE_RETRIES);
  } catch (e) {
    const rec = await readDelivery(k);
    if (rec?.handoff_uncounted) throw e;
    d = rec?.handoff_taken === run ? expected : 'taken';
  }
  if (d === 'taken') return;
  countLater(k.namespace, k.webhookId, d);
  countMetric(METRIC.webhookRetried, 1, { namespace: job.namespace });
}
