/**
 * Deliveries that wait behind a webhook's open circuit are parked in DynamoDB
 * (../storage/webhook-parked.ts), oldest first, instead of going back to the delivery queue each
 * probe gap: at 1 message/s to a dead endpoint that circulation grew without bound (every held
 * job received again every minute or so), starving the function's other namespaces.
 *
 * - {@link park}: the gate held a first attempt back for the circuit: the job is parked, and the
 *   first park of a run sends the webhook's probe ticket, one SQS message (delayed to the probe's
 *   time) that stands for all its parked deliveries. While the ticket is due, the probe is its
 *   (a delivery never parked parks behind it: ./rules/endpoint-health.ts `ticketDueWindow`).
 * - {@link probeParked}: the ticket is back: the oldest parked delivery goes through the gate (it
 *   takes the probe, or stays parked while another attempt holds it). If the circuit then is
 *   closed (the probe succeeded) or the webhook is disabled, deleted or recreated, every parked
 *   delivery is released to the queue (a success that closes the circuit, the ticket's or any
 *   other attempt's, releases them at once too: ./endpoint-limits.ts `afterAttempt`), where the
 *   ordinary path delivers it at the webhook's limits or ends it (failed and replayable while health disabled it, dropped while the user
 *   disabled or deleted it). Otherwise the ticket goes back, delayed to the next probe.
 *
 * SQS receives per parked delivery: 2 (its arrival, its release), whatever the outage's length.
 */
import { DELIVERY_TIMEOUT_SECONDS, deferJobs, enqueueJobs } from './storage/delivery-queue';
import type { DeliveryJob, ProbeTicket } from './rules/delivery';
import { waitSeconds } from './rules/endpoint-health';
import { sqsJson } from '../core/rules/queue-messages';
import { claimTicket, dropTicket, parkedJobs, putParked, stillParked, takeParked, ticketSent, type ParkedJob } from './storage/webhook-parked';
import type { WebhookItem } from './storage/webhooks';
import { logger } from '../core/observability';
import { SqsSendError } from '../core/adapters/sqs';
import { isRetryableDependencyFailure, withRetries } from '../core/rules/dependency-errors';
import { liveWebhook } from './attempt';

/**
 * A ticket noted this long ago and not seen again is taken as lost (a new park sends another):
 * its longest delay (900 s, SQS's largest DelaySeconds), a redelivery after a failed run (the
 * queue's visibility, 6 times the function's timeout) and a margin.
 */
const TICKET_STALE_MS = (900 + DELIVERY_TIMEOUT_SECONDS * 6 + 120) * 1000;

/** A wave of released deliveries goes this many requests' time after the one before: a request's time varies, and a wave on time finds the places free. */
const WAVE_MARGIN = 1.5;

/** Parked deliveries read and released per page. */
const RELEASE_PAGE = 100;

/** How soon a ticket comes back to release again after a release failed. */
const RELEASE_RETRY_SECONDS = 5;

type Target = Pick<WebhookItem, 'namespace' | 'name' | 'id'>;
type Limited = Target & { config?: { rate_limit?: number | null; max_in_flight?: number | null } };

const ticketOf = (w: Target, at: number): ProbeTicket => ({ namespace: w.namespace, webhook_id: w.id, webhook_name: w.name, probe_ticket: at });

/** Sends the ticket noted at `at`, then confirms its note (until then it lapses in seconds: ../storage/webhook-parked.ts `UNSENT_TICKET_MS`). */
async function sendTicket(w: Target, at: number, probeAt: number): Promise<void> {
  await deferJobs([sqsJson(ticketOf(w, at))], waitSeconds(probeAt, Date.now()));
  await ticketSent(w, at);
}

/**
 * Parks a job the gate held back for the circuit until `probeAt` (the probe's time). Throws when
 * it could not be parked (SQS then delivers the job again, which parks it then).
 */
