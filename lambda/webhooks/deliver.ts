/**
 * Delivering one job: the first attempt (delivery Lambda, from SQS), the later attempts and the
 * hooks (the retry workflow's Task states), and the status counters, which count each delivery
 * once, however many attempts it took (DESIGN.md section 9).
 *
 * Every run of a job or Task may be a repeat (SQS redelivers a job whose processing threw; Step
 * Functions retries a Task that failed), so how a delivery ended is recorded first, with its
 * counters, in its delivery record (storage/webhook-deliveries.ts), and a repeated run reads the
 * record and carries on from it: an attempt that succeeded is never POSTed again because the
 * bookkeeping after it failed, and it counts once.
 */
import { randomUUID } from 'node:crypto';
import { mayRetry, retryDelaySeconds } from './rules/backoff';
import { isPassingDependencyFailure, isRetryableDependencyFailure, withRetries } from '../core/rules/dependency-errors';
import { isReferenceJob, jobMessageId, type DeliveryJob, type RetryState } from './rules/delivery';
import type { WebhookConfig } from './rules/webhooks';
import { executionName, retryWorkflow } from './storage/retry-workflow';
import { DELIVERY_TIMEOUT_SECONDS, deferJobs } from './storage/delivery-queue';
import { sqsJson } from '../core/rules/queue-messages';
import {
  advanceRetry, handoffCounts, markEnded, readDelivery, recordDropped, recordFinal, recordRetrying, type DeliveryRecord, type RecordFrom,
} from './storage/webhook-deliveries';
import { countMetric, logger, METRIC } from '../core/observability';
import { attemptOnce, jobMessage, liveWebhook, type AttemptResult } from './attempt';
import { runHooks } from './hooks';
// Extensions (delivery log, replay): each call below is one line, marked.
import { copyRefused, keepAgain, keepAttemptApart, logAttempt } from './delivery-log';
import type { CarriedEntry } from './storage/webhook-deliveries';
import { claimHook, releaseHook } from './storage/webhook-delivery-once';
import { afterAttempt, afterFinalFailure, gate } from './endpoint-limits';
import { batchReads, readsPerJob, type DeliveryReads } from './batch-reads';
import { noteRequest } from './rules/delivery-lanes';
import { park } from './parking';
import { keyOf, once, readAgainBeforePost, withSlot } from './delivery-key';
import { waitForPlace } from './place-wait';
import { replayPostClaim, waitForClaim } from './replay-claim';
import { notCarried } from './application-scope';
import { countHandoff, isQueuedRetry, retryJob } from './retry-handoff';
import { handoffStep, type Handoff, type HandoffDecision, type HandoffKnown, type StartAnswer } from './rules/handoff';
import type { CountDelta } from './storage/webhook-counters';


/**
 * Logged once per delivery that ends in failure; the stack counts these lines (a metric filter)
 * and alarms on them. Names only: no payload, URL or secret.
 */
export const DELIVERY_FAILED_LOG = 'webhook delivery failed';


/** Whether a hook applies to a delivery that ended so: then the delivery ends only once it ran. */
const hookApplies = (c: WebhookConfig, ok: boolean) => Boolean(ok ? c.on_success : c.on_failure);

interface End {
  ok: boolean;
  error?: string;
  response?: string;
  attempts: number;
  /** The delivery-log entry of the attempt that ended it, for the record to carry. */
  log?: CarriedEntry;
}

/**
 * An attempt was POSTed: if its outcome cannot be recorded, SQS or the workflow runs the job again
 * and the receiver gets the message again. So the record is tried for about 3 s beyond the SDK's
 * retries while the failure is one the next call may not meet (throttled, unavailable, late, a
 * 5xx of the service): a short outage ends in one POST.
 */
const OUTCOME_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isRetryableDependencyFailure };

/**
 * Records how a delivery ended, with its counters, unless another run already did. Returns
 * `recorded`, or the record the other run wrote (the caller carries on from it).
 */
