/**
 * The queue sink of publish (DESIGN.md sections 5 and 6): per bound queue, one conditional
 * counter update reserves room against `max_size_mb` (and one update counts the messages in their
 * expiry bucket, lambda/queues/storage/queues.ts), then SendMessageBatch stores the messages
 * in its SQS queue (10 entries and 1 MiB per call, all calls in parallel). Publish answers 201
 * only once every bound queue has them. A queue the messages would push over `max_size_mb` gets
 * them dead-lettered (or dropped and counted) instead, and the publish still succeeds for the
 * other bindings.
 *
 * Extensions: a standard queue's message carries the publisher's `delay_seconds` as SQS
 * DelaySeconds (none given: the queue's own default applies); an ordered queue's carries its
 * message group and deduplication id instead (SQS FIFO queues take no per-message delay, so they
 * apply only their own default), and its batches are sent in turn to keep their order.
 */
import { encodeQueueBody } from '../core/rules/queue-messages';
import { fifoGroupId } from '../core/rules/ordering';
import type { PublishedMessage } from '../core/rules/message';
import type { Binding } from '../core/storage/resources';
import { byExpiryBucket, getQueue, releaseQueueRoom, reserveQueueRoom, type QueueBindingSettings } from './storage/queues';
import { sendToSqsQueue, SqsQueueGoneError } from './storage/service-queues';
import { SqsSendError, type OutgoingMessage } from '../core/adapters/sqs';
import { deadLetterAll, deadLetterId, settleAll } from '../publishing/rules';
import { isFanoutRefusal } from '../publishing/write-budget';
import type { MessageDelivery, SinkContext } from '../publishing/sink';
import { countMetric, logger, METRIC } from '../core/observability';

const MIB = 1024 * 1024;

/** What SQS is sent for each message of a standard or an ordered queue. */
export function outgoing(bodies: string[], messages: PublishedMessage[], delivery: MessageDelivery[] | undefined, fifo: boolean): OutgoingMessage[] {
  return bodies.map((body, i) => {
    const d = delivery?.[i];
    if (fifo) {
      const dedupId = d?.dedupId ?? messages[i].message_id;
      return { body, groupId: fifoGroupId(messages[i].partition_key, dedupId), dedupId };
    }
    return d?.delaySeconds === undefined ? body : { body, delaySeconds: d.delaySeconds };
  });
}

export async function storeInQueues(ctx: SinkContext, bindings: Binding[], messages: PublishedMessage[]): Promise<void> {
  const bodies = messages.map((m) => encodeQueueBody(m));
  const bytes = messages.reduce((n, m) => n + m.size, 0);
  // Every queue finishes (its room given back if its send failed) before a failure is answered.
  await settleAll(
    bindings.map(async (b) => {
      const s = b.settings as unknown as QueueBindingSettings;
      const buckets = byExpiryBucket(messages, s.message_ttl_seconds, (m) => m.published_at, (m) => m.size);
      const room = await reserveQueueRoom(ctx.namespace, b.id, messages.length, bytes, s.max_size_mb * MIB, ctx.now, buckets);
      if (room === 'gone') return; // deleted since the binding was read
      if (room === 'full') return overflow(ctx, b, s, messages);
      try {
        await sendToSqsQueue(s.sqs_queue, outgoing(bodies, messages, ctx.delivery, !!s.fifo), { ordered: !!s.fifo });
      } catch (e) {
        await giveBack(ctx, b, messages, e);
      }
    }),
  );
}

/**
 * A send that failed gives back the room of what it did not store, so the counters never drift
 * into a false "queue full", then fails the publish (5xx: the client retries, at least once).
 * Only a queue deleted meanwhile is skipped quietly, as if its binding had been gone.
 */
async function giveBack(ctx: SinkContext, b: Binding, messages: PublishedMessage[], e: unknown): Promise<void> {
  const unsent = e instanceof SqsSendError ? e.unsent.map((i) => messages[i]) : messages;
  const s = b.settings as unknown as QueueBindingSettings;
  const buckets = byExpiryBucket(unsent, s.message_ttl_seconds, (m) => m.published_at, (m) => m.size);
  await releaseQueueRoom(ctx.namespace, b.id, { count: unsent.length, bytes: unsent.reduce((n, m) => n + m.size, 0), buckets }, ctx.now);
  if (e instanceof SqsQueueGoneError && (await getQueue(ctx.namespace, b.name))?.id !== b.id) return;
  throw e;
}

/** A queue over `max_size_mb`: its messages are dead-lettered (or dropped and counted). Also used by held long-delayed messages (lambda/schedules/delayed.ts). */
export async function overflow(ctx: SinkContext, b: Binding, s: QueueBindingSettings, messages: PublishedMessage[]) {
  const extra = { dlq_source_queue: b.name, dlq_reason: 'queue_full', dlq_receive_count: '0' };
  const out = await deadLetterAll(ctx.republish, ctx.namespace, s.dead_letter_topic, messages.map((message) => ({ message, extra: { ...extra, dlq_message_id: message.message_id }, id: deadLetterId(b.id, message) })), ctx.now).catch((e: unknown) => {
    // The namespace's fan-out budget refused the dead-letter publish: dropped and counted, as
    // when nothing matches the topic (the publish that overflowed is not failed for it, and a
    // chain of full queues' dead-letter topics cannot multiply one publish's writes unpaid).
    if (!isFanoutRefusal(e)) throw e;
    logger.warn('queue full and the fan-out budget refused its dead-lettering; messages dropped and counted', { namespace: ctx.namespace, queue: b.name, count: messages.length });
    return { deadLettered: 0, dropped: messages.length };
  });
  countMetric(METRIC.deadLettered, out.deadLettered, { namespace: ctx.namespace, dimensions: { reason: 'queue_full' } });
  countMetric(METRIC.dropped, out.dropped, { namespace: ctx.namespace, dimensions: { reason: 'queue_full' } });
  if (out.dropped || out.deadLettered) {
    await releaseQueueRoom(ctx.namespace, b.id, { count: 0, bytes: 0, dropped: out.dropped, deadLettered: out.deadLettered }, ctx.now);
  }
}
