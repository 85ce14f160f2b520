/**
 * Queue consume on SQS (DESIGN.md section 6): ReceiveMessage with the consumer's visibility
 * timeout, long polls of 1 to 20 s per call repeated up to `timeout_seconds` (never a short poll
 * while nothing is collected: SQS's sampling could answer nothing while messages exist; so
 * `timeout_seconds: 0` is the shortest long poll), and more than 10 messages by further calls
 * without waiting once the first messages came. Every returned message gets a signed receipt
 * handle (lambda/queues/rules/receipt-handles.ts) whose visibility counts from SQS's delivery (the
 * receive's answer), not from the start of the poll.
 *
 * Before a message is returned: past its TTL it is deleted and counted expired; received more
 * than `1 + max_retries` times it is dead-lettered to the queue's topic (or dropped and counted)
 * and deleted. Both are settled right after the receive that found them, with that receive's
 * handle: a later receive in the same consume would supersede it, and SQS ignores a delete with a
 * superseded handle (the message would be dead-lettered twice). That work is bounded per consume
 * (at most {@link LEFTOVER_ROUNDS} receives that brought nothing to return) and in time: the
 * consume answers within {@link CONSUME_ANSWER_MS} of its start, receives stop
 * {@link SETTLE_RESERVE_MS} before that, and what is met too late is left hidden for the
 * receive's visibility and settled by a later consume (at least once, nothing lost).
 *
 * The response stays within {@link CONSUME_RESPONSE_BYTES}: a message that would pass it is
 * handed back to SQS at once (visibility 0) and its receive recorded as released (before it is
 * made visible), so it is neither lost nor charged against its retries. ./leftovers.ts settles all that, keeping an
 * ordered queue's per-key order (extension).
 *
 * Once a consume holds messages, it answers with them: a later receive (or read) that fails ends
 * the consume early instead of failing it, which would leave those messages hidden for their
 * visibility timeout with a delivery used up. SQS's `OverLimit` (too many in flight) with nothing
 * collected is 429 TOO_MANY_IN_FLIGHT. The consumer record only feeds `consumer_count`; a write
 * of it that fails does not fail the consume.
 */
import type * as z from 'zod/mini';
import type { consumeSchema } from './rules/queues';
import { CONSUME_ANSWER_MS, mayDeliverAgain } from './rules/queues';
import { isoTime } from '../core/rules/envelope';
import { ResponseBudget, responseBytes } from '../core/rules/response-budget';
import { decodeQueueBody, isPastTtl } from '../core/rules/queue-messages';
import { signHandle } from './rules/receipt-handles';
import { config } from '../core/config';
import { logger, waitedFor } from '../core/observability';
import { recordConsumer, type QueueItem } from './storage/queues';
import { releasedReceives } from './storage/queue-message-records';
import { deleteFromSqsQueue, receiveFromSqsQueue, SqsOverLimitError, SqsQueueGoneError, type ReceivedSqsMessage } from './storage/service-queues';
import { ApiError } from '../core/rules/errors';
import { receiptSigningKey } from './storage/signing-key';
import { queueNotFound, requireQueue } from './operations';
import { handBack, heldBehind, holdBehind, newCollected, settleGone, settleLeftovers, type Collected, type Received } from './leftovers';

/** Receives that brought only expired, exhausted or repeated messages, before a consume gives up. */
export const LEFTOVER_ROUNDS = 5;
/** Receives stop this long before the answer deadline, leaving time to settle what they found. */
const SETTLE_RESERVE_MS = 2_000;
/**
 * A handle's visibility counts from SQS's delivery, which is between the receive's request and its
 * answer: estimated as the answer's time less the answer's way back and its parsing (up to 10 x
 * 1 MiB of bodies): {@link deliveredAtOf}. Only an estimate: an answer slowed longer than that (a
 * loaded function, a pause) makes it late, so the handle also carries the receive's request time,
 * from which the visibility surely lasts, and an ack after that bound first makes sure the
 * delivery is still current (./ack.ts).
 */
