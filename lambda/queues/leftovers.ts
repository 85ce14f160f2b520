/**
 * What a consume (./consume.ts) received but does not return: expired ones are deleted and
 * exhausted ones dead-lettered and deleted right after the receive that found them, with its
 * handle ({@link settleGone}); messages handed back (over the response budget) are made visible
 * again once the consume has its answer, their receive recorded as released first. Failures are
 * logged, never thrown: the consume answers with its messages, and whatever was not settled
 * reappears after its visibility timeout.
 *
 * Ordered queues (SQS FIFO, extension) keep each partition key's order through all of it. SQS
 * keeps a key's messages in order and gives none of them out while one is in flight, so the only
 * way to break the order is for the service to return a later message of a key while an earlier
 * one goes back or stays behind. Hence:
 * - once a message is handed back, every later message of its key in this consume goes back too
 *   (SQS puts them back in their places: a released FIFO message keeps its position);
 * - when dead-lettering fails, the returned messages of the keys of the messages that could not
 *   be dead-lettered go back too: those stay hidden until their visibility ends and are
 *   dead-lettered first next time, so the dead-letter topic also gets each key in order (the
 *   dead-lettered messages keep their partition_key, so an ordered queue on the dead-letter topic
 *   keeps it too).
 */
import type { PublishedMessage } from '../core/rules/message';
import { deadLetterAll, deadLetterId, type DeadLetterOutcome } from '../publishing/rules';
import { logger, countMetric, METRIC } from '../core/observability';
import { randomBytes } from 'node:crypto';
import { byExpiryBucket, releaseQueueRoom, type QueueItem } from './storage/queues';
import { addReleasedReceive, deleteAckRecord, finishSettledRecord, putSettledRecord } from './storage/queue-message-records';
import { deleteFromSqsQueue, holdInSqsQueue, releaseToSqsQueue, type ReceivedSqsMessage } from './storage/service-queues';
import { publishMessages } from '../publishing/publish';
import { isFanoutRefusal } from '../publishing/write-budget';
import type { ConsumedMessage } from './consume';

export interface Received extends ReceivedSqsMessage {
  message: PublishedMessage;
  /** Earlier receives the service handed back unreturned (read only for messages near their limit). */
  released?: number;
}

export interface Collected {
  out: ConsumedMessage[];
  /** What each of `out` was received as (same order). */
  taken: Received[];
  expired: Received[];
  exhausted: Received[];
  /** Received, deliverable, but not returned (over the response budget, or held behind one): handed back. */
  handBack: Received[];
  /** Ordered queues: partition keys whose later messages in this consume go back too. */
  heldKeys: Set<string>;
  /** Received with a longer visibility than asked (asked 0): to make visible once answered. */
  showAgain: string[];
  /** Aborts the SQS calls of the settling at the consume's answer deadline (what is cut off reappears after its visibility). */
  signal?: AbortSignal;
}

export const newCollected = (): Collected => ({ out: [], taken: [], expired: [], exhausted: [], handBack: [], heldKeys: new Set(), showAgain: [] });

const keyOf = (r: Received) => r.message.partition_key;

/** Whether `r` must go back because an earlier message of its key did (ordered queues only). */
export const heldBehind = (q: QueueItem, r: Received, c: Collected) => q.ordering === 'fifo' && keyOf(r) !== undefined && c.heldKeys.has(keyOf(r) as string);

/** Hands `r` back; on an ordered queue its key's later messages follow it. */
export function handBack(q: QueueItem, r: Received, c: Collected): void {
  c.handBack.push(r);
  const key = keyOf(r);
  if (q.ordering === 'fifo' && key !== undefined) c.heldKeys.add(key);
}

/**
 * Ordered queues: takes the returned messages of the keys of `blockers` out of the answer and
 * hands them back, and holds those keys for the rest of the consume.
 */
