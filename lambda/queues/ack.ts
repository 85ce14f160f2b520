/**
 * Ack and batch ack (DESIGN.md section 6). A handle is judged by its signature and what it names
 * (lambda/queues/rules/receipt-handles.ts): 404 when it does not name this queue's message, 409 when it
 * is this message's but altered or past its visibility (404 instead when the message was
 * acknowledged, or dead-lettered, dropped or expired by a consume (./leftovers.ts writes the same
 * record): its ack record is kept for the queue's TTL, one GetItem tells; and 404 without a read
 * when the message's TTL from its publish has ended too, whether or not a consume met it since,
 * as no consume returns it again). A current one
 * writes the message's ack record (one conditional PutItem): the first ack of a message wins it,
 * a repeated or concurrent one answers 404 and moves no counter. Then SQS deletes the message (DeleteMessageBatch: one call
 * per 10 handles, each call answering for its own entries); if that fails, the record is removed
 * again so a retried ack can succeed. The counters move once per call (and once per expiry bucket
 * of the acked messages, lambda/queues/storage/queues.ts).
 *
 * The delete must reach SQS within the delivery's visibility: SQS answers a delete with a handle
 * that is no longer the latest with success and deletes nothing. An ack whose delete was not
 * answered before the delivery's visibility ended (a slow call, SDK retries) is answered 409 like
 * an expired handle, its record removed, so the message's next delivery is acked and counted.
 *
 * Each entry stands on its own: an entry whose record could not be written (a throttle, an
 * outage) fails alone, its record removed again if the write was applied after all, and its
 * message is not deleted, so a retry of the ack can still win it. The other entries of the call
 * are acknowledged; a retried batch never meets records of its own earlier, failed try.
 *
 * The handle's visibility end (`u`) is estimated from the receive's answer, which a slow answer
 * makes late; its visibility surely lasts until the receive's request time plus the visibility
 * (`e`). An ack whose delete could reach SQS after that first extends the visibility
 * (ChangeMessageVisibilityBatch, which SQS refuses for a handle a later receive superseded or
 * whose visibility ended: lambda/queues/storage/service-queues.ts `holdInSqsQueue`; AWS documents
 * only that such a change "might result in an error", and users report the refusal for a message
 * received again, "Message does not exist or is not available for visibility timeout change":
 * https://github.com/mapbox/ecs-watchbot/issues/135) and answers 409 for what SQS refused, 503 or
 * 500 when the check got no answer, so no ack is answered acknowledged for a delete SQS ignored.
 * Every delete is judged by its answer against the sure end it was sent under (the check's, else
 * `e`). An ack well inside the sure visibility costs no extra call.
 *
 * SQS answers DeleteMessage with a stale handle with success, so nothing here relies on SQS to
 * judge a handle. A repeated ack still sends its handle to SQS: if SQS had handed the message out
 * twice (standard queues may, rarely), that deletes the second copy too.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { judgeHandle, type Delivery } from './rules/receipt-handles';
import { byExpiryBucket, releaseQueueRoom, type QueueItem } from './storage/queues';
import { deleteAckRecord, hasAckRecord, putAckRecord } from './storage/queue-message-records';
import { deleteEachFromSqsQueue, holdEachInSqsQueue } from './storage/service-queues';
import { receiptSigningKey } from './storage/signing-key';
import { logger } from '../core/observability';
import { requireQueue } from './operations';

type AckFailure = 'MESSAGE_NOT_FOUND' | 'INVALID_RECEIPT_HANDLE' | 'INTERNAL_ERROR';
/** A failed entry; `error` is the dependency's error when storage or SQS failed (single acks answer it as 503 or 500). */
type AckOutcome = { ok: true; delivery: Delivery } | { ok: false; reason: AckFailure; error?: unknown };

const ackError = (reason: AckFailure, messageId: string): ApiError => {
  if (reason === 'MESSAGE_NOT_FOUND') {
    return new ApiError(404, 'MESSAGE_NOT_FOUND', `Message ${messageId} is not in the queue (already acknowledged, dead-lettered, dropped, expired or never there), or the receipt handle is not one of its handles.`);
  }
  if (reason === 'INVALID_RECEIPT_HANDLE') {
    return new ApiError(409, 'INVALID_RECEIPT_HANDLE', 'The receipt handle is not the current one of this message (its visibility timeout ended, a later receive superseded it, or it was altered); consume the message again.');
  }
  return new ApiError(500, 'INTERNAL_ERROR', 'The message could not be deleted from its queue; retry the ack.');
};

