/**
 * The delivery jobs publish queues (DESIGN.md section 9): what a job targets, inline or by
 * reference, and how a publish's jobs are packed under SQS's message size. Apart from the request
 * an attempt builds (./delivery.ts), so the publish function's bundle carries no webhook
 * configuration rules.
 */
import type { PublishedMessage } from '../../core/rules/message';
import { sqsJson } from '../../core/rules/queue-messages';
import { MAX_MAX_RETRY_DELAY, MAX_RETRY_COUNT } from './retry-limits';

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
   * Set on a retry the workflow handed back to the queue after its backoff because the webhook's
   * limits or open circuit held it (lambda/webhooks/retry-handoff.ts): `attempts` made so far, so
   * the delivery function makes attempt `attempts + 1` through the same gate as first attempts.
   */
  retry?: { attempts: number; last_error: string };
  /**
   * Epoch ms of the `rate_limit` slot this job reserved before it was held back
   * (lambda/webhooks/endpoint-limits.ts): when it comes back it goes in that slot, without
   * reserving again. Never carried past the attempt it was reserved for.
   */
  rate_slot_at?: number;
  /**
   * The version of the webhook's rate when the slot was reserved (the `updated_at` of the change
   * that set its `rate_limit`): a slot reserved under a `rate_limit` since changed is given up and
   * a new one reserved; a change that kept the rate keeps it.
   */
  rate_slot_of?: number;
  /**
   * Epoch ms when the job was parked behind its webhook's open circuit
   * (lambda/webhooks/parking.ts): parked again, it keeps its place (oldest first).
   */
  parked_at?: number;
  /**
   * Epoch ms when the job began to wait for an in-flight place (lambda/webhooks/place-wait.ts):
   * waiting again, it keeps its place (oldest first).
   */
  waiting_at?: number;
  /** The in-flight lease a hand-off took for this job (lambda/webhooks/place-wait.ts): it goes on it, not behind the waiting. */
  place_lease?: string;
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

/**
 * The place check of a webhook whose deliveries wait for an in-flight place
 * (lambda/webhooks/place-wait.ts): one SQS message per webhook while they wait. `place_check` is
 * the stamp noted on the webhook's in-flight item when it was sent.
 */
export interface PlaceCheck {
  namespace: string;
  webhook_id: string;
  webhook_name: string;
  place_check: number;
}

export const isPlaceCheck = (j: unknown): j is PlaceCheck => typeof (j as PlaceCheck | null)?.place_check === 'number';

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
 * A job larger than this ({@link jobBytes}) carries a reference instead of its message. Below the
 * 256 KiB of an SQS message and of a Step Functions execution input and state ("Maximum input or
 * output size for a task, state, or execution: 256 KiB of data as a UTF-8 encoded string",
 * https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html), with room for what
 * the retry state adds (the retry's attempt count and last error, the state's counters).
 */
export const INLINE_JOB_LIMIT_BYTES = 200 * 1024;

/**
 * Bytes of a job (or part of one) as the largest carrier holds it: the retry workflow's execution
 * input and Queue state carry the job as SQS receives it (the ASCII-only JSON of `sqsJson`, in
 * which every character from U+007F up is a 6-byte escape) inside a JSON string, where each quote
 * and backslash of that JSON is escaped again. A payload of short JSON strings is near twice its
 * size there (sized by its SQS body, a 117 KiB payload of quotes was an inline job of a 360 KB
 * execution input that Step Functions refuses); SQS's body is never longer. Additive over the
 * parts of a job (escaping is per character), so an envelope's and its message's sizes add up.
 */
export const jobBytes = (v: unknown) => {
  const s = sqsJson(v);
  let n = s.length;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 34 || s.charCodeAt(i) === 92) n++;
  return n;
};

/**
 * How long a stored message is kept (seconds, for its DynamoDB TTL): longer than any job can
 * live. A job waits at most 14 days in SQS (the longest retention, DLQ included), then its
 * retries take at most MAX_RETRY_COUNT waits of MAX_MAX_RETRY_DELAY, whatever the webhook's
 * configuration becomes meanwhile; a day more covers attempts, task retries and clock skew.
 */
export const STORED_MESSAGE_TTL_SECONDS = 14 * 86400 + MAX_RETRY_COUNT * MAX_MAX_RETRY_DELAY + 86400;

/**
 * Bytes of inline jobs one publish may build before its 201 (1,000 webhooks × a
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