export function holdBehind(q: QueueItem, blockers: Received[], c: Collected): void {
  const keys = new Set(blockers.flatMap((r) => (keyOf(r) === undefined ? [] : [keyOf(r) as string])));
  if (q.ordering !== 'fifo' || keys.size === 0) return;
  for (const k of keys) c.heldKeys.add(k);
  const keep = c.taken.map((r) => !keys.has(keyOf(r) as string));
  const moved = c.taken.filter((_, i) => !keep[i]);
  c.out = c.out.filter((_, i) => keep[i]);
  c.taken = c.taken.filter((_, i) => keep[i]);
  const movedHandles = new Set(moved.map((r) => r.handle));
  c.showAgain = c.showAgain.filter((h) => !movedHandles.has(h));
  c.handBack.push(...moved);
}

/** Dead-letters the exhausted messages; undefined when that failed (they stay hidden, to be tried again). */
async function deadLetterExhausted(q: QueueItem, exhausted: Received[], now: number): Promise<DeadLetterOutcome | undefined> {
  if (!exhausted.length) return { deadLettered: 0, dropped: 0 };
  try {
    const out = await deadLetterAll(
      publishMessages,
      q.namespace,
      q.dead_letter_topic,
      // dlq_receive_count: the deliveries it had (this receive only found it out of them);
      // dlq_message_id: the original id, so the dead-letter topic's consumers can tell copies.
      // id: the copy's own, the same on every try (a send SQS applied with its answer lost is
      // published again by a later settle: the same message again, not a second dead-lettering).
      exhausted.map((r) => ({
        message: r.message,
        extra: { dlq_source_queue: q.name, dlq_receive_count: String(r.receiveCount - 1 - (r.released ?? 0)), dlq_message_id: r.message.message_id },
        id: deadLetterId(q.id, r.message),
      })),
      now,
    );
    countMetric(METRIC.deadLettered, out.deadLettered, { namespace: q.namespace, dimensions: { reason: 'max_retries' } });
    countMetric(METRIC.dropped, out.dropped, { namespace: q.namespace, dimensions: { reason: 'max_retries' } });
    return out;
  } catch (e) {
    // The fan-out budget's refusal too: they are dead-lettered by a receive in a later minute.
    const what = 'consume could not dead-letter exhausted messages; they reappear after their visibility timeout';
    if (isFanoutRefusal(e)) logger.warn(what, { queue: q.name, error: 'the namespace fan-out budget of this minute is spent' });
    else logger.error(what, { queue: q.name, error: (e as Error).message });
    return undefined;
  }
}

/**
 * How long a settle keeps its messages hidden: longer than the API function may run (29 s, API
 * Gateway's integration timeout, lib/constructs/functions.ts), so no other consume can receive a
 * message while this one dead-letters it.
 */
export const SETTLE_VISIBILITY_SECONDS = 60;

/**
 * How long a settle's claim on an exhausted message stands before another settle may take it over
 * (lambda/queues/storage/queue-message-records.ts `putSettledRecord`): longer than the API function may
 * run (its timeout, 29 s, lib/constructs/functions.ts; Lambda stops a function at its timeout:
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html), so the settle that
 * wrote it has ended, and shorter than the hold
 * ({@link SETTLE_VISIBILITY_SECONDS}, extended before the claim is written), so the first receive
 * after the hold takes over a claim its settle left behind.
 */
export const SETTLE_CLAIM_SECONDS = SETTLE_VISIBILITY_SECONDS - 10;

/**
 * Takes the messages this settle alone may remove: their handles still current (SQS extends their
 * visibility for the settle), and their settled record won (one conditional write per message,
 * lambda/queues/storage/queue-message-records.ts `putSettledRecord`; an exhausted message's record is a
 * claim until its dead-lettering is done). `copies` were settled or acknowledged already:
 * deleted, not counted. A message another settle is still dead-lettering (`busy`), and what
 * failed either way, stays hidden until its visibility ends.
 */