const DELIVERY_SLACK_MS = 1000;
const DELIVERY_SLACK_MS_PER_MIB = 100;
/**
 * Receives are aborted (their SDK attempts and retries alike) this long before the answer
 * deadline: a long poll whose answer was lost late is not retried past it. What SQS delivered in
 * an aborted attempt stays hidden for the receive's visibility, one delivery used.
 */
const RECEIVE_ABORT_BEFORE_MS = SETTLE_RESERVE_MS / 2;

/** When SQS delivered what a receive sent at `sentAt` and answered (parsed) at `receivedAt` brought, estimated. */
const deliveredAtOf = (sentAt: number, receivedAt: number, bodyBytes: number) =>
  receivedAt - Math.min(receivedAt - sentAt, DELIVERY_SLACK_MS + Math.ceil((bodyBytes / (1024 * 1024)) * DELIVERY_SLACK_MS_PER_MIB));
/**
 * Visibility of a receive asked with `visibility_timeout_seconds: 0`: long enough to delete or
 * dead-letter what must not be returned; the messages to return are then made visible at once.
 */
const MIN_RECEIVE_VISIBILITY_SECONDS = 30;
/**
 * Bytes a consume's messages may take in its answer, escaped twice (lambda/core/rules/response-budget.ts):
 * 2 MiB, not the 5 MiB a Lambda response could carry, so that the queues function's largest consume
 * peaks well under its 128 MB (lib/function-memory.ts; measured by
 * test/integration/queue-consume-memory.test.ts). `max_messages` is "at most": a consume of large
 * messages answers fewer, as SQS itself returns fewer than asked
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html,
 * MaxNumberOfMessages). The first message always fits (256 KiB escaped twice is under 2 MB).
 */
export const CONSUME_RESPONSE_BYTES = 2 * 1024 * 1024;
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

/** 429: SQS's in-flight quota is reached; acks (or ended visibilities) make room. */
const tooManyInFlight = (name: string) =>
  new ApiError(
    429,
    'TOO_MANY_IN_FLIGHT',
    `Queue ${name} has too many messages in flight (received, not yet acknowledged; SQS allows about 120,000 per queue). Acknowledge messages or let their visibility timeouts end, then retry after ${OVER_LIMIT_RETRY_AFTER_SECONDS} s.`,
    {},
    { 'Retry-After': String(OVER_LIMIT_RETRY_AFTER_SECONDS) },
  );
const OVER_LIMIT_RETRY_AFTER_SECONDS = 5;

