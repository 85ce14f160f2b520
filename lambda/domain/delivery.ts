/**
 * One webhook delivery as data (DESIGN.md sections 9 and 13): the job that publish queues, the
 * state a retry workflow carries, and the request an attempt sends (body, templated headers,
 * signatures, gzip). Pure: sending is ../adapters/http-delivery.ts.
 */
import { gzipSync } from 'node:zlib';
import { isoTime } from './envelope';
import type { PublishedMessage } from './message';
import { signatureHeader, standardWebhooksHeaders } from './signatures';
import { headerValue, renderBodyTemplate, type TemplateVars } from './templates';
import type { WebhookConfig } from './webhooks';

/** What publish puts on the delivery queue: one message for one webhook incarnation. */
export interface DeliveryJob {
  namespace: string;
  webhook_id: string;
  webhook_name: string;
  message: PublishedMessage;
}

/** The input and output of each state of the retry workflow (webhook-retry.asl.json). */
export interface RetryState {
  job: DeliveryJob;
  /** Attempts made so far (all failed while the workflow waits). */
  attempts: number;
  /** Seconds the next Wait state waits (the computed backoff). */
  wait_seconds: number;
  last_error: string;
  /** Set by an attempt: loop again, or finish with the hooks. */
  outcome: 'retry' | 'success' | 'failed' | 'dropped';
  /** The receiver's answer of a successful attempt (for `{{.response}}`). */
  response?: string;
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
export function defaultBody(m: PublishedMessage) {
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
 * so a configured header can never replace a signature.
 * @example buildRequest(config, secret, message, Date.now()).headers['webhook-signature'] // 'v1,...'
 */
export function buildRequest(c: WebhookConfig, secret: string, m: PublishedMessage, nowMs: number): BuiltRequest | { tooLarge: number } {
  const body = deliveryBody(c, m);
  if (body.length > c.max_payload_size) return { tooLarge: body.length };
  const vars: TemplateVars = { ...messageVars(m), signature: signatureHeader(body, secret) };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.headers ?? {})) headers[name.toLowerCase()] = headerValue(value, vars);
  headers['content-type'] ??= 'application/json';
  headers['user-agent'] ??= 'messaging-webhooks/1';
  Object.assign(headers, standardWebhooksHeaders(m.message_id, Math.floor(nowMs / 1000), body, secret));
  if (c.compression === 'gzip') {
    headers['content-encoding'] = 'gzip';
    return { headers, body: gzipSync(body), size: body.length };
  }
  return { headers, body, size: body.length };
}

export const PAYLOAD_TOO_LARGE = 'payload too large';