async function claim(q: QueueItem, expired: Received[], exhausted: Received[], now: number, c: Collected): Promise<{ won: Received[]; copies: Received[]; token: string }> {
  const token = randomBytes(9).toString('base64url');
  const gone = [...expired, ...exhausted];
  const held = await holdInSqsQueue(q.sqs_queue, gone.map((r) => r.handle), SETTLE_VISIBILITY_SECONDS, c.signal);
  const current = gone.filter((r) => held.has(r.handle));
  // Kept past the message's TTL, and past the settle's visibility (an expired one's copy may reappear).
  const keep = (r: Received) => Math.max(r.message.published_at + q.message_ttl_seconds * 1000, now + 2 * SETTLE_VISIBILITY_SECONDS * 1000);
  const claimUntil = (r: Received) => (exhausted.includes(r) ? now + SETTLE_CLAIM_SECONDS * 1000 : undefined);
  const claims = await Promise.all(
    current.map((r) =>
      putSettledRecord(q.namespace, q.id, r.message.message_id, keep(r), now, token, claimUntil(r)).catch(async (e) => {
        // The write may have been applied with its answer lost: take it back (if that fails too,
        // the claim is taken over once it lapses), or nobody settles the message.
        await deleteAckRecord(q.namespace, q.id, r.message.message_id, token).catch(() => undefined);
        logger.warn('settled record not written; the message reappears after its visibility timeout', { queue: q.name, error: (e as Error).message });
        return undefined;
      }),
    ),
  );
  return { won: current.filter((_, i) => claims[i] === 'won'), copies: current.filter((_, i) => claims[i] === 'settled'), token };
}

/**
 * Dead-letters the exhausted messages and deletes them with the expired ones, moving the counters
 * once; the lists are emptied. Ordered queues call it after every receive that met such messages:
 * their key stays blocked in SQS until they are deleted, so waiting for the end of the consume
 * would hold the key's next message back for the whole long poll.
 *
 * Exactly once whatever the latency: SQS answers a delete with a stale handle with success and
 * deletes nothing, so a settle slower than the receive's visibility would let another consume
 * receive the message and dead-letter it again. The settle first extends the visibility (skipping
 * what SQS refuses: no longer this delivery's), then wins the message's settled record; only the
 * winner republishes and counts, and counts at once: a delete that fails or comes too late leaves
 * a copy that the next consume to meet it deletes without counting. An exhausted message's record
 * is only a claim until its publish is done: a settle that meets another's claim leaves the
 * message hidden (met again after the hold), since that publish may yet fail and the claim be
 * taken back; a copy deleted then would be a message lost unpublished. A publish that failed may
 * still have been stored (SQS applied the send, its answer was lost): the next settle publishes
 * the message again with the same id (`deadLetterId`), so the dead-letter topic gets the same
 * message twice at worst, never two dead-letterings.
 */