export async function park(job: DeliveryJob, w: WebhookItem, probeAt: number, now = Date.now()): Promise<void> {
  const { rate_slot_at: _, rate_slot_of: __, place_lease: ___, ...plain } = job;
  const parked = { ...plain, parked_at: job.parked_at ?? now } as ParkedJob;
  await putParked(parked);
  const claim = await claimTicket(w, now, now - TICKET_STALE_MS, probeAt);
  if (claim === 'held') return;
  if (claim === 'claimed') {
    try {
      await sendTicket(w, now, probeAt);
    } catch (e) {
      // Without its ticket nothing would come back for the parked ones: give both back, so the
      // job's redelivery parks it again and sends the ticket.
      await dropTicket(w, now).catch(() => undefined);
      await takeParked(parked);
      throw e;
    }
    return;
  }
  // The run ended between the gate and the park (the circuit closed, or health disabled it).
  await releaseOrRetry(w, now);
}

/**
 * Releases the parked deliveries of a run that ended; when that fails, a ticket stamped `stamp`
 * comes back in a few seconds to release them ({@link probeParked}: the run ended, or a new one
 * began with no ticket out, which this one then carries on). Throwing instead would leave them
 * until SQS received the failed message again, after the queue's visibility timeout (6 minutes),
 * and after `maxReceiveCount` receives SQS moves it to the dead-letter queue
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html):
 * parked for good. Throws only when the ticket could not be sent either.
 */
export async function releaseOrRetry(w: Limited, stamp: number, requestMs?: number): Promise<void> {
  try {
    await releaseParked(w, requestMs);
  } catch (e) {
    logger.warn('parked webhook deliveries not released; a probe ticket comes back to release them', { namespace: w.namespace, webhook: w.name, error: (e as Error).message });
    await deferJobs([sqsJson(ticketOf(w, stamp))], RELEASE_RETRY_SECONDS);
  }
}

/** A job taken off to be released and not sent is parked again, tried about 3 s beyond the SDK's retries: one not put back is lost. */
const PUT_BACK_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/**
 * Releases every parked delivery of the webhook incarnation to the delivery queue. Each is taken
 * with a conditional delete first, so two releases at once hand each job on once; the jobs of a
 * webhook with a `rate_limit` are delayed one second per `rate_limit` jobs, and those of one with
 * `max_in_flight` by waves of `max_in_flight` jobs, each {@link WAVE_MARGIN} times a request
 * (`requestMs`, the success that closed the circuit; 1 s when unknown) after the one before, in
 * whole seconds as SQS delays (at most 900 s): released at once, all but `max_in_flight` of them
 * would find no place and go back to the queue every 1 to 3 s until they found one. Every job taken is sent, also when taking another
 * failed (that one stays parked, and the call throws once the others are sent); a job SQS did not
 * store is parked again.
 */
async function releaseParked(w: Limited, requestMs = 1000): Promise<number> {
  const rate = w.config?.rate_limit ?? undefined;
  const places = w.config?.max_in_flight ?? undefined;
  const wave = Math.max(1, Math.ceil((WAVE_MARGIN * requestMs) / 1000));
  const delayOf = (n: number) => (rate || places ? Math.min(900, Math.max(rate ? Math.floor(n / rate) : 0, places ? Math.floor(n / places) * wave : 0)) : undefined);
  let released = 0;
  for (;;) {
    const { jobs } = await parkedJobs(w.namespace, w.id, RELEASE_PAGE);
    if (!jobs.length) return released;
    const takes = await Promise.allSettled(jobs.map(takeParked));
    // A take that threw may have been applied with every answer lost: the job is gone from the
    // park and must go on. Sent unless a consistent read still finds it parked (at least once: a
    // job sent twice reads its record, or claims its replay, before any POST).
    const unsure = await Promise.all(jobs.map(async (j, i) => takes[i].status === 'rejected' && !(await stillParked(j).catch(() => false))));
    const taken = jobs.filter((_, i) => (takes[i].status === 'fulfilled' && (takes[i] as PromiseFulfilledResult<boolean>).value) || unsure[i]);
    const failed = takes.find((t, i): t is PromiseRejectedResult => t.status === 'rejected' && !unsure[i]);
    const delays = taken.map((_, i) => delayOf(released + i));
    try {
      await enqueueJobs(taken, delays);
    } catch (e) {
      // Only what SQS did not store (the others are on their way: parked again, they would go twice).
      const unsent = e instanceof SqsSendError ? e.unsent.map((i) => taken[i]) : taken;
      await Promise.all(unsent.map((j) => withRetries(() => putParked(j), PUT_BACK_RETRIES)));
      throw e;
    }
    released += taken.length;
    if (failed) throw failed.reason;
  }
}