async function recordEnd(job: DeliveryJob, c: WebhookConfig, end: End, from: RecordFrom): Promise<'recorded' | DeliveryRecord> {
  const key = keyOf(job);
  // Two rounds at most: the record can move only from absent to `retrying` to ended.
  for (let round = 0; round < 3; round++) {
    // One id for every try of this round: a try that meets the record an earlier, applied try wrote counts it as its own.
    const writeId = randomUUID();
    if (await withRetries(() => recordFinal(key, { ...end, ended: !hookApplies(c, end.ok), now: Date.now(), holdStored: !end.ok && copyRefused(job) }, from, writeId), OUTCOME_RETRIES)) {
      countMetric(end.ok ? METRIC.webhookDelivered : METRIC.webhookFailed, 1, { namespace: job.namespace });
      if (!end.ok) logger.warn(DELIVERY_FAILED_LOG, { namespace: job.namespace, webhook: job.webhook_name, message_id: key.messageId, error: end.error, attempts: end.attempts });
      return 'recorded';
    }
    const now = await withRetries(() => readDelivery(key), OUTCOME_RETRIES);
    if (now && now.outcome !== 'retrying') {
      await keepAttemptApart(job, end.log); // extension: delivery log
      return now;
    }
    from = now ? 'retrying' : 'none';
  }
  throw new Error(`the record of delivery ${key.messageId} to webhook ${job.webhook_name} keeps changing`);
}

/**
 * Runs the hook of a delivery that ended, then marks it ended (a repeat finds nothing to do). The
 * run claims the hook on the record first, for as long as an invocation can last, so of two runs
 * ending the delivery at once (a job and the failed-execution rule's target) one runs it; a
 * failed hook gives the claim back. A run that finds the claim held throws: its job or target is
 * tried again later, and then finds the delivery ended, or the claim lapsed (its holder died) and
 * runs the hook.
 */
async function runEndHook(job: DeliveryJob, ok: boolean, response: string | undefined, error: string | undefined) {
  const k = keyOf(job);
  const run = randomUUID();
  const now = Date.now();
  const claim = await withRetries(() => claimHook(k, run, now, now + DELIVERY_TIMEOUT_SECONDS * 1000), OUTCOME_RETRIES);
  if (claim === 'ended') return;
  if (claim === 'held') throw new Error(`the hook of delivery ${k.messageId} to webhook ${job.webhook_name} is being run by another run`);
  try {
    const w = await liveWebhook(job);
    if (w && hookApplies(w.config, ok)) await runHooks(job.namespace, w, w.config, await jobMessage(job), { ok, response, error }, Date.now());
  } catch (e) {
    await releaseHook(k, run).catch(() => undefined);
    throw e;
  }
  await markEnded(k);
}

/** Carries on from the record a repeated run found: whatever the first run left undone. */
async function resume(job: DeliveryJob, rec: DeliveryRecord): Promise<FirstOutcome> {
  if (rec.outcome === 'retrying' || rec.outcome === 'dropped') return rec.outcome;
  await keepAgain(job, rec, () => jobMessage(job)); // extension: delivery log
  if (!rec.ended) await runEndHook(job, rec.outcome === 'success', rec.response, rec.error);
  return rec.outcome;
}

export type FirstOutcome = 'success' | 'failed' | 'retrying' | 'dropped' | 'waiting' | 'parked';

/** Seconds a job whose workflow could not be started waits on the queue before it tries again. */
export const START_WAIT_SECONDS = 5;

/**
 * Hands a delivery whose attempt `attempts` failed to the retry workflow, which waits out the
 * backoff and puts the retry job (attempt `attempts + 1`, ./retry-handoff.ts) on this queue: the
 * note, the take of its counts and the start of the execution named by the attempts made, as
 * ./rules/handoff.ts decides them. A start that fails (throttled past its retries, or any other
 * error) puts the job back on the queue as a new message carrying `start_retry` (so waiting never
 * counts toward the DLQ's receives), and that message starts the workflow without POSTing again.
 * `found`: the record as this job read it when it notes this hand-off already (a job that found
 * it, or a `start_retry` job), so only the execution is started.
 */
