/**
 * One webhook delivery as data (DESIGN.md sections 9 and 13): the job that publish queues, the
 * state a retry workflow carries, and the request an attempt sends (body, templated headers,
 * signatures, gzip). Pure: sending is ../adapters/http-delivery.ts.
 */
import { gzipSync } from 'node:zlib';
import { isoTime } from '../../core/rules/envelope';
import type { PublishedMessage } from '../../core/rules/message';
import { signatureHeader, standardWebhooksHeaders } from './signatures';
import { bodyTemplateFloor, headerValue, MAX_RENDERED_HEADERS_BYTES, renderBodyTemplate, renderedBytes, varSizes, type TemplateVars } from './templates';
import { REDACTED, type WebhookConfig } from './webhooks';

export * from './delivery-jobs';
import type { DeliveryJob } from './delivery-jobs';

/** The input and output of each state of the retry workflow (webhook-retry.asl.json). */
export interface RetryState {
  /** As queued: a job by reference stays one, so no state carries a large message. */
  job: DeliveryJob;
  /** Attempts made so far (all failed while the workflow waits). */
  attempts: number;
  /** Seconds the next Wait state waits (the computed backoff). */
  wait_seconds: number;
  last_error: string;
  /**
   * Set by an attempt: loop again, finish with the hooks, or (`queued`) the attempt was held by
   * the webhook's limits or circuit and handed to the delivery queue, which carries it on.
   */
  outcome: 'retry' | 'success' | 'failed' | 'dropped' | 'queued';
  /** The receiver's answer of a successful attempt (for `{{.response}}`). */
  response?: string;
  /** Set by the workflow's Catch (States.ALL after the Task's retries): why the Task failed. */
  failure?: { Error?: string; Cause?: string };
}

/** The template values of a message; `signature`, `response` and `error` come later. */
export function messageVars(m: PublishedMessage): TemplateVars {
  return {
    topic: m.topic,
    payload: m.payload,
    timestamp: isoTime(m.published_at),
    message_id: m.message_id,
    properties: JSON.stringify(m.properties ?? {}),
  };
}

/** The default body (DESIGN.md section 9): `{topic, payload, timestamp, message_id, properties}`. */
function defaultBody(m: PublishedMessage) {
  return { topic: m.topic, payload: m.payload, timestamp: isoTime(m.published_at), message_id: m.message_id, properties: m.properties ?? {} };
}

/** The exact body bytes of a delivery (before compression): the default body or the rendered template. */
export function deliveryBody(c: Pick<WebhookConfig, 'body_template'>, m: PublishedMessage): Buffer {
  const body = c.body_template ? renderBodyTemplate(c.body_template, messageVars(m)) : defaultBody(m);
  return Buffer.from(JSON.stringify(body), 'utf8');
}

export interface BuiltRequest {
  headers: Record<string, string>;
  /** What goes on the wire (gzipped when the webhook asks for it). */
  body: Buffer;
  /** Size of the body before compression, the one `max_payload_size` limits. */
  size: number;
}

/**
 * Builds the request of one attempt, or reports `payload too large` when the body exceeds
 * `max_payload_size` (no request is made then, DESIGN.md section 13). Configured headers first,
 * then the service's own (Content-Type unless configured, Content-Encoding, Standard Webhooks),
 * so a configured header can never replace a signature. `previousSecrets` (extension: a rotated
 * secret in its grace period) add their Standard Webhooks signatures after the current one.
 * @example buildRequest(config, secret, message, Date.now()).headers['webhook-signature'] // 'v1,...'
 */
export function buildRequest(c: WebhookConfig, secret: string, m: PublishedMessage, nowMs: number, previousSecrets: string[] = []): BuiltRequest | TooLarge {
  // A 64 KiB template may repeat {{.payload}} thousands of times: its size is bounded from
  // below without rendering it, so such a body is refused before it is built.
  if (c.body_template) {
    const floor = bodyTemplateFloor(c.body_template, messageVars(m));
    if (floor > c.max_payload_size) return { tooLarge: floor };
  }
  const body = deliveryBody(c, m);
  if (body.length > c.max_payload_size) return { tooLarge: body.length };
  const vars: TemplateVars = { ...messageVars(m), signature: signatureHeader(body, secret) };
  // Headers too are sized before they are rendered: 8 KiB of `{{.payload}}` x682 with a 256 KiB
  // message would be a 175 MB string for one delivery.
  const sizes = varSizes(vars);
  let headerBytes = 0;
  for (const [name, value] of Object.entries(c.headers ?? {})) headerBytes += Buffer.byteLength(name, 'utf8') + renderedBytes(value, vars, sizes);
  if (headerBytes > MAX_RENDERED_HEADERS_BYTES) return { tooLarge: headerBytes, what: 'headers' };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.headers ?? {})) headers[name.toLowerCase()] = headerValue(value, vars);
  headers['content-type'] ??= 'application/json';
  headers['user-agent'] ??= 'messaging-webhooks/1';
  // A rotated secret in its grace period signs too (extension): one more signature in the header.
  Object.assign(headers, standardWebhooksHeaders(m.message_id, Math.floor(nowMs / 1000), body, secret, previousSecrets));
  if (c.compression === 'gzip') {
    headers['content-encoding'] = 'gzip';
    return { headers, body: gzipSync(body), size: body.length };
  }
  return { headers, body, size: body.length };
}

export const PAYLOAD_TOO_LARGE = 'payload too large';

/** Why no request is built: the body over `max_payload_size`, or (`what: 'headers'`) the rendered headers over their budget. */
export interface TooLarge {
  tooLarge: number;
  what?: 'headers';
}

/** The one-line error of a delivery refused for its size. */
export const tooLargeError = (t: TooLarge) =>
  t.what === 'headers' ? `headers too large: ${t.tooLarge} bytes rendered, over ${MAX_RENDERED_HEADERS_BYTES}` : PAYLOAD_TOO_LARGE;

/**
 * The headers of a built request as a log line shows them: the values of configured headers are
 * credentials (API tokens, basic auth) and are redacted; the service's own headers (content
 * type, user agent, the Standard Webhooks id, timestamp and signature) are shown, since they are
 * what a receiver's verification failure is debugged with.
 * @example loggableHeaders({ authorization: 'Bearer x', 'webhook-id': 'M1' }, { Authorization: '...' }) // { authorization: '[redacted]', 'webhook-id': 'M1' }
 */
export function loggableHeaders(headers: Record<string, string>, configured: Record<string, string> | undefined): Record<string, string> {
  const secret = new Set(Object.keys(configured ?? {}).map((n) => n.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, secret.has(name) ? REDACTED : value]));
}
