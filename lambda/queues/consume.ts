/**
 * Queue consume on SQS (DESIGN.md section 6): ReceiveMessage with the consumer's visibility
 * timeout, long polls of at most 20 s per call repeated up to `timeout_seconds`, and more than 10
 * messages by further calls without waiting once the first messages came. Every returned message
 * gets a signed receipt handle (lambda/domain/receipt-handles.ts).
 *
 * Before a message is returned: past its TTL it is deleted and counted expired; received more
 * than `1 + max_retries` times it is dead-lettered to the queue's topic (or dropped and counted)
 * and deleted. That work is bounded per consume (at most {@link LEFTOVER_ROUNDS} receives that
 * brought nothing to return) and done in one publish and one delete call, after the messages to
 * return are in hand; if it fails, those messages stay hidden and come back after their
 * visibility timeout (at least once, nothing lost).
 *
 * The response stays under Lambda's 6 MB: a message that would pass the budget is handed back to
 * SQS at once (visibility 0) and its receive recorded as released, so it is neither lost nor
 * charged against its retries.
 */
import type * as z from 'zod/mini';
import type { consumeSchema } from '../domain/queues';
import { mayDeliverAgain } from '../domain/queues';
import { CONSUME_RESPONSE_BUDGET_BYTES, isoTime, proxyResponseBytes } from '../domain/envelope';
import { decodeQueueBody, isPastTtl } from '../domain/queue-messages';
import type { PublishedMessage } from '../domain/message';
import { signHandle } from '../domain/receipt-handles';
import { sleep } from '../domain/clock';
import { config } from '../config';
import { logger, countMetric, METRIC, waitedFor } from '../observability';
import { addReleasedReceive, recordConsumer, releasedReceives, releaseQueueRoom, type QueueItem } from '../storage/queues';
import { deleteFromSqsQueue, receiveFromSqsQueue, releaseToSqsQueue, SqsQueueGoneError, type ReceivedSqsMessage } from '../adapters/service-queues';
import { receiptSigningKey } from '../adapters/signing-key';
import { deadLetterAll } from '../publishing/dead-letter';
import { publishMessages } from '../publishing/publish';
import { queueNotFound, requireQueue } from './operations';

/** Receives that brought only expired, exhausted or repeated messages, before a consume gives up. */
export const LEFTOVER_ROUNDS = 5;
/**
 * Visibility of a receive asked with `visibility_timeout_seconds: 0`: long enough to delete or
 * dead-letter what must not be returned; the messages to return are then made visible at once.
 */
const MIN_RECEIVE_VISIBILITY_SECONDS = 30;
/** A guess of a message's response size before any was seen (the guess only sizes receives). */
const FIRST_SIZE_GUESS = 16 * 1024;

/** The largest response size seen per queue in this container, to size the next receives. */
const largestSeen = new Map<string, number>();

export interface ConsumeOptions extends z.output<typeof consumeSchema> {
  consumer: string;
  /** Epoch ms by which the consume must answer (the Lambda's remaining time). */
  deadlineMs?: number;
}

/** A consumed message as the API returns it (SPEC.md "Consumed queue message"). */
export interface ConsumedMessage {
  message_id: string;
  payload: string;
  content_type: string;
  properties: Record<string, string>;
  publish_time: string;
  receive_count: number;
  receipt_handle: string;
}

interface Received extends ReceivedSqsMessage {
  message: PublishedMessage;
  /** Earlier receives the service handed back unreturned (read only for messages near their limit). */
  released?: number;
}

interface Collected {
  out: ConsumedMessage[];
  expired: Received[];
  exhausted: Received[];
  /** Received, deliverable, but over the response budget: handed back. */
  overBudget: Received[];
  /** Received with a longer visibility than asked (asked 0): to make visible once answered. */
  showAgain: string[];
}