async function handToWorkflow(job: DeliveryJob, w: { id: string; config: WebhookConfig }, attempts: number, error: string, retryAt: number, found?: DeliveryRecord): Promise<FirstOutcome> {
  const { start_retry: _, rate_slot_at: __, rate_slot_of: ___, retry: ____, ...plain } = job;
  const wait = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
  const state: RetryState = { job: retryJob(plain as DeliveryJob, attempts, error), attempts, wait_seconds: wait, last_error: error, outcome: 'retry' };
  // The record says `retrying` with the hand-off noted and its counts; a queued retry that failed
  // again moves its note on, so a later copy of its job does not POST.
  const k = keyOf(job);
  const noting = { nextRetry: retryAt, error, now: Date.now() };
  const h: Handoff<CountDelta> = { attempts, retryOf: job.retry?.attempts, own: handoffCounts({ ...noting, first: !job.retry }) };
  let known: HandoffKnown<CountDelta> = { step: 'begin', found };
  for (;;) {
    const d: HandoffDecision<CountDelta> = handoffStep(h, known);
    switch (d.do) {
      case 'note':
        known = { step: 'noted', written: d.retryOf === undefined ? await recordRetrying(k, { ...noting, queued: attempts }) : await advanceRetry(k, d.retryOf, attempts, noting) };
        break;
      case 'read-note':
        known = { step: 'read', record: await readDelivery(k) };
        break;
      case 'take':
        await countHandoff(job, d.queued, d.counts);
        known = { step: 'counted' };
        break;
      case 'start':
        known = { step: 'started', answer: await startHandoff(job, w.id, attempts, state) };
        break;
      case 'come-back-later':
        await deferJobs([sqsJson({ ...plain, start_retry: { attempts, last_error: error, retry_at: retryAt } })], START_WAIT_SECONDS);
        return 'waiting';
      // An execution of that name failed while the record still notes its hand-off: the
      // failed-execution rule's target failed past its retries, so it ends here as that rule would.
      case 'end-from-retrying':
        return endFailedExecution(state);
      case 'nothing':
        if (d.ran) logger.warn('webhook retry execution of this delivery already ran', { namespace: job.namespace, webhook: job.webhook_name, message_id: jobMessageId(job) });
        return 'retrying';
    }
  }
}

/** Starts the hand-off's execution by its name; a start that throws is logged and answers `error`. */
async function startHandoff(job: DeliveryJob, webhookId: string, attempts: number, state: RetryState): Promise<StartAnswer> {
  try {
    return await retryWorkflow().start(executionName(webhookId, jobMessageId(job), job.replay_id, attempts), state);
  } catch (e) {
    const log = isPassingDependencyFailure(e) ? logger.warn.bind(logger) : logger.error.bind(logger);
    log('webhook retry workflow not started; the job waits on the queue', { namespace: job.namespace, webhook: job.webhook_name, error: (e as Error).message });
    return 'error';
  }
}

/**
 * A job found its hand-off's execution closed as failed, aborted or timed out: the delivery ends
 * as the failed-execution rule ends it ({@link giveUpDelivery}, then {@link finishDelivery}),
 * unless its record says it ended or moved on (then nothing is counted again).
 */
async function endFailedExecution(state: RetryState): Promise<FirstOutcome> {
  const { job } = state;
  logger.warn('webhook retry execution of this delivery failed; its delivery ends here', { namespace: job.namespace, webhook: job.webhook_name, message_id: jobMessageId(job) });
  const end = await finishDelivery(await giveUpDelivery({ ...state, failure: { Error: 'execution closed as failed', Cause: 'found by DescribeExecution when a job of the delivery started it again' } }));
  return end.outcome === 'retry' || end.outcome === 'queued' ? 'retrying' : end.outcome;
}

/**
 * The first attempt of a job (from the delivery queue), or the attempt `retry.attempts + 1` of a
 * retry the workflow handed to the queue (./retry-handoff.ts). A failure with retries left starts
 * a retry workflow execution; otherwise the delivery ends here, counted, with its hook.
 *
 * The delivery record is read first, whatever the receive count: a job can come back as a new
 * SQS message (receive count 1) after it was delivered, when it was redriven from the DLQ or put
 * back over its namespace's share, and must then not be POSTed again. One strongly
 * consistent read (1 read unit) per job, made for the whole batch at once when the handler passes
 * the batch's `reads` ({@link readBatch}).
 */