/**
 * A delete sent this long before a delivery's sure visibility end reaches SQS within it; one sent
 * later first extends the visibility ({@link ACK_HOLD_SECONDS}).
 */
const SURE_DELETE_MS = 2_000;
/** The visibility an ack's check gives a delivery it is about to delete: the delete's time, retries included. */
const ACK_HOLD_SECONDS = 30;

/** What writing an entry's ack record decided: this call won the message, another ack had it, or storage failed. */
type Claim = 'won' | 'lost' | 'skipped' | { error: unknown };

/** Judges and applies the acks of one call; outcomes in request order. */
async function ackAll(q: QueueItem, entries: { message_id: string; receipt_handle: string }[], now: number): Promise<AckOutcome[]> {
  const key = await receiptSigningKey();
  // Names this call's ack records, so a write the SDK retried is recognised as its own.
  const token = randomBytes(9).toString('base64url');
  const judged = entries.map((e) => judgeHandle(e.receipt_handle, { queueId: q.id, messageId: e.message_id, now, key, ttlMs: q.message_ttl_seconds * 1000 }));
  // Acks of the same message within one call: only the first may win it.
  const firstOf = new Map<string, number>();
  const claims = await Promise.all(
    judged.map(async (j, i): Promise<Claim> => {
      if (j.verdict !== 'current' || firstOf.has(j.delivery.m)) return 'skipped';
      firstOf.set(j.delivery.m, i);
      try {
        return (await putAckRecord(q.namespace, q.id, j.delivery.m, j.delivery.u, now, token, now + q.message_ttl_seconds * 1000)) ? 'won' : 'lost';
      } catch (error) {
        // The write may have been applied with its answer lost: take the record back, or a retry
        // of this ack would find it and answer 404 for a message it never acknowledged.
        await deleteAckRecord(q.namespace, q.id, j.delivery.m, token).catch(() => undefined);
        return { error };
      }
    }),
  );
  // Deleted in SQS: what this call won, and the repeats (a second SQS copy goes too); not the
  // entries whose record is in doubt, so that their retry finds the message and wins it, and not
  // deliveries whose visibility has ended meanwhile (a slow call): SQS ignores a delete with a
  // handle that is no longer the latest one, so the message may already be someone else's.
  const checkedAt = Date.now();
  const late = new Set(judged.flatMap((j, i) => (j.verdict === 'current' && typeof claims[i] === 'string' && j.delivery.u <= checkedAt ? [i] : [])));
  // Won deliveries past their sure visibility: extended first; what SQS refuses is no longer
  // this delivery's (a later receive has the message, or it is visible again) and is not deleted.
  const unsure = new Set(
    judged.flatMap((j, i) => (j.verdict === 'current' && claims[i] === 'won' && !late.has(i) && !((j.delivery.e ?? 0) - checkedAt > SURE_DELETE_MS) ? [i] : [])),
  );
  const handleOf = (i: number) => (judged[i] as { delivery: Delivery }).delivery;
  const heldUntil = Date.now() + ACK_HOLD_SECONDS * 1000;
  const check = unsure.size ? await holdEachInSqsQueue(q.sqs_queue, [...unsure].map((i) => handleOf(i).h), ACK_HOLD_SECONDS) : { kept: new Set<string>(), unanswered: [] as string[], error: undefined };
  // A check that got no answer says nothing: answered as the dependency's failure, not deleted.
  const unchecked = new Set([...unsure].filter((i) => check.unanswered.includes(handleOf(i).h)));
  for (const i of unsure) if (!unchecked.has(i) && !check.kept.has(handleOf(i).h)) late.add(i);
  // A message whose winning entry is not deleted keeps its other handles of this call too: one
  // of them may be current, and deleting with it would remove a message this call did not count.
  const keptBack = new Set([...late, ...unchecked].filter((i) => claims[i] === 'won').map((i) => handleOf(i).m));
  const toDelete = judged.flatMap((j, i) =>
    j.verdict === 'current' && typeof claims[i] === 'string' && !late.has(i) && !unchecked.has(i) && !(claims[i] === 'skipped' && keptBack.has(j.delivery.m)) ? [{ i, d: j.delivery }] : [],
  );
  // Each DeleteMessageBatch call answers for its own entries: one failed call fails only those.
  const { failed: notDeleted, error: deleteError } = toDelete.length ? await deleteEachFromSqsQueue(q.sqs_queue, toDelete.map((c) => c.d.h)) : { failed: [], error: undefined };
  const failed = new Set(notDeleted);
  // A handle past its visibility of a message that was acknowledged (its ack record is kept for
  // the queue's TTL): 404, the message is gone, rather than 409 "consume it again".
  const ackedBefore = await Promise.all(
    judged.map(async (j, i) =>
      j.verdict === 'stale' && j.why === 'expired' ? hasAckRecord(q.namespace, q.id, entries[i].message_id, now).catch(() => false) : false,
    ),
  );
  // Only a delete answered before the delivery's sure end (the check's hold, else the receive's
  // request time plus the visibility) surely reached SQS within it. A later one is answered like
  // an expired handle (409); the message, if still there, is delivered again and acked then.
  const answeredAt = Date.now();
  for (const c of toDelete) if ((unsure.has(c.i) ? heldUntil : (c.d.e ?? c.d.u)) <= answeredAt && !failed.has(c.d.h)) late.add(c.i);
  const outcomes: AckOutcome[] = judged.map((j, i) => {
    const claim = claims[i];
    if (j.verdict === 'other' || j.verdict === 'gone') return { ok: false, reason: 'MESSAGE_NOT_FOUND' };
    if (j.verdict === 'stale') return { ok: false, reason: ackedBefore[i] ? 'MESSAGE_NOT_FOUND' : 'INVALID_RECEIPT_HANDLE' };
    if (typeof claim === 'object') return { ok: false, reason: 'INTERNAL_ERROR', error: claim.error };
    if (claim !== 'won') return { ok: false, reason: 'MESSAGE_NOT_FOUND' };
    if (unchecked.has(i)) return { ok: false, reason: 'INTERNAL_ERROR', error: check.error };
    if (late.has(i)) return { ok: false, reason: 'INVALID_RECEIPT_HANDLE' };
    if (failed.has(j.delivery.h)) return { ok: false, reason: 'INTERNAL_ERROR', error: deleteError };
    return { ok: true, delivery: j.delivery };
  });
  // Records of acks that did not take effect go again, so the message's next delivery (or a
  // retried ack) can still be acknowledged.
  await Promise.all(
    judged.map(async (j, i) => {
      if (j.verdict !== 'current' || claims[i] !== 'won') return;
      if (failed.has(j.delivery.h)) logger.error('SQS did not delete an acknowledged message; its ack record is removed so the ack can be retried', { queue: q.name });
      else if (unchecked.has(i)) logger.warn('SQS did not answer the check of a late ack; its ack record is removed so the ack can be retried', { queue: q.name });
      else if (late.has(i)) logger.warn('an ack reached SQS after its delivery ended; answered as expired', { queue: q.name });
      else return;
      await deleteAckRecord(q.namespace, q.id, j.delivery.m, token);
    }),
  );
  const acked = outcomes.flatMap((o) => (o.ok ? [o.delivery] : []));
  if (acked.length) {
    try {
      const buckets = byExpiryBucket(acked, q.message_ttl_seconds, (d) => d.p, (d) => d.s);
      await releaseQueueRoom(q.namespace, q.id, { count: acked.length, bytes: acked.reduce((n, d) => n + d.s, 0), buckets }, now);
    } catch (e) {
      // The messages are acknowledged and gone: answer so. Failing the call would make its retry
      // meet the ack records and answer 404; the counters catch up when the sweeper reconciles.
      logger.error('ack could not update the queue counters; the sweeper reconciles them', { queue: q.name, error: (e as Error).message });
    }
  }
  return outcomes;
}

/** Acknowledges one message; returns the time of the ack. */
export async function ackOne(ns: string, name: string, messageId: string, handle: string, now: number): Promise<number> {
  const q = await requireQueue(ns, name);
  const [out] = await ackAll(q, [{ message_id: messageId, receipt_handle: handle }], now);
  // A dependency's own error is answered as such (503 when it is passing, else 500).
  if (!out.ok) throw out.error ?? ackError(out.reason, messageId);
  return now;
}

/** Batch ack (extension): each entry judged like a single ack, results in request order. */
export async function ackBatch(ns: string, name: string, entries: { message_id: string; receipt_handle: string }[], now: number) {
  const q = await requireQueue(ns, name);
  const outcomes = await ackAll(q, entries, now);
  return {
    results: outcomes.map((o, i) => {
      if (o.ok) return { message_id: entries[i].message_id, acknowledged: true, acknowledged_at: isoTime(now) };
      const e = ackError(o.reason, entries[i].message_id);
      return { message_id: entries[i].message_id, acknowledged: false, error: { code: e.code, message: e.message } };
    }),
    acknowledged_count: outcomes.filter((o) => o.ok).length,
  };
}