export async function consume(ns: string, name: string, opts: ConsumeOptions): Promise<ConsumedMessage[]> {
  const q = await requireQueue(ns, name);
  const started = Date.now();
  const [key] = await Promise.all([
    receiptSigningKey(),
    recordConsumer(ns, q.id, opts.consumer, started).catch((e) => logger.warn('consumer record not written; consumer_count may miss this consumer', { queue: q.name, error: (e as Error).message })),
  ]);
  const answerBy = Math.min(started + CONSUME_ANSWER_MS, opts.deadlineMs ?? Infinity);
  const receiveUntil = Math.min(started + Math.min(opts.timeout_seconds, config().maxLongPollSeconds) * 1000, answerBy - SETTLE_RESERVE_MS);
  const c = newCollected();
  c.signal = AbortSignal.timeout(Math.max(1, answerBy - Date.now()));
  const seen = new Set<string>();
  const receiveVisibility = Math.max(opts.visibility_timeout_seconds, opts.visibility_timeout_seconds === 0 ? MIN_RECEIVE_VISIBILITY_SECONDS : 0);
  const budget = new ResponseBudget(CONSUME_RESPONSE_BYTES);
  let leftoverRounds = 0;
  const receiveAbort = AbortSignal.timeout(Math.max(1, answerBy - RECEIVE_ABORT_BEFORE_MS - Date.now()));

  for (let receives = 0; c.out.length < opts.max_messages && c.handBack.length === 0 && leftoverRounds < LEFTOVER_ROUNDS; receives++) {
    // Nothing collected yet: a long poll (at least 1 s, so `timeout_seconds: 0` is the shortest
    // long poll), never a short poll that SQS's sampling could answer empty. Topping up: no wait.
    // Topping up takes no wait, so it may go on past `timeout_seconds`, but not past the time
    // kept for settling before the answer deadline.
    const topUp = c.out.length > 0;
    const left = receiveUntil - Date.now();
    if (receives > 0 && (topUp ? Date.now() >= answerBy - SETTLE_RESERVE_MS : left < 1000)) break;
    const guess = Math.max(largestSeen.get(q.id) ?? FIRST_SIZE_GUESS, 1);
    const want = Math.max(1, Math.min(opts.max_messages - c.out.length, Math.floor(budget.left / guess)));
    const sentAt = Date.now();
    let got: ReceivedSqsMessage[];
    try {
      got = await receiveFromSqsQueue(q.sqs_queue, {
        max: want,
        waitSeconds: left / 1000,
        topUp,
        visibilitySeconds: receiveVisibility,
        createdAt: q.created_at,
        notAfter: answerBy,
        abortSignal: receiveAbort,
      });
    } catch (e) {
      // Deleted while this consume ran (its SQS queue goes with the delete's purge).
      if (e instanceof SqsQueueGoneError) throw queueNotFound(name);
      if (receiveAbort.aborted) {
        logger.warn('a receive was cut off at the consume deadline; answering with what this consume has', { queue: q.name, error: (e as Error).message });
        break;
      }
      if (c.out.length === 0) throw e instanceof SqsOverLimitError ? tooManyInFlight(name) : e;
      logger.warn('a receive failed after this consume had messages; answering with those', { queue: q.name, error: (e as Error).message });
      break;
    }
    const receivedAt = Date.now();
    const deliveredAt = deliveredAtOf(sentAt, receivedAt, got.reduce((n, r) => n + r.body.length, 0));
    // A long-poll receive spends its time waiting for messages (SQS long polls at least until one
    // arrives): not handler work, for the dashboard's consume time without the wait.
    if (!topUp) waitedFor(receivedAt - sentAt);
    if (got.length === 0) {
      if (c.out.length > 0) break;
      continue;
    }
    const before = c.out.length;
    const fresh: Received[] = [];
    for (const r of got) {
      const message = decodeQueueBody(r.body);
      if (!message) {
        // Not a message of this service: nothing can ever consume it.
        logger.error('queue message body is not a published message; deleted', { queue: q.name });
        await deleteFromSqsQueue(q.sqs_queue, [r.handle]).catch(() => undefined); // met again later otherwise
        continue;
      }
      if (seen.has(message.message_id)) continue; // visible again within this consume (visibility 0), or an SQS duplicate
      seen.add(message.message_id);
      fresh.push({ ...r, message });
    }
    // Receives the service handed back unreturned do not count against the retries: read them for
    // the (rare) messages that look out of deliveries. If that read fails, those messages are set
    // aside (not returned, not dead-lettered; an ordered queue holds their keys behind them) and
    // judged again when they reappear.
    const looksExhausted = fresh.filter((r) => !mayDeliverAgain(r.receiveCount - 1, q.max_retries));
    const released = looksExhausted.length
      ? await releasedReceives(q.namespace, q.id, looksExhausted.map((r) => r.message.message_id)).catch((e) => {
          logger.warn('released receives unread; messages near their retry limit wait for their next delivery', { queue: q.name, error: (e as Error).message });
          return undefined;
        })
      : new Map<string, number>();
    if (!released) holdBehind(q, looksExhausted, c);
    for (const r of fresh) {
      if (!released && looksExhausted.includes(r)) continue;
      r.released = released?.get(r.message.message_id) ?? 0;
      if (isPastTtl(r.message.published_at, q.message_ttl_seconds, deliveredAt)) c.expired.push(r);
      else if (!mayDeliverAgain(r.receiveCount - 1 - r.released, q.max_retries)) c.exhausted.push(r);
      else take(q, r, { deliveredAt, askedAt: sentAt }, opts.visibility_timeout_seconds, key, budget, c);
    }
    if (c.out.length === before) leftoverRounds++;
    // Expired and exhausted messages are settled at once, with this receive's handle (a later
    // receive would supersede it, and SQS ignores a delete with a superseded handle), and an
    // ordered queue's key stays blocked until its expired or exhausted head is deleted. Too close
    // to the answer deadline they are left: hidden for this receive's visibility, then met again.
    if (Date.now() < answerBy - SETTLE_RESERVE_MS / 2) {
      const pending = [...c.expired, ...c.exhausted];
      if (!(await byDeadline(settleGone(q, c), answerBy, q))) {
        // Cut by the deadline (slow storage): what it had not settled stays hidden for this
        // receive's visibility, then is met again, and an ordered queue's keys stay behind it.
        holdBehind(q, pending, c);
        break;
      }
    } else {
      c.expired = [];
      c.exhausted = [];
    }
  }
  // The answer as it stands at the deadline: a hand-back still running goes on without it.
  const out = [...c.out];
  await byDeadline(settleLeftovers(q, c, opts.visibility_timeout_seconds), answerBy, q);
  return out;
}

