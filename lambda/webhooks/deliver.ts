/**
 * Delivering one job: the first attempt (delivery Lambda, from SQS), the later attempts and the
 * hooks (the retry workflow's Task states), and the status counters, which count each delivery
 * once, however many attempts it took (DESIGN.md section 9). A job by reference loads its message
 * for each attempt and hook; the job and the workflow state keep only the reference.
 */
import { mayRetry, retryDelaySeconds } from '../domain/backoff';
import { buildRequest, isReferenceJob, jobMessageId, loggableHeaders, PAYLOAD_TOO_LARGE, type DeliveryJob, type JobTarget, type RetryState } from '../domain/delivery';
import type { PublishedMessage } from '../domain/message';
import { sendRequest, type DeliveryResult } from '../adapters/http-delivery';
import { executionName, retryWorkflow } from '../adapters/retry-workflow';
import { getWebhook, recordOutcome, recordRetryScheduled, releasePending, type WebhookItem } from '../storage/webhooks';
import { loadWebhookMessage } from '../storage/webhook-messages';
import { countMetric, logger, METRIC } from '../observability';
import { runHooks } from './hooks';

export interface AttemptResult extends DeliveryResult {
  /** The body exceeded max_payload_size: no request was made, and none will be. */
  tooLarge?: boolean;
}

/**
 * Logged once per delivery that ends in failure; the stack counts these lines (a metric filter)
 * and alarms on them. Names only: no payload, URL or secret.
 */
export const DELIVERY_FAILED_LOG = 'webhook delivery failed';

/** Counts a delivery that ended (success or failure after its retries). */
function countEnd(ns: string, ok: boolean) {
  countMetric(ok ? METRIC.webhookDelivered : METRIC.webhookFailed, 1, { namespace: ns });
}

function logFailure(job: DeliveryJob, error: string | null | undefined, attempts: number) {
  logger.warn(DELIVERY_FAILED_LOG, { namespace: job.namespace, webhook: job.webhook_name, message_id: jobMessageId(job), error, attempts });
}

/**
 * The message of a job: carried inline, or loaded from where publish stored it. Loaded for each
 * attempt and never put back into a job or a workflow state, which stay small.
 */
export function jobMessage(job: DeliveryJob): Promise<PublishedMessage> {
  return isReferenceJob(job) ? loadWebhookMessage(job.namespace, job.message_ref.message_id) : Promise.resolve(job.message);
}

/** The webhook of a job if it still exists as the same incarnation; deleted or recreated: undefined. */
export async function liveWebhook(job: JobTarget): Promise<WebhookItem | undefined> {
  const w = await getWebhook(job.namespace, job.webhook_name);
  return w && w.id === job.webhook_id ? w : undefined;
}

/** Builds and sends one attempt; logs request and response details only when the webhook asks. */
export async function attemptOnce(w: WebhookItem, m: PublishedMessage, attempt: number, now = Date.now()): Promise<AttemptResult> {
  const c = w.config;
  const built = buildRequest(c, w.secret, m, now);
  const meta = { webhook: w.name, namespace: w.namespace, message_id: m.message_id, attempt };
  if ('tooLarge' in built) {
    logger.warn('webhook body larger than max_payload_size; not sent', { ...meta, size: built.tooLarge, max_payload_size: c.max_payload_size });
    return { ok: false, status_code: null, error: PAYLOAD_TOO_LARGE, response: '', duration_ms: 0, tooLarge: true };
  }
  if (c.log_requests || c.debug) logger.info('webhook request', { ...meta, method: c.method, url: c.url, headers: c.debug ? loggableHeaders(built.headers, c.headers) : undefined, body: built.body.toString(c.compression ? 'base64' : 'utf8') });
  const r = await sendRequest({ url: c.url, method: c.method, headers: built.headers, body: built.body, timeoutSeconds: c.timeout, tls: c.tls });
  if (c.log_responses || c.debug) logger.info('webhook response', { ...meta, status_code: r.status_code, error: r.error, duration_ms: r.duration_ms, response: r.response });
  else logger.debug('webhook attempt', { ...meta, ok: r.ok, status_code: r.status_code, error: r.error, duration_ms: r.duration_ms });
  return r;
}