export async function deliverFirst(job: DeliveryJob, reads: DeliveryReads = readsPerJob): Promise<FirstOutcome> {
  const rec = await reads.record(keyOf(job));
  const readAt = Date.now();
  // A job waiting to start its workflow finds the `retrying` its first run wrote: it starts it. A
  // retry the workflow handed to the queue (`job.retry`) finds the record noting it: it attempts.
  // Any other job finding a hand-off noted (a copy, or the job whose run noted it and then threw
  // before the execution started: the note applied with its answer lost, and SQS handed the job
  // back) starts that hand-off's execution by its name: one that runs or ran is not started again
  // (../adapters/retry-workflow.ts), one that never started starts now. Taking the note for a
  // running execution left such a delivery `retrying` for good, never retried nor counted.
  const noted = rec?.outcome === 'retrying' && !job.start_retry && !isQueuedRetry(job, rec) && typeof rec.queued === 'number' ? rec.queued : undefined;
  if (rec && noted === undefined && !(job.start_retry && rec.outcome === 'retrying') && !isQueuedRetry(job, rec)) return resume(job, rec);
  const from: RecordFrom = rec ? 'retrying' : 'none';
  const attempt = (job.retry?.attempts ?? 0) + 1;
  const w = await reads.liveWebhook(job);
  const message = once(() => jobMessage(job));
  // Deleted or disabled after the publish (DESIGN.md section 9), or moved to an application the
  // message is not addressed to (./application-scope.ts): deliver nothing more. A stored
  // message is released by the record of the drop; an inline one needs no record.
  if (!w || !w.config.enabled || (await notCarried(job, w, message))) {
    // A job waiting to start its workflow has a `retrying` record (and a pending retry counted):
    // it ends as dropped, as the workflow would have ended it.
    // Its hand-off is counted first, if no run did yet (recordDropped): the drop gives that pending retry back.
    if ((rec || isReferenceJob(job)) && !(await recordDropped(keyOf(job), { releasePending: Boolean(rec && w), now: Date.now() }, rec ? 'retrying' : 'none'))) {
      const now = await readDelivery(keyOf(job));
      if (now) return resume(job, now);
    }
    return 'dropped';
  }
  // Attempt 1 failed and the workflow could not be started then: start it now, no POST.
  if (job.start_retry) return handToWorkflow(job, w, job.start_retry.attempts, job.start_retry.last_error, job.start_retry.retry_at, rec);
  // The hand-off is noted already: its execution starts (or is found) without writing the note.
  if (noted !== undefined) return handToWorkflow(job, w, noted, rec?.error ?? 'failed', Date.now() + retryDelaySeconds(w.config, noted) * 1000, rec);
  // Extension: delivery limits and endpoint health. Held back: the job comes back later as a new
  // message (not an attempt, and waiting never counts toward the DLQ's receives); held by an open
  // circuit, it is parked until the probe's success releases it (./parking.ts).
  // A copy of this job (SQS delivers at least once) may have POSTed and recorded its end while
  // this one waited for its slot or met slow calls: the record is read again before the POST, as
  // near its slot as the gate can place it (./delivery-key.ts), and the message loaded beside it.
  // A replay claims its POST there instead, and one whose copy holds the claim waits
  // (./replay-claim.ts); its message is loaded first, so a failed load leaves no claim held.
  // A queued retry's own record (`retrying`, noting it) does not stop it; it takes no replay claim:
  // the note stands for it.
  const claim = job.replay_id && !job.retry ? replayPostClaim(job) : undefined;
  const beforePost = claim
    ? async (): Promise<DeliveryRecord | { heldUntil: number } | undefined> => (await message(), claim.take())
    : (at: number) => readAgainBeforePost(job, at, readAt, message).then((r) => (isQueuedRetry(job, r) ? undefined : r));
  // Held back after its claim was taken (or failed there), a replay makes no POST: the claim is
  // given back, so the job back from the queue goes instead of waiting for it to lapse.
  const g = await gate(w, { at: job.rate_slot_at, of: job.rate_slot_of, parked: job.parked_at !== undefined, lease: job.place_lease }, beforePost).catch(async (e) => {
    await claim?.giveBack();
    throw e;
  });
  if (!g.go) {
    await claim?.giveBack();
    if ('ended' in g) return 'heldUntil' in g.ended ? waitForClaim(job, g.ended.heldUntil).then(() => 'waiting' as const) : resume(job, g.ended);
    if ('disabled' in g) return endDisabled(job, w, attempt, from).then((d) => (d === 'recorded' ? 'failed' : resume(job, d)));
    if (g.reason !== 'rate_limit') {
      await (g.reason === 'circuit' ? park(job, w, g.probeAt ?? Date.now() + g.waitSeconds * 1000) : waitForPlace(job, w));
      return 'parked';
    }
    await deferJobs([sqsJson(withSlot(job, g.rateSlotAt, w, g.placeLease))], g.waitSeconds);
    return 'waiting';
  }
  let r: AttemptResult | undefined, done: Awaited<ReturnType<typeof recordEnd>> | undefined, retried: FirstOutcome | undefined;
  // The in-flight place is given back once the attempt is recorded (ended, or handed to the retry
  // workflow): given back at the request's end, it went at once to an SQS copy of this job waiting
  // for it, which read no record yet and POSTed again after the 2xx. Health comes after, as before:
  // a success closing the circuit releases the parked deliveries, the first at once, to a free place.
  try {
    const m = await message(); // loaded at the gate, beside its reads: no call between the slot and the POST
    r = await attemptOnce(w, m, attempt);
    if (!r.tooLarge) noteRequest(w.id, r.duration_ms); // the webhook's lane for its next jobs (./share.ts)
    const log = await logAttempt(job, w.config, m, attempt, r); // extension: delivery log
    if (!r.ok && !r.tooLarge && mayRetry(w.config, attempt)) retried = await handToWorkflow(job, w, attempt, r.error ?? 'failed', Date.now() + retryDelaySeconds(w.config, attempt) * 1000);
    else done = await recordEnd(job, w.config, { ok: r.ok, error: r.error ?? undefined, response: r.response, attempts: attempt, log }, from);
  } finally {
    await g.release();
    if (r) await afterAttempt(w, r); // extension: endpoint health (the attempt counts even if its record failed)
  }
  if (retried) return retried;
  if (done !== 'recorded') return resume(job, done!);
  if (!r.ok && !r.tooLarge) await afterFinalFailure(w, r.error ?? 'failed'); // extension: endpoint health
  if (hookApplies(w.config, r.ok)) await runEndHook(job, r.ok, r.response, r.error ?? undefined);
  return r.ok ? 'success' : 'failed';
}

