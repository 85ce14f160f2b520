/**
 * One webhook delivery as data (DESIGN.md sections 9 and 13): the job that publish queues, the
 * state a retry workflow carries, and the request an attempt sends (body, templated headers,
 * signatures, gzip). Pure: sending is ../adapters/http-delivery.ts.
 */
import { gzipSync } from 'node:zlib';
import { isoTime } from './envelope';
import type { PublishedMessage } from './message';
import { signatureHeader, standardWebhooksHeaders } from './signatures';
import { sqsJson } from './queue-messages';
import { bodyTemplateFloor, headerValue, MAX_RENDERED_HEADERS_BYTES, renderBodyTemplate, renderedBytes, varSizes, type TemplateVars } from './templates';
import { MAX_MAX_RETRY_DELAY, MAX_RETRY_COUNT, REDACTED, type WebhookConfig } from './webhooks';

/** Which webhook incarnation a job delivers to. */
export interface JobTarget {
  namespace: string;
  webhook_id: string;
  webhook_name: string;
  /**
   * Set on a replay (extension, lambda/webhooks/replay.ts): the delivery is a new one of the same
   * message (same `webhook-id` header), named apart from the first (retry workflow execution),
   * and a replay by reference loads its message from the delivery log's retained copy.
   */
  replay_id?: string;
  /**
   * Set on a job whose first attempt failed but whose retry workflow could not be started
   * (StartExecution throttled past its retries): the job waits on the queue and, when received,
   * starts the workflow without POSTing again (lambda/webhooks/deliver.ts).
   */
  start_retry?: { attempts: number; last_error: string; retry_at: number };
  /**
   * Epoch ms of the `rate_limit` slot this job reserved before it was held back
   * (lambda/webhooks/endpoint-limits.ts): when it comes back it goes in that slot, without
   * reserving again. Never carried past the attempt it was reserved for.
   */
  rate_slot_at?: number;
  /**
   * The webhook's `updated_at` when the slot was reserved: a slot reserved under an earlier
   * configuration (a `rate_limit` since changed) is given up and a new one reserved.
   */
  rate_slot_of?: number;
  /**
   * Epoch ms when the job was parked behind its webhook's open circuit
   * (lambda/webhooks/parking.ts): parked again, it keeps its place (oldest first).
   */
  parked_at?: number;
}

/**
 * The probe ticket of a webhook whose deliveries are parked (lambda/webhooks/parking.ts): one SQS
 * message on the delivery queue per webhook and run, back at the probe's time. `probe_ticket` is
 * the `health.ticket_at` it was sent under.
 */
export interface ProbeTicket {
  namespace: string;
  webhook_id: string;
  webhook_name: string;
  probe_ticket: number;
}

export const isProbeTicket = (j: unknown): j is ProbeTicket => typeof (j as ProbeTicket | null)?.probe_ticket === 'number';

/** A job that carries its message. */
export interface InlineJob extends JobTarget {
  message: PublishedMessage;
}

/**
 * A job whose message is stored apart, once per message (storage/webhook-messages.ts, key
 * `webhookMessage(namespace, message_id)`), because the job would not fit an SQS message or a
 * Step Functions execution input (256 KiB each) with it. Every attempt loads the message.
 */
export interface ReferenceJob extends JobTarget {
  message_ref: { message_id: string };
}

/**
 * What publish puts on the delivery queue and the retry workflow carries: one message for one
 * webhook incarnation, inline or by reference (the SQS extended client's pattern).
 */
export type DeliveryJob = InlineJob | ReferenceJob;

export const isReferenceJob = (j: DeliveryJob): j is ReferenceJob => 'message_ref' in j;
export const jobMessageId = (j: DeliveryJob) => (isReferenceJob(j) ? j.message_ref.message_id : j.message.message_id);

/**
 * A job whose JSON is larger than this (UTF-8 bytes) carries a reference instead of its message.
 * Below the 256 KiB of an SQS message and of a Step Functions state (the workflow adds its
 * counters, the last error and up to 4 KiB of response to the job), with room to spare.
 */
export const INLINE_JOB_LIMIT_BYTES = 200 * 1024;

/**
 * Bytes of a job (or part of one) as SQS receives it: the ASCII-only JSON of `sqsJson`, in which
 * every character from U+007F up is a 6-byte escape, so a payload of such characters is up to
 * three times its UTF-8 size (issue 22: sized with plain JSON, a 190 KiB payload became a body
 * SQS refused). Step Functions states carry plain JSON, which is never longer.
 */
export const jobBytes = (v: unknown) => sqsJson(v).length;