/**
 * Waits for `work` until `deadline`: true when it ended by then. The consume's settling writes to
 * DynamoDB and publishes dead letters, calls no abort signal reaches, and slow storage (a
 * throttled table under the SDK's retries) made a consume answer after API Gateway's 29 s (a
 * 504, and the messages it held lost to the client for their visibility). Cut, the settle goes on
 * unwaited for, as one whose function ended midway: its claims lapse and are taken over, its
 * messages reappear after their visibility (./leftovers.ts); its failures are its own to log.
 */
async function byDeadline(work: Promise<void>, deadline: number, q: QueueItem): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const guarded = work.then(
    () => true,
    (e: unknown) => {
      logger.error('consume could not settle what it received; those messages reappear after their visibility timeout', { queue: q.name, error: (e as Error).message });
      return true;
    },
  );
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()))));
  try {
    const ended = await Promise.race([guarded, late]);
    if (!ended) logger.warn('settling was cut at the consume deadline; it goes on without the answer', { queue: q.name });
    return ended;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Adds a deliverable message to the response if the budget allows, else sets it aside to hand
 * back. Its handle's visibility counts from the estimated delivery (`u`), and surely lasts from
 * the receive's request (`e`).
 */
function take(q: QueueItem, r: Received, at: { deliveredAt: number; askedAt: number }, visibilitySeconds: number, key: Buffer, budget: ResponseBudget, c: Collected): void {
  const ms = visibilitySeconds * 1000;
  const handle = signHandle({ q: q.id, m: r.message.message_id, u: at.deliveredAt + ms, s: r.message.size, h: r.handle, p: r.message.published_at, e: at.askedAt + ms }, key);
  const item: ConsumedMessage = {
    message_id: r.message.message_id,
    payload: r.message.payload,
    content_type: r.message.content_type,
    properties: r.message.properties ?? {},
    publish_time: isoTime(r.message.published_at),
    receive_count: r.receiveCount,
    receipt_handle: handle,
  };
  const bytes = responseBytes(item);
  largestSeen.set(q.id, Math.max(bytes, largestSeen.get(q.id) ?? 0));
  if (largestSeen.size > 10_000) largestSeen.clear();
  // Held behind an earlier message of its key (ordered queues) before it uses any budget.
  if (heldBehind(q, r, c) || !budget.take(item, bytes)) {
    handBack(q, r, c);
    return;
  }
  c.out.push(item);
  c.taken.push(r);
  if (visibilitySeconds === 0) c.showAgain.push(r.handle);
}
