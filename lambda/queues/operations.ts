/**
 * Queue operations behind the HTTP handler: creating and describing queues, consume with long
 * polling, ack and batch ack, and the bookkeeping of messages that leave a queue (counters,
 * dead-lettering). Storage details live in ../storage/queues.ts and ../storage/queue-messages.ts.
 */
import { ApiError, alreadyExists, notFound } from '../domain/errors';
import { isoTime } from '../domain/envelope';
import type * as z from 'zod/mini';
import type { consumeSchema, createQueueSchema } from '../domain/queues';
import { config } from '../config';
import { createResource, deleteResource, listResources, newResourceFields, resourceSummary } from '../storage/resources';
import { countConsumers, getQueue, queueBindingSettings, recordConsumer, releaseQueueRoom, type QueueItem } from '../storage/queues';
import { ackMessage, claimMessages, deleteMessage, type QueueMessageItem } from '../storage/queue-messages';
import { LONG_POLL_INTERVAL_MS, waitForArrival } from '../publishing/arrivals';
import { deadLetter } from '../publishing/dead-letter';
import { countMetric, METRIC } from '../observability';

const queueNotFound = (name: string) => notFound('QUEUE_NOT_FOUND', `Queue ${name}`);

async function requireQueue(ns: string, name: string): Promise<QueueItem> {
  const q = await getQueue(ns, name);
  if (!q) throw queueNotFound(name);
  return q;
}

/** Fields of create responses and list items (SPEC.md "Queue"). */
const summary = (q: QueueItem, consumerCount: number) => ({ ...resourceSummary(q), consumer_count: consumerCount });

export async function createQueue(ns: string, input: z.output<typeof createQueueSchema>, now: number) {
  const item: QueueItem = {
    ...newResourceFields('QUEUE', ns, input.name, input.topic_filter, now),
    max_size_mb: input.max_size_mb,
    message_ttl_seconds: input.message_ttl_seconds,
    max_retries: input.max_retries,
    ...(input.dead_letter_topic ? { dead_letter_topic: input.dead_letter_topic } : {}),
    message_count: 0,
    bytes: 0,
  };
  if (!(await createResource(item, { ...queueBindingSettings(item) }))) throw alreadyExists('QUEUE_ALREADY_EXISTS', `Queue ${input.name}`);
  return summary(item, 0);
}

export async function describeQueue(ns: string, name: string, now: number) {
  const q = await requireQueue(ns, name);
  return {
    ...summary(q, await countConsumers(ns, q.id, now)),
    max_size_mb: q.max_size_mb,
    message_ttl_seconds: q.message_ttl_seconds,
    max_retries: q.max_retries,
    dead_letter_topic: q.dead_letter_topic ?? null,
  };
}

export async function listQueues(ns: string, limit: number, offset: number, now: number) {
  const { items, total } = await listResources<QueueItem>(ns, 'QUEUE', limit, offset);
  const counts = await Promise.all(items.map((q) => countConsumers(ns, q.id, now)));
  return { items: items.map((q, i) => summary(q, counts[i])), total };
}

export async function deleteQueue(ns: string, name: string, now: number) {
  if (!(await deleteResource(ns, 'QUEUE', name, now))) throw queueNotFound(name);
}

/** A consumed message as the API returns it (SPEC.md "Consumed queue message"). */
function consumed(m: QueueMessageItem) {
  return {
    message_id: m.message_id,
    payload: m.payload,
    content_type: m.content_type,
    properties: m.properties ?? {},
    publish_time: isoTime(m.published_at),
    receive_count: m.receive_count,
    receipt_handle: m.receipt as string,
  };
}

/**
 * Bookkeeping for messages a consume found expired or out of deliveries: dead-letter (or drop)
 * the latter, delete them, and take both out of the queue's counters.
 */