/**
 * How long a stored message is kept (seconds, for its DynamoDB TTL): longer than any job can
 * live. A job waits at most 14 days in SQS (the longest retention, DLQ included), then its
 * retries take at most MAX_RETRY_COUNT waits of MAX_MAX_RETRY_DELAY, whatever the webhook's
 * configuration becomes meanwhile; a day more covers attempts, task retries and clock skew.
 */
export const STORED_MESSAGE_TTL_SECONDS = 14 * 86400 + MAX_RETRY_COUNT * MAX_MAX_RETRY_DELAY + 86400;

/**
 * Bytes of inline jobs one publish may build before its 201 (issue 22: 1,000 webhooks × a
 * 150 KiB message were about 150 MB of job strings). Past it, the messages whose jobs add up to
 * the most go by reference (stored once; each job then a few hundred bytes), so a publish builds
 * at most this much plus about 400 bytes per job; the number of jobs is bounded by the
 * namespace's webhooks (its cap) times the messages of the publish.
 */
export const FANOUT_INLINE_BUDGET_BYTES = 1024 * 1024;

/**
 * The jobs to queue for `jobs` and the messages to store first: a message any of whose jobs
 * would exceed `limit` travels by reference in all its jobs and is stored once, however many
 * webhooks match it; so do the messages with the most inline bytes while all inline jobs
 * together exceed `budget`. Pure.
 * @example packJobs([{ ..., message: { payload: 'x'.repeat(250_000), ... } }]).stored.length // 1
 */
export function packJobs(jobs: InlineJob[], limit = INLINE_JOB_LIMIT_BYTES, budget = FANOUT_INLINE_BUDGET_BYTES): { jobs: DeliveryJob[]; stored: PublishedMessage[] } {
  const messageBytes = new Map<PublishedMessage, number>();
  const inlineBytes = new Map<PublishedMessage, number>();
  const byReference = new Set<PublishedMessage>();
  for (const j of jobs) {
    let size = messageBytes.get(j.message);
    if (size === undefined) messageBytes.set(j.message, (size = jobBytes(j.message)));
    // The job's JSON with `"message":0` is the job's envelope plus one byte of placeholder.
    const envelope = jobBytes({ ...j, message: 0 }) - 1;
    if (envelope + size > limit) byReference.add(j.message);
    inlineBytes.set(j.message, (inlineBytes.get(j.message) ?? 0) + envelope + size);
  }
  let total = 0;
  for (const [m, b] of inlineBytes) if (!byReference.has(m)) total += b;
  for (const [m, b] of [...inlineBytes].filter(([m]) => !byReference.has(m)).sort((x, y) => y[1] - x[1])) {
    if (total <= budget) break;
    byReference.add(m);
    total -= b;
  }
  return {
    jobs: jobs.map((j) => {
      if (!byReference.has(j.message)) return j;
      const { message, ...target } = j;
      return { ...target, message_ref: { message_id: message.message_id } };
    }),
    stored: [...byReference],
  };
}

/** The input and output of each state of the retry workflow (webhook-retry.asl.json). */
export interface RetryState {
  /** As queued: a job by reference stays one, so no state carries a large message. */
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
  /** Set by the workflow's Catch (States.ALL after the Task's retries): why the Task failed. */
  failure?: { Error?: string; Cause?: string };
  /** Rounds this execution's next attempt was held back by the webhook's limits or circuit. */
  held?: number;
}

/**
 * Rounds a retry may be held back by limits (ShouldWait, Wait, Attempt, Decide: 11 history
 * events each) before the delivery ends as failed: 1,000 rounds are 11,000 events, well under a
 * Standard execution's 25,000 with room for 20 retries and their Task retries
 * (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html: "Maximum execution
 * history size: 25,000 events"). At least about 20 minutes of 1 to 3 s waits for `max_in_flight`,
 * hours behind an open circuit.
 */
export const MAX_HELD_ROUNDS = 1000;

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
 * so a configured header can never replace a signature. `previousSecrets` (extension: a rotated
 * secret in its grace period) add their Standard Webhooks signatures after the current one.
 * @example buildRequest(config, secret, message, Date.now()).headers['webhook-signature'] // 'v1,...'
 */
export function buildRequest(c: WebhookConfig, secret: string, m: PublishedMessage, nowMs: number, previousSecrets: string[] = []): BuiltRequest | TooLarge {
  // A 64 KiB template may repeat {{.payload}} thousands of times: its size is bounded from
  // below without rendering it, so such a body is refused before it is built (issue 22).
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
