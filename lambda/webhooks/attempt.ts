/**
 * One attempt of a delivery: the webhook as it is now, the job's message, and the request built
 * and sent, with the request and response lines a webhook's own flags ask for.
 */
import { buildRequest, isReferenceJob, loggableHeaders, tooLargeError, type DeliveryJob, type JobTarget } from './rules/delivery';
import type { PublishedMessage } from '../core/rules/message';
import { sendRequest, type DeliveryResult } from './storage/http-delivery';
import { getWebhook, unopenedSecrets, type WebhookItem } from './storage/webhooks';
import { loadWebhookMessage } from './storage/webhook-messages';
import { logger } from '../core/observability';
import { loadReplayMessage } from './replay';
import { graceSecrets } from './rotation';

export interface AttemptResult extends DeliveryResult {
  /** The body exceeded max_payload_size: no request was made, and none will be. */
  tooLarge?: boolean;
}

/**
 * The message of a job: carried inline, or loaded from where publish stored it. Loaded for each
 * attempt and never put back into a job or a workflow state, which stay small.
 */
export function jobMessage(job: DeliveryJob): Promise<PublishedMessage> {
  if (isReferenceJob(job) && job.replay_id) return loadReplayMessage(job); // extension: replay
  return isReferenceJob(job) ? loadWebhookMessage(job.namespace, job.message_ref.message_id) : Promise.resolve(job.message);
}

/** The webhook of a job if it still exists as the same incarnation; deleted or recreated: undefined. */
export async function liveWebhook(job: JobTarget): Promise<WebhookItem | undefined> {
  const w = await getWebhook(job.namespace, job.webhook_name);
  return w && w.id === job.webhook_id ? w : undefined;
}

/** Levels at which the webhook traffic lines are shown as they are; any other becomes INFO. */
const KEEP_LEVEL = new Set(['TRACE', 'DEBUG', 'INFO', 'SILENT']);

/**
 * The logger of the lines a webhook's own flags ask for (`log_requests`, `log_responses`,
 * `debug`). The flag is the webhook owner's explicit request, so the lines are written at INFO
 * even where the function logs only WARN and above (the local runtime, or an operator who cut
 * the noise): a child of the shared logger (same keys and request id) at INFO. SILENT stays
 * silent, and a more verbose level is kept.
 */
function trafficLogger() {
  return KEEP_LEVEL.has(logger.getLevelName()) ? logger : logger.createChild({ logLevel: 'INFO' });
}

/** Builds and sends one attempt; logs request and response details only when the webhook asks. */
export async function attemptOnce(w: WebhookItem, m: PublishedMessage, attempt: number, now = Date.now()): Promise<AttemptResult> {
  const c = w.config;
  const meta = { webhook: w.name, namespace: w.namespace, message_id: m.message_id, attempt };
  const grace = graceSecrets(w, now); // extension: rotation
  // A secret that did not open fails this delivery, saying which (retried as any failure is).
  const unopened = [...unopenedSecrets(w)].filter(([field]) => field !== 'previous_secret' || grace.length > 0);
  if (unopened.length) {
    const error = `webhook secret ${unopened.map(([field, why]) => `${field} cannot be opened (${why})`).join('; ')}; set it again with PUT or PATCH`;
    logger.warn('webhook secret cannot be opened; not sent', { ...meta, fields: unopened.map(([f]) => f) });
    return { ok: false, status_code: null, error, response: '', duration_ms: 0 };
  }
  const built = buildRequest(c, w.secret, m, now, grace);
  if ('tooLarge' in built) {
    // Final: the same message renders the same size on every attempt.
    const error = tooLargeError(built);
    if (built.what === 'headers') logger.warn('webhook headers larger than their budget once rendered; not sent', { ...meta, size: built.tooLarge });
    else logger.warn('webhook body larger than max_payload_size; not sent', { ...meta, size: built.tooLarge, max_payload_size: c.max_payload_size });
    return { ok: false, status_code: null, error, response: '', duration_ms: 0, tooLarge: true };
  }
  const traffic = c.log_requests || c.log_responses || c.debug ? trafficLogger() : undefined;
  // Configured header values are credentials: the line shows their names only.
  if (traffic && (c.log_requests || c.debug)) {
    traffic.info('webhook request', { ...meta, method: c.method, url: c.url, headers: loggableHeaders(built.headers, c.headers), body: built.body.toString(c.compression ? 'base64' : 'utf8') });
  }
  const r = await sendRequest({ url: c.url, method: c.method, headers: built.headers, body: built.body, timeoutSeconds: c.timeout, tls: c.tls, namespace: w.namespace });
  if (traffic && (c.log_responses || c.debug)) traffic.info('webhook response', { ...meta, status_code: r.status_code, error: r.error, duration_ms: r.duration_ms, response: r.response });
  else logger.debug('webhook attempt', { ...meta, ok: r.ok, status_code: r.status_code, error: r.error, duration_ms: r.duration_ms });
  return r;
}
