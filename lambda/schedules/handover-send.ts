/**
 * The sends of a handover (./delayed.ts): a group of held messages to one target as it is now, and
 * the end of their held part in a queue's counters.
 */
import type { PublishedMessage } from '../core/rules/message';
import { remainingDelaySeconds } from '../core/rules/delays';
import { encodeQueueBody, isPastTtl } from '../core/rules/queue-messages';
import type { Binding } from '../core/storage/resources';
import { expiryBucketEnd, getQueue, queueBindingSettings, type QueueBindingSettings } from '../queues/storage/queues';
import { endHeldPartOnce } from '../queues/storage/queue-held';
import { endHeldTogether, touchTogether, type HeldEnd } from './held-ends';
import { logger } from '../core/observability';
import { getWebhook, webhookBindingSettings } from '../webhooks/storage/webhooks';
import type { DelayedItem } from './storage/scheduler';
import { openEntry, slotEntry, type PackedMessage } from './storage/held-packs';
import { sendToSqsQueue, SqsQueueGoneError } from '../queues/storage/service-queues';
import { SqsSendError } from '../core/adapters/sqs';
import { outgoing } from '../queues/sink';
import { enqueueWebhookDeliveries } from '../webhooks/fanout';
import type { SinkContext } from '../publishing/sink';

export interface Group {
  ns: string;
  target: Binding;
  items: DelayedItem[];
}

/**
 * Ends a handed-over message's held part in one queue, left by an earlier handover that reached
 * SQS but could not end it: once, conditional on the item still naming the queue in `held_left`
 * (lambda/queues/storage/queue-held.ts). Its bucket is the one its publish counted it in (the binding's TTL).
 */
export async function endHeldOf(item: DelayedItem, target: Binding, at: number): Promise<void> {
  const ttl = (target.settings as unknown as QueueBindingSettings).message_ttl_seconds;
  const end = expiryBucketEnd(item.message?.published_at ?? item.created_at, ttl);
  // A packed message's part is named by its slot in the pack's set (lambda/schedules/storage/held-packs.ts).
  const slot = (item as Partial<PackedMessage>).slot;
  const leftId = slot === undefined ? target.id : slotEntry(slot, target.id);
  await endHeldPartOnce(item.namespace, target.id, item.size ?? 0, end, { pk: item.pk, sk: item.sk, leftId }, at);
}

/**
 * Ends the held part of messages SQS stored: the totals once (tried a few times:
 * lambda/queues/storage/queue-held.ts), then their buckets. False when the totals could not be written
 * (the messages are then left for the retry); a bucket not written is logged (buckets are read
 * once they have ended, after the messages' TTL).
 */
async function endHeld(ns: string, queueId: string, queueName: string, messages: HeldEnd[], ttl: number, at: number): Promise<boolean> {
  try {
    await endHeldTogether(ns, queueId, messages, ttl, at);
  } catch (e) {
    logger.error('held part not ended at handover; the messages stay claimed and it is ended after the claim expires', { queue: queueName, messages: messages.length, error: (e as Error).message });
    return false;
  }
  return true;
}

export type Result = 'delivered' | 'gone' | 'failed' | 'unended';

/**
 * Sends a group's messages to its target as it is now: per message, delivered, gone (the target
 * was deleted) or failed (SQS did not store it: a batch send that stored some messages retries
 * only the others). Throws when the whole send failed.
 */
export async function handTo(g: Group, clock: () => number, republish: SinkContext['republish']): Promise<Result[]> {
  const all = (r: Result) => g.items.map(() => r);
  const messages = g.items.map((i) => i.message as PublishedMessage);
  if (g.target.kind === 'QUEUE') {
    const q = await getQueue(g.ns, g.target.name);
    if (!q || q.id !== g.target.id) return all('gone');
    const s = queueBindingSettings(q);
    const sendAt = clock();
    // Past its TTL: not sent (it left the count when its TTL ended, by its expiry bucket).
    const live = g.items.filter((i) => !isPastTtl((i.message as PublishedMessage).published_at, s.message_ttl_seconds, sendAt));
    const liveMessages = live.map((i) => i.message as PublishedMessage);
    // Of the live ones, those SQS did not store: all of them when the whole send failed, or the
    // unstored part of a batch (SqsSendError.unsent, indices into the live ones).
    let unstored = new Set<DelayedItem>();
    let sendError: unknown;
    try {
      // Between the send and the end of the held part below, SQS's count and the held amounts
      // both hold these messages: the quiet-queue reconciliation (lambda/queues/sweep.ts) must
      // not read both then. Marking the counters changed first makes it skip or refuse its write.
      if (live.some((i) => i.bucketed)) await touchTogether(g.ns, q.id, sendAt);
      // The rest of each delay as the send goes out: the write above may take seconds on a
      // loaded table, and SQS counts DelaySeconds from its receipt of the message.
      const goesAt = clock();
      const delivery = live.map((i) => ({ delaySeconds: remainingDelaySeconds(i.due_at, goesAt), dedupId: i.message_id }));
      if (live.length) await sendToSqsQueue(s.sqs_queue, outgoing(liveMessages.map((m) => encodeQueueBody(m)), liveMessages, delivery, false));
    } catch (e) {
      if (e instanceof SqsQueueGoneError) return all('gone');
      sendError = e;
      unstored = e instanceof SqsSendError && e.unsent.length < live.length ? new Set(e.unsent.map((i) => live[i])) : new Set(live);
    }
    // Nothing reached this queue (every message live and unstored): the whole handover to it is retried.
    if (sendError && unstored.size === g.items.length) throw sendError;
    if (sendError) logger.error('delayed handover partly failed; the unstored messages stay claimed and are retried after the claim expires', { queue: q.name, unstored: unstored.size, error: (sendError as Error).message });
    // Reached (stored in SQS, or past its TTL and not sent): no longer held, counted in the same
    // buckets from now on. Only those: an unstored message stays held until its retry reaches the
    // queue (the retry skips the targets reached, so each target's held part ends once). Ended
    // once (lambda/queues/storage/queue-held.ts); when it cannot be, the messages are 'unended': recorded
    // as reached with their held part left, so the retry ends it and does not send them again.
    const held = g.items.filter((i) => i.bucketed && !unstored.has(i));
    // Each with its marker (`held_open` on its state item): a message whose marker is gone had its
    // held part here ended by another handover of it (one that took over an expired claim).
    const ends = held.flatMap((i): HeldEnd[] => {
      const entry = openEntry(i, q.id);
      if (!i.held_marked) return [{ message: i.message as PublishedMessage }];
      return i.held_open?.has(entry) ? [{ message: i.message as PublishedMessage, mark: { pk: i.pk, sk: i.sk, entry } }] : [];
    });
    const ended = !ends.length || (await endHeld(g.ns, q.id, q.name, ends, s.message_ttl_seconds, sendAt));
    return g.items.map((i) => (unstored.has(i) ? 'failed' : !ended && held.includes(i) ? 'unended' : 'delivered'));
  }
  const w = await getWebhook(g.ns, g.target.name);
  if (!w || w.id !== g.target.id) return all('gone');
  const binding: Binding = { ...g.target, settings: webhookBindingSettings(w) as unknown as Record<string, unknown> };
  const sendAt = clock();
  const delivery = g.items.map((i) => ({ delaySeconds: remainingDelaySeconds(i.due_at, sendAt), dedupId: i.message_id }));
  await enqueueWebhookDeliveries({ namespace: g.ns, now: sendAt, republish, delivery }, [binding], messages);
  return all('delivered');
}