async function settleLeftovers(q: QueueItem, expired: QueueMessageItem[], exhausted: QueueMessageItem[], now: number) {
  let deadLettered = 0;
  let dropped = 0;
  for (const m of exhausted) {
    const sent = await deadLetter(q.namespace, q.dead_letter_topic, m, { dlq_source_queue: q.name, dlq_receive_count: String(m.receive_count) }, now);
    if (sent) deadLettered++;
    else dropped++;
    await deleteMessage(q.id, m.message_id);
  }
  countMetric(METRIC.deadLettered, deadLettered, { namespace: q.namespace, dimensions: { reason: 'max_retries' } });
  countMetric(METRIC.dropped, dropped, { namespace: q.namespace, dimensions: { reason: 'max_retries' } });
  const gone = [...expired, ...exhausted];
  if (gone.length) {
    await releaseQueueRoom(q.namespace, q.name, q.id, gone.length, gone.reduce((n, m) => n + m.size, 0), { dropped, deadLettered });
  }
}

export interface ConsumeOptions extends z.output<typeof consumeSchema> {
  consumer: string;
  /** Epoch ms by which the consume must answer (the Lambda's remaining time). */
  deadlineMs?: number;
}

/**
 * Claims up to `max_messages` visible messages, waiting up to `timeout_seconds` for the first
 * one (long polling: returns as soon as one arrives; a message whose visibility timeout ends
 * during the wait counts as arriving).
 */
export async function consume(ns: string, name: string, opts: ConsumeOptions) {
  const q = await requireQueue(ns, name);
  const start = Date.now();
  await recordConsumer(ns, q.id, opts.consumer, start);
  const waitSeconds = Math.min(opts.timeout_seconds, config().maxLongPollSeconds);
  const deadline = Math.min(start + waitSeconds * 1000, opts.deadlineMs ?? Infinity);
  for (;;) {
    const now = Date.now();
    const r = await claimMessages(q, { max: opts.max_messages, visibilityMs: opts.visibility_timeout_seconds * 1000, now });
    if (r.expired.length || r.exhausted.length) await settleLeftovers(q, r.expired, r.exhausted, now);
    const left = deadline - Date.now();
    if (r.claimed.length > 0 || left <= 0) return r.claimed.map(consumed);
    await waitForArrival(q.id, Math.min(LONG_POLL_INTERVAL_MS, left));
  }
}

const ackError = (reason: 'MESSAGE_NOT_FOUND' | 'INVALID_RECEIPT_HANDLE', messageId: string) =>
  reason === 'MESSAGE_NOT_FOUND'
    ? new ApiError(404, 'MESSAGE_NOT_FOUND', `Message ${messageId} is not in the queue (already acknowledged, expired or never there).`)
    : new ApiError(409, 'INVALID_RECEIPT_HANDLE', 'The receipt handle is not the current one of this message (expired, superseded by a later receive, or wrong); consume the message again.');

/** Acknowledges one message; returns the time of the ack. */
export async function ackOne(ns: string, name: string, messageId: string, handle: string, now: number): Promise<number> {
  const q = await requireQueue(ns, name);
  const out = await ackMessage(q.id, messageId, handle, now);
  if (!out.ok) throw ackError(out.reason, messageId);
  await releaseQueueRoom(ns, q.name, q.id, 1, out.message.size);
  return now;
}

/** Batch ack (extension): each entry judged like a single ack, results in request order. */
export async function ackBatch(ns: string, name: string, entries: { message_id: string; receipt_handle: string }[], now: number) {
  const q = await requireQueue(ns, name);
  const outcomes = await Promise.all(entries.map((e) => ackMessage(q.id, e.message_id, e.receipt_handle, now)));
  const acked = outcomes.flatMap((o) => (o.ok ? [o.message] : []));
  if (acked.length) await releaseQueueRoom(ns, q.name, q.id, acked.length, acked.reduce((n, m) => n + m.size, 0));
  return {
    results: outcomes.map((o, i) => {
      if (o.ok) return { message_id: entries[i].message_id, acknowledged: true, acknowledged_at: isoTime(now) };
      const e = ackError(o.reason, entries[i].message_id);
      return { message_id: entries[i].message_id, acknowledged: false, error: { code: e.code, message: e.message } };
    }),
    acknowledged_count: acked.length,
  };
}