export type FirstOutcome = 'success' | 'failed' | 'retrying' | 'dropped';

/**
 * The first attempt of a job (from the delivery queue). A failure with retries left starts one
 * retry workflow execution; otherwise the delivery ends here, counted, with its hook.
 */
export async function deliverFirst(job: DeliveryJob): Promise<FirstOutcome> {
  const w = await liveWebhook(job);
  // Deleted or disabled after the publish: deliver nothing more (DESIGN.md section 9).
  if (!w || !w.config.enabled) return 'dropped';
  const message = await jobMessage(job);
  const now = Date.now();
  const r = await attemptOnce(w, message, 1, now);
  const ns = job.namespace;
  if (!r.ok && !r.tooLarge && mayRetry(w.config, 1)) {
    const wait = retryDelaySeconds(w.config, 1);
    const state: RetryState = { job, attempts: 1, wait_seconds: wait, last_error: r.error ?? 'failed', outcome: 'retry' };
    // Started before the counter moves: a failed start leaves the counters alone and the SQS
    // message is delivered again.
    await retryWorkflow().start(executionName(w.id, message.message_id), state);
    await recordRetryScheduled(ns, w.id, { nextRetry: Date.now() + wait * 1000, error: state.last_error, first: true, now: Date.now() });
    countMetric(METRIC.webhookRetried, 1, { namespace: ns });
    return 'retrying';
  }
  await recordOutcome(ns, w.id, { ok: r.ok, error: r.error ?? undefined, wasPending: false, now: Date.now() });
  countEnd(ns, r.ok);
  if (!r.ok) logFailure(job, r.error, 1);
  await runHooks(ns, w.name, w.config, message, { ok: r.ok, response: r.response, error: r.error ?? undefined }, Date.now());
  return r.ok ? 'success' : 'failed';
}

/**
 * One retry (the workflow's Attempt state), after its Wait. Returns the next state: `retry` with
 * the next computed wait, or `success` / `failed` / `dropped` to end the loop.
 */
export async function retryAttempt(state: RetryState): Promise<RetryState> {
  const { job } = state;
  const w = await liveWebhook(job);
  if (!w || !w.config.enabled) {
    if (w) await releasePending(job.namespace, w.id);
    return { ...state, outcome: 'dropped' };
  }
  const attempts = state.attempts + 1;
  const r = await attemptOnce(w, await jobMessage(job), attempts);
  if (!r.ok && !r.tooLarge && mayRetry(w.config, attempts)) {
    const wait = retryDelaySeconds(w.config, attempts);
    const error = r.error ?? 'failed';
    await recordRetryScheduled(job.namespace, w.id, { nextRetry: Date.now() + wait * 1000, error, first: false, now: Date.now() });
    countMetric(METRIC.webhookRetried, 1, { namespace: job.namespace });
    return { ...state, attempts, wait_seconds: wait, last_error: error, outcome: 'retry' };
  }
  await recordOutcome(job.namespace, w.id, { ok: r.ok, error: r.error ?? undefined, wasPending: true, now: Date.now() });
  countEnd(job.namespace, r.ok);
  if (!r.ok) logFailure(job, r.error, attempts);
  return r.ok
    ? { ...state, attempts, outcome: 'success', response: r.response }
    : { ...state, attempts, last_error: r.error ?? 'failed', outcome: 'failed' };
}

/** The workflow's Finish state: the hook of a delivery that ended after retries. */
export async function finishDelivery(state: RetryState): Promise<RetryState> {
  if (state.outcome !== 'success' && state.outcome !== 'failed') return state;
  const w = await liveWebhook(state.job);
  if (!w) return state;
  const ok = state.outcome === 'success';
  await runHooks(state.job.namespace, w.name, w.config, await jobMessage(state.job), { ok, response: state.response, error: ok ? undefined : state.last_error }, Date.now());
  return state;
}