/**
 * The reads of a delivery batch's jobs, made once per batch (./batch-reads.ts): pass the result to
 * {@link deliverFirst} for each of them. The handler calls it with the jobs the share admitted.
 */
export const readBatch = (jobs: DeliveryJob[]): DeliveryReads => batchReads(jobs.map(keyOf), jobs);

/** The error of a delivery that arrived while health had disabled its webhook. */
const DISABLED_BY_HEALTH = 'webhook disabled by endpoint health: not sent; re-enable it with PATCH {"enabled": true} and replay';

/**
 * A delivery of a webhook health disabled: no request, ended as failed with its counters, its
 * log entry and its retained message (so a bulk replay after re-enabling sends it), and the
 * on_failure hook.
 */
async function endDisabled(job: DeliveryJob, w: { id: string; config: WebhookConfig }, attempt: number, from: RecordFrom): Promise<'recorded' | DeliveryRecord> {
  const message = await jobMessage(job);
  const log = await logAttempt(job, w.config, message, attempt, { ok: false, status_code: null, error: DISABLED_BY_HEALTH, response: '', duration_ms: 0, stopped: true });
  const done = await recordEnd(job, w.config, { ok: false, error: DISABLED_BY_HEALTH, attempts: attempt - 1, log }, from);
  if (done === 'recorded' && hookApplies(w.config, false)) await runEndHook(job, false, undefined, DISABLED_BY_HEALTH);
  return done;
}

/** The workflow state of a delivery whose record says it ended. */
function stateFromRecord(state: RetryState, rec: DeliveryRecord): RetryState {
  if (rec.outcome === 'retrying') throw new Error('a delivery still retrying has not ended');
  return { ...state, attempts: rec.attempts || state.attempts, outcome: rec.outcome, last_error: rec.error ?? state.last_error, ...(rec.response !== undefined ? { response: rec.response } : {}) };
}