export async function consume(ns: string, name: string, opts: ConsumeOptions): Promise<ConsumedMessage[]> {
  const q = await requireQueue(ns, name);
  const started = Date.now();
  const [key] = await Promise.all([receiptSigningKey(), recordConsumer(ns, q.id, opts.consumer, started)]);
  const deadline = Math.min(started + Math.min(opts.timeout_seconds, config().maxLongPollSeconds) * 1000, opts.deadlineMs ?? Infinity);
  const c: Collected = { out: [], expired: [], exhausted: [], overBudget: [], showAgain: [] };
  const seen = new Set<string>();
  const receiveVisibility = Math.max(opts.visibility_timeout_seconds, opts.visibility_timeout_seconds === 0 ? MIN_RECEIVE_VISIBILITY_SECONDS : 0);
  let budget = CONSUME_RESPONSE_BUDGET_BYTES;
  let leftoverRounds = 0;

  while (c.out.length < opts.max_messages && c.overBudget.length === 0 && leftoverRounds < LEFTOVER_ROUNDS) {
    const waitMs = c.out.length === 0 ? deadline - Date.now() : 0;
    const guess = Math.max(largestSeen.get(q.id) ?? FIRST_SIZE_GUESS, 1);
    const want = Math.max(1, Math.min(opts.max_messages - c.out.length, Math.floor(budget / guess)));
    const now = Date.now();
    const got = await receiveFromSqsQueue(q.sqs_queue, { max: want, waitSeconds: waitMs / 1000, visibilitySeconds: receiveVisibility }).catch((e) => {
      // Deleted while this consume ran (its SQS queue goes with the delete's purge).
      if (e instanceof SqsQueueGoneError) throw queueNotFound(name);
      throw e;
    });
    // A long-poll receive spends its time waiting for messages (SQS long polls at least until one
    // arrives): not handler work, for the dashboard's consume time without the wait.
    if (waitMs >= 1000) waitedFor(Date.now() - now);
    if (got.length === 0) {
      if (c.out.length > 0 || Date.now() >= deadline) break;
      // A wait under a second is a short poll (WaitTimeSeconds is whole seconds): pace them.
      if (deadline - Date.now() < 1000) {
        const pause = Math.min(100, Math.max(0, deadline - Date.now()));
        await sleep(pause);
        waitedFor(pause);
      }
      continue;
    }
    const before = c.out.length;
    const fresh: Received[] = [];
    for (const r of got) {
      const message = decodeQueueBody(r.body);
      if (!message) {
        // Not a message of this service: nothing can ever consume it.
        logger.error('queue message body is not a published message; deleted', { queue: q.name });
        await deleteFromSqsQueue(q.sqs_queue, [r.handle]);
        continue;
      }
      if (seen.has(message.message_id)) continue; // visible again within this consume (visibility 0), or an SQS duplicate
      seen.add(message.message_id);
      fresh.push({ ...r, message });
    }
    // Receives the service handed back unreturned do not count against the retries: read them for
    // the (rare) messages that look out of deliveries.
    const looksExhausted = fresh.filter((r) => !mayDeliverAgain(r.receiveCount - 1, q.max_retries));
    const released = looksExhausted.length ? await releasedReceives(q.namespace, q.id, looksExhausted.map((r) => r.message.message_id)) : new Map<string, number>();
    for (const r of fresh) {
      r.released = released.get(r.message.message_id) ?? 0;
      if (isPastTtl(r.message.published_at, q.message_ttl_seconds, now)) c.expired.push(r);
      else if (!mayDeliverAgain(r.receiveCount - 1 - r.released, q.max_retries)) c.exhausted.push(r);
      else budget = take(q, r, now, opts.visibility_timeout_seconds, key, budget, c);
    }
    if (c.out.length === before) leftoverRounds++;
  }
  await settleLeftovers(q, c, opts.visibility_timeout_seconds);
  return c.out;
}

/** Adds a deliverable message to the response if the budget allows; returns the budget left. */
function take(q: QueueItem, r: Received, now: number, visibilitySeconds: number, key: Buffer, budget: number, c: Collected): number {
  const handle = signHandle({ q: q.id, m: r.message.message_id, u: now + visibilitySeconds * 1000, s: r.message.size, h: r.handle }, key);
  const item: ConsumedMessage = {
    message_id: r.message.message_id,
    payload: r.message.payload,
    content_type: r.message.content_type,
    properties: r.message.properties ?? {},
    publish_time: isoTime(r.message.published_at),
    receive_count: r.receiveCount,
    receipt_handle: handle,
  };
  const bytes = proxyResponseBytes(item) + 1;
  largestSeen.set(q.id, Math.max(bytes, largestSeen.get(q.id) ?? 0));
  if (largestSeen.size > 10_000) largestSeen.clear();
  if (bytes > budget && c.out.length > 0) {
    c.overBudget.push(r);
    return budget;
  }
  c.out.push(item);
  if (visibilitySeconds === 0) c.showAgain.push(r.handle);
  return budget - bytes;
}

/**
 * Handles what a consume received but does not return: messages over the response budget go back
 * (their receive recorded as released), expired ones are deleted, exhausted ones dead-lettered
 * and deleted, and the counters move once. Failures are logged, never thrown: the consume answers
 * with its messages, and whatever was not settled reappears after its visibility timeout.
 */
async function settleLeftovers(q: QueueItem, c: Collected, visibilitySeconds: number): Promise<void> {
  const now = Date.now();
  try {
    await Promise.all([
      c.overBudget.length ? releaseToSqsQueue(q.sqs_queue, c.overBudget.map((r) => r.handle)) : undefined,
      ...c.overBudget.map((r) => addReleasedReceive(q.namespace, q.id, r.message.message_id, q.message_ttl_seconds, now)),
      visibilitySeconds === 0 && c.showAgain.length ? releaseToSqsQueue(q.sqs_queue, c.showAgain) : undefined,
    ]);
    const exhausted = c.exhausted;
    let deadLettered = 0;
    let dropped = 0;
    if (exhausted.length) {
      const out = await deadLetterAll(
        publishMessages,
        q.namespace,
        q.dead_letter_topic,
        // dlq_receive_count: the deliveries it had (this receive only found it out of them).
        exhausted.map((r) => ({ message: r.message, extra: { dlq_source_queue: q.name, dlq_receive_count: String(r.receiveCount - 1 - (r.released ?? 0)) } })),
        now,
      );
      deadLettered = out.deadLettered;
      dropped = out.dropped;
      countMetric(METRIC.deadLettered, deadLettered, { namespace: q.namespace, dimensions: { reason: 'max_retries' } });
      countMetric(METRIC.dropped, dropped, { namespace: q.namespace, dimensions: { reason: 'max_retries' } });
    }
    const gone = [...c.expired, ...exhausted];
    if (!gone.length) return;
    const failed = new Set(await deleteFromSqsQueue(q.sqs_queue, gone.map((r) => r.handle)));
    const removed = gone.filter((r) => !failed.has(r.handle));
    const expired = c.expired.filter((r) => !failed.has(r.handle)).length;
    await releaseQueueRoom(
      q.namespace,
      q.id,
      { count: removed.length, bytes: removed.reduce((n, r) => n + r.message.size, 0), expired, deadLettered, dropped },
      now,
    );
  } catch (e) {
    logger.error('consume could not settle expired, exhausted or over-budget messages; they reappear after their visibility timeout', {
      queue: q.name,
      error: (e as Error).message,
    });
  }
}