export async function settleGone(q: QueueItem, c: Collected): Promise<void> {
  const { expired, exhausted } = c;
  if (!expired.length && !exhausted.length) return;
  c.expired = [];
  c.exhausted = [];
  const now = Date.now();
  let won: Received[];
  let copies: Received[];
  let token: string;
  try {
    ({ won, copies, token } = await claim(q, expired, exhausted, now, c));
  } catch (e) {
    logger.error('consume could not settle expired or exhausted messages; they reappear after their visibility timeout', { queue: q.name, error: (e as Error).message });
    holdBehind(q, exhausted, c);
    return;
  }
  const wonExpired = expired.filter((r) => won.includes(r));
  const wonExhausted = exhausted.filter((r) => won.includes(r));
  // Not claimed (a handle SQS refused, a failed write): an ordered queue holds its key behind it.
  holdBehind(q, exhausted.filter((r) => !won.includes(r) && !copies.includes(r)), c);
  const dead = await deadLetterExhausted(q, wonExhausted, now);
  // Dead-lettered (or dropped): the claims become final. Not: they are taken back, so the next
  // receive after the hold settles the messages; a claim that cannot be taken back lapses after
  // SETTLE_CLAIM_SECONDS and is taken over then, never read as done. A claim found taken over
  // (this settle outlasted it: slow storage or a publish slower than the claim) is the other
  // settle's to count: counted here too, the message left the counters twice.
  const finals = await Promise.all(
    wonExhausted.map((r) =>
      (dead ? finishSettledRecord : deleteAckRecord)(q.namespace, q.id, r.message.message_id, token).catch((e) => {
        logger.warn(dead ? 'settle claim not made final; a copy of the message may be dead-lettered again' : 'settle claim not taken back; it is taken over once it lapses', { queue: q.name, error: (e as Error).message });
        return undefined;
      }),
    ),
  );
  if (!dead) holdBehind(q, wonExhausted, c);
  const takenOver = new Set(wonExhausted.filter((_, i) => finals[i] === false));
  if (takenOver.size) logger.warn('a settle outlasted its claim and another settle took it over; that one counts the message', { queue: q.name, messages: takenOver.size });
  const removed = [...wonExpired, ...(dead ? wonExhausted.filter((r) => !takenOver.has(r)) : [])];
  try {
    const toDelete = [...removed, ...copies];
    if (toDelete.length) {
      const failed = await deleteFromSqsQueue(q.sqs_queue, toDelete.map((r) => r.handle), c.signal);
      if (failed.length) logger.warn('some settled messages were not deleted from SQS; the next consume deletes them', { queue: q.name });
    }
  } catch (e) {
    logger.warn('settled messages not deleted from SQS; the next consume deletes them', { queue: q.name, error: (e as Error).message });
  }
  if (!removed.length) return;
  try {
    await releaseQueueRoom(
      q.namespace,
      q.id,
      {
        count: removed.length,
        bytes: removed.reduce((n, r) => n + r.message.size, 0),
        buckets: byExpiryBucket(removed, q.message_ttl_seconds, (r) => r.message.published_at, (r) => r.message.size),
        expired: wonExpired.length,
        // One settle's messages share the dead-letter topic: all dead-lettered or all dropped.
        deadLettered: dead && Math.max(0, dead.deadLettered - takenOver.size),
        dropped: dead && Math.max(0, dead.dropped - Math.max(0, takenOver.size - dead.deadLettered)),
      },
      now,
    );
  } catch (e) {
    logger.error('consume could not count settled messages; the sweeper reconciles the counters', { queue: q.name, error: (e as Error).message });
  }
}

/**
 * Everything a consume leaves: expired and exhausted messages, then the messages to hand back.
 * A handed-back message's release is recorded before SQS makes it visible again: once visible,
 * another consume may receive it and judge its retries by that record. A message whose record
 * could not be written is not handed back (it reappears after its visibility timeout, that
 * receive counted, never judged exhausted by a receive that was not delivered).
 */
export async function settleLeftovers(q: QueueItem, c: Collected, visibilitySeconds: number): Promise<void> {
  await settleGone(q, c);
  const now = Date.now();
  try {
    const recorded = await Promise.allSettled(c.handBack.map((r) => addReleasedReceive(q.namespace, q.id, r.message.message_id, q.message_ttl_seconds, now)));
    const releasable = c.handBack.filter((_, i) => recorded[i].status === 'fulfilled');
    if (releasable.length < c.handBack.length) logger.warn('some releases were not recorded; those messages reappear after their visibility timeout', { queue: q.name });
    await Promise.all([
      releasable.length ? releaseToSqsQueue(q.sqs_queue, releasable.map((r) => r.handle), c.signal) : undefined,
      visibilitySeconds === 0 && c.showAgain.length ? releaseToSqsQueue(q.sqs_queue, c.showAgain, c.signal) : undefined,
    ]);
  } catch (e) {
    logger.error('consume could not hand messages back; they reappear after their visibility timeout', { queue: q.name, error: (e as Error).message });
  }
}
