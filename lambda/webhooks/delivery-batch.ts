/**
 * A batch of the webhook delivery queue (lambda/handlers/webhook-delivery.ts is its Lambda entry
 * point; the local runtime calls it with the same event shape): each job's first attempt; a
 * failure with retries left starts the retry workflow. Records that throw (storage or Step
 * Functions trouble, not a failing receiver) are reported in `batchItemFailures`, so SQS
 * redelivers only those (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
 * Jobs of a namespace over its share of the delivery capacity go back to the queue, delayed
 * (./share.ts).
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { isPlaceCheck, isProbeTicket, type DeliveryJob, type PlaceCheck, type ProbeTicket } from './rules/delivery';
import { logger } from '../core/observability';
import { deliverFirst, readBatch, type FirstOutcome } from './deliver';
import { flushDeliveryWrites } from './flush';
import { admit, deferOverShare } from './share';
import { laneOf, measured } from './rules/delivery-lanes';
import { probeParked } from './parking';
import { checkPlaces, giveBackHanded, handingInline, type InlineRuns } from './place-wait';
import { keyOf } from './delivery-key';
import { readsPerJob } from './batch-reads';
import { unkeptId } from './delivery-log';
import { DELIVERY_TIMEOUT_SECONDS, enqueueJobs, visibleAgainAfter } from './storage/delivery-queue';
import { SqsSendError } from '../core/adapters/sqs';
import { putParked, type ParkedJob } from './storage/webhook-parked';
import { putWaiting, type WaitingJob } from './storage/webhook-waiting';
import { countWaiting } from './storage/webhook-limits';

/**
 * A delivery that ended in failure whose log page or retained copy was not kept is not counted
 * yet (./flush.ts): its job is reported failed with its visibility set to this, so SQS
 * hands it back within seconds rather than after the queue's visibility timeout; the redrive
 * policy's maxReceiveCount bounds the rounds, as for any failed record
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
 */
const KEEP_AGAIN_SECONDS = 5;

/** A message of the delivery queue that stands for a webhook, not for a delivery. */
const isTicket = (j: unknown): j is ProbeTicket | PlaceCheck => isProbeTicket(j) || isPlaceCheck(j);