/** The probe ticket of a webhook came back (one per webhook and run, ./delivery-batch.ts). */
export async function probeParked(t: ProbeTicket, deliver: (job: DeliveryJob) => Promise<string>): Promise<void> {
  let w = await liveWebhook(t);
  const ended = (x: WebhookItem | undefined): boolean => !x || !x.config.enabled || !x.health || x.health.disabled_at !== undefined;
  if (ended(w)) {
    await releaseOrRetry(w ?? { namespace: t.namespace, name: t.webhook_name, id: t.webhook_id }, t.probe_ticket);
    return;
  }
  if (w!.health!.ticket_at !== t.probe_ticket) {
    // Another ticket took over (this one was taken as lost): it carries on. Or this ticket's run
    // closed (which released what was parked then) and a new run began with no ticket out: what
    // is parked still (a release that failed) is this ticket's to carry on.
    if (w!.health!.ticket_at === undefined && (await parkedJobs(t.namespace, t.webhook_id, 1)).jobs.length) await next(w!, undefined);
    return;
  }
  const [oldest] = (await parkedJobs(t.namespace, t.webhook_id, 1)).jobs;
  if (!oldest) {
    // Nothing parked: the ticket ends. A park made meanwhile found the ticket held and sent none,
    // so the partition is read again after the ticket is given up.
    if (!(await dropTicket(w!, t.probe_ticket))) return;
    if ((await parkedJobs(t.namespace, t.webhook_id, 1)).jobs.length) await next(w!, undefined);
    return;
  }
  // Through the gate like any attempt: it takes the probe, or parks again in its place. Unparked
  // first, so the release its own success makes (./endpoint-limits.ts `afterAttempt`, before its
  // record is written) cannot hand it to the queue too; put back if its run fails.
  // A take that threw but is no longer parked was applied (every answer lost): it is this ticket's.
  const took = await takeParked(oldest).catch(async (e) => {
    if (await stillParked(oldest).catch(() => true)) throw e;
    return true;
  });
  if (took) {
    try {
      await deliver(oldest);
    } catch (e) {
      await putParked(oldest).catch(() => undefined);
      throw e;
    }
  }
  w = await liveWebhook(t);
  if (ended(w)) {
    await releaseOrRetry(w ?? { namespace: t.namespace, name: t.webhook_name, id: t.webhook_id }, t.probe_ticket);
    return;
  }
  await next(w!, t.probe_ticket);
}

/** Sends the ticket again for the next probe (the one held, or a new one); releases when the run ended. */
async function next(w: WebhookItem, held: number | undefined): Promise<void> {
  const now = Date.now();
  const probeAt = Math.max(w.health?.probe_until ?? 0, now + 1000);
  const claim = await claimTicket(w, now, now - TICKET_STALE_MS, probeAt, held);
  if (claim === 'claimed') {
    try {
      return await sendTicket(w, now, probeAt);
    } catch (e) {
      // Noted but not sent: every later park and this ticket's own redelivery would take the note
      // for a ticket on its way, and nothing would come back until it is taken as lost (minutes).
      // Given up, the redelivered ticket finds none noted and sends one.
      await dropTicket(w, now).catch(() => undefined);
      throw e;
    }
  }
  if (claim === 'held') return;
  logger.info('parked webhook deliveries released', { namespace: w.namespace, webhook: w.name, run: claim });
  await releaseOrRetry(w, held ?? now);
}