/**
 * A retry workflow execution failed (its SendMessage failed past the ASL's retries, or it was
 * aborted or timed out: lambda/handlers/webhook-attempt.ts): the retry job never reached the
 * queue, so the delivery ends here as failed, with its counters, unless its record says it ended
 * already or its `queued` note is past this execution's attempts (a stale failure: its job was
 * received and a later execution carries the delivery on); {@link finishDelivery} then runs its on_failure hook. Without it the record stayed
 * `retrying` for ever.
 */
export async function giveUpDelivery(state: RetryState): Promise<RetryState> {
  const { job } = state;
  const rec = await readDelivery(keyOf(job));
  if (rec && rec.outcome !== 'retrying') return keepAgain(job, rec, () => jobMessage(job)).then(() => stateFromRecord(state, rec));
  // A stale failure: the record's note moved past this execution's retry, so its job reached the
  // queue (a SendMessage applied whose answer was lost, later tries failing) and a later attempt
  // handed the delivery on; the execution now running owns it.
  if (rec?.queued !== undefined && rec.queued !== state.attempts) {
    logger.warn('stale failure of a webhook retry execution ignored: its retry was made', { namespace: job.namespace, webhook: job.webhook_name, message_id: jobMessageId(job), attempts: state.attempts, queued: rec.queued });
    const { failure: _, ...rest } = state;
    return { ...rest, outcome: 'queued' };
  }
  const why = state.failure?.Error ?? 'Task failed';
  const error = `retry workflow failed (${why}) after: ${state.last_error}`;
  const w = await liveWebhook(job);
  // Like any delivery that ends in failure: a final entry in the delivery log (bulk replay finds
  // it) and the message kept for replay. First, as its load may throw (this run is made again).
  const log = w && (await giveUpEntry(job, w.config, state.attempts + 1, error));
  // Not DELIVERY_FAILED_LOG: the end's record writes that line, counted once per failed delivery.
  logger.error('retry workflow of a webhook delivery failed; ending the delivery', { namespace: job.namespace, webhook: job.webhook_name, message_id: jobMessageId(job), error, cause: state.failure?.Cause?.slice(0, 500) });
  const { failure: _, ...rest } = state;
  const from: RecordFrom = rec ? 'retrying' : 'none';
  if (!w) {
    if (!(await recordDropped(keyOf(job), { releasePending: false, now: Date.now() }, from))) {
      const now = await readDelivery(keyOf(job));
      if (now && now.outcome !== 'retrying') return stateFromRecord(rest, now);
    }
    return { ...rest, outcome: 'dropped' };
  }
  const done = await recordEnd(job, w.config, { ok: false, error, attempts: state.attempts, log }, from);
  if (done !== 'recorded') return stateFromRecord(rest, done);
  return { ...rest, outcome: 'failed', last_error: error };
}

/**
 * The log entry (and kept copy) of a delivery given up; none when its message is gone. A load that
 * keeps failing (throttled, unavailable) is thrown, before anything is recorded or released: the
 * run is made again and records the end once (Lambda retries the failed-execution rule's
 * asynchronous invocation twice, https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html;
 * the local runner 4 times): without the message, the end would delete a stored one, uncopied. */
async function giveUpEntry(job: DeliveryJob, c: WebhookConfig, attempt: number, error: string): Promise<CarriedEntry | undefined> {
  let message;
  try {
    message = await withRetries(() => jobMessage(job), OUTCOME_RETRIES);
  } catch (e) {
    if (isRetryableDependencyFailure(e)) throw e;
    logger.error('message of a given-up webhook delivery not loaded: no copy kept for replay', { namespace: job.namespace, webhook: job.webhook_name, message_id: jobMessageId(job), error: (e as Error).message });
    return undefined;
  }
  return logAttempt(job, c, message, attempt, { ok: false, status_code: null, error, response: '', duration_ms: 0, stopped: true });
}

/** The hook of a delivery a failed execution ended ({@link giveUpDelivery}), once. */
export async function finishDelivery(state: RetryState): Promise<RetryState> {
  if (state.outcome !== 'success' && state.outcome !== 'failed') return state;
  const rec = await readDelivery(keyOf(state.job));
  if (rec?.ended) return state;
  const ok = state.outcome === 'success';
  await runEndHook(state.job, ok, state.response, ok ? undefined : state.last_error);
  return state;
}