export function parseJob(body: string): DeliveryJob | ProbeTicket | PlaceCheck | undefined {
  try {
    const j = JSON.parse(body) as DeliveryJob | null;
    if (!j || typeof j !== 'object' || typeof j.namespace !== 'string' || typeof j.webhook_id !== 'string') return undefined;
    // The probe ticket of a webhook's parked deliveries (./parking.ts), the place check of those waiting for a place (./place-wait.ts).
    if (isTicket(j)) return typeof (j as ProbeTicket).webhook_name === 'string' ? (j as ProbeTicket | PlaceCheck) : undefined;
    // A job carries its message, or a reference to where publish stored it (a large message).
    const hasMessage = 'message' in j ? Boolean(j.message) : typeof j.message_ref?.message_id === 'string';
    // A retry job carries the attempt it follows (retryJob always sets it): without it the
    // hand-off could not tell a first job from a retry, so the body is not a job.
    const retryCounted = j.retry === undefined || (Number.isInteger(j.retry?.attempts) && j.retry.attempts > 0);
    return hasMessage && retryCounted ? j : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Processes a batch: the jobs within their namespace's share (in their lane) run concurrently
 * (one slow receiver does not hold the others), the others are deferred.
 */
export async function processBatch(event: SQSEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> {
  const deadline = Date.now() + (context?.getRemainingTimeInMillis() ?? DELIVERY_TIMEOUT_SECONDS * 1000);
  const inline: Promise<void>[] = [];
  const handedHere: DeliveryJob[] = [];
  const runs: InlineRuns = {
    fits: (timeoutSeconds) => Date.now() + timeoutSeconds * 1000 + INLINE_MARGIN_MS < deadline,
    run: (job, ended) => void (handedHere.push(job), inline.push(runHanded(job, readsPerJob).then((o) => ended(o), () => ended(undefined)))),
  };
  return handingInline(runs, () => processJobs(event, inline, handedHere));
}

/**
 * Time a job run in the batch's invocation needs beyond its request's timeout: the gate's reads,
 * the record's retries (about 3 s beyond the SDK's), the release; Lambda stops an invocation at
 * the function's timeout (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html).
 */
const INLINE_MARGIN_MS = 15_000;

/**
 * A job handed an in-flight place, run: a place it still holds when it ended (it never reached the
 * gate) goes on; not when it waits for its rate slot on the queue (it keeps its place then).
 */
const runHanded = (job: DeliveryJob, reads: Parameters<typeof deliverFirst>[1]): Promise<FirstOutcome> =>
  deliverFirst(job, reads).then(async (o) => (await giveBackHanded(job, o), o), async (e) => (await giveBackHanded(job), Promise.reject(e)));

async function processJobs(event: SQSEvent, inline: Promise<void>[], handedHere: DeliveryJob[]): Promise<SQSBatchResponse> {
  const jobs = event.Records.map((record) => parseJob(record.body));
  // Each job in its webhook's lane: a webhook seen to be slow counts against its namespace's slow lane.
  const lanes = jobs.map((j) => (j ? laneOf(j.webhook_id) : 'fast'));
  const shares = await admit(jobs.flatMap((j, i) => (j ? [{ namespace: j.namespace, lane: lanes[i], measured: measured(j.webhook_id) }] : [])));
  // Given back whatever happens below: a count not given back holds its place until it is stale
  // (2 minutes after the batch started, lambda/webhooks/share.ts STALE_AFTER_SECONDS).
  let results: PromiseSettledResult<unknown>[];
  let unkept = new Set<string>();
  // The parked job a probe ticket delivered (its run settled), by the ticket's index.
  const probed: (DeliveryJob | undefined)[] = [];
  try {
    // A job handed an in-flight place (./place-wait.ts) counts in the share but is never put back
    // over it: put back, its place stayed idle for the deferral (2 to 5 s, against requests of
    // milliseconds), and its webhook's `max_in_flight` bounds those jobs already.
    const deferred = new Set(jobs.flatMap((j, i) => (j && !shares.take(j.namespace, lanes[i]) && !(j as DeliveryJob).place_lease ? [i] : [])));
    const deferring = deferOverShare([...deferred].map((i) => event.Records[i].body));
    // The records and webhooks of the admitted jobs, read once for the batch, after
    // the share answered: a deferred job costs no read (a namespace's backlog beyond its share is
    // received and deferred again and again; 1.2 read units a job each time when they were read
    // beside the admission), and the first POST still waits for two round trips (admission, reads).
    const reads = readBatch(jobs.filter((j, i): j is DeliveryJob => Boolean(j) && !isTicket(j) && !deferred.has(i)));
    // Copies of one delivery in this batch (SQS delivers a message at least once, and a send whose
    // answer was lost and was sent again stores it twice,
    // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues-at-least-once-delivery.html):
    // the batch's read found no record for either, so each would POST. A later copy runs once the
    // earlier one settled, reading the record again: it carries on from how that one ended.
    const firstOf = new Map<string, number>();
    const copyOf = jobs.map((j, i) => {
      if (!j || isTicket(j) || deferred.has(i)) return undefined;
      const k = keyOf(j);
      const id = JSON.stringify([k.namespace, k.webhookId, k.messageId, k.replayId ?? '']);
      const prev = firstOf.get(id);
      firstOf.set(id, i);
      return prev;
    });
    const runs: Promise<unknown>[] = [];
    event.Records.forEach((record, i) => {
      runs[i] = (async () => {
        const job = jobs[i];
        // A body that is not a job can never succeed: drop it rather than loop through the DLQ.
        if (!job) {
          logger.error('webhook delivery record is not a delivery job; dropped', { messageId: record.messageId });
          return;
        }
        if (deferred.has(i)) return deferring;
        if (isPlaceCheck(job)) return checkPlaces(job);
        if (isProbeTicket(job)) return probeParked(job, (j) => deliverFirst(j).then((o) => ((probed[i] = j), o)));
        // A job received before (or redriven, or deferred: then as a new message) may have been
        // delivered, or handed to the retry workflow; deliverFirst reads how far it got first.
        const earlier = copyOf[i];
        if (earlier === undefined) return runHanded(job, reads);
        await runs[earlier].catch(() => undefined);
        return runHanded(job, readsPerJob);
      })();
    });
    results = await Promise.allSettled(runs);
    // The jobs handed places in this invocation, and those they handed places to in turn.
    for (let done = 0; done < inline.length; ) {
      const n = inline.length;
      await Promise.allSettled(inline.slice(done));
      done = n;
    }
  } finally {
    [, unkept] = await Promise.all([shares.release(), flushDeliveryWrites()]);
  }
  // A delivery that ended in failure whose log page or retained copy could not be written: run
  // again, it finds its record (no POST), writes them and counts it (./flush.ts).
  const isUnkept = (job: DeliveryJob | ProbeTicket | PlaceCheck | undefined) => Boolean(job) && !isTicket(job!) && unkept.has(unkeptId(job!.namespace, job!.webhook_id, keyOf(job as DeliveryJob).messageId));
  // A parked job the ticket delivered is out of the park, and the ticket stands for the webhook,
  // not for it: the job itself goes back on the queue, visible after the same few seconds. So does
  // a job run here on a place handed to it (out of the waiting ones once it ended).
  await Promise.all([
    requeueUnkept(probed.filter((j): j is DeliveryJob => Boolean(j) && isUnkept(j)), (j) => putParked(j as ParkedJob)),
    requeueUnkept(handedHere.filter(isUnkept), (j) => putWaiting(j as WaitingJob).then(() => countWaiting(j.namespace, j.webhook_id, 1))),
  ]);
  const failed = results.flatMap((r, i) => (r.status === 'rejected' || isUnkept(jobs[i]) ? [i] : []));
  const soon = failed.filter((i) => results[i].status === 'fulfilled').map((i) => event.Records[i].receiptHandle);
  const unchanged = soon.length ? await visibleAgainAfter(soon, KEEP_AGAIN_SECONDS) : 0;
  if (unchanged) logger.error('unkept webhook failures not made visible again soon; SQS will redeliver them after the visibility timeout', { count: unchanged });
  const batchItemFailures = failed.map((i) => {
    const r = results[i];
    const error = r.status === 'rejected' ? (r.reason as Error)?.message : 'failed delivery not kept for replay';
    logger.error('webhook delivery record failed; SQS will redeliver it', { messageId: event.Records[i].messageId, error });
    return { itemIdentifier: event.Records[i].messageId };
  });
  return { batchItemFailures };
}

/**
 * Puts back on the queue, delayed {@link KEEP_AGAIN_SECONDS}, the jobs not of the batch's records
 * (delivered by probe tickets, or run on a place handed to them) that ended in failure not kept:
 * run again, each finds its record (no POST), keeps it and counts it, and one still not kept then
 * is failed like any job. One not sent goes back where it came from (`back`: parked again, and the
 * webhook's next ticket runs it; waiting again, and a hand-off runs it), finding its record too.
 * Never throws.
 */
async function requeueUnkept(jobs: DeliveryJob[], back: (job: DeliveryJob) => Promise<unknown>): Promise<void> {
  if (!jobs.length) return;
  try {
    await enqueueJobs(jobs, jobs.map(() => KEEP_AGAIN_SECONDS));
  } catch (e) {
    const unsent = e instanceof SqsSendError ? e.unsent.map((i) => jobs[i]) : jobs;
    const kept = await Promise.allSettled(unsent.map(back));
    logger.error('unkept webhook failures not requeued; put back where they came from', { count: unsent.length, lost: kept.filter((b) => b.status === 'rejected').length, error: (e as Error)?.message });
  }
}
