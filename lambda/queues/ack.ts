/**
 * Ack and batch ack (DESIGN.md section 6). A handle is judged by its signature and what it names
 * (lambda/domain/receipt-handles.ts): 404 when it does not name this queue's message, 409 when it
 * is this message's but altered or past its visibility. A current one writes the message's ack
 * record (one conditional PutItem): the first ack of a message wins it, a repeated or concurrent
 * one answers 404 and moves no counter. Then SQS deletes the message (DeleteMessageBatch: one call
 * per 10 handles); if that fails, the record is removed again so a retried ack can succeed. The
 * counters move once per call.
 *
 * SQS answers DeleteMessage with a stale handle with success, so nothing here relies on SQS to
 * judge a handle. A repeated ack still sends its handle to SQS: if SQS had handed the message out
 * twice (standard queues may, rarely), that deletes the second copy too.
 */
import { ApiError } from '../domain/errors';
import { isoTime } from '../domain/envelope';
import { judgeHandle, type Delivery } from '../domain/receipt-handles';
import { deleteAckRecord, putAckRecord, releaseQueueRoom, type QueueItem } from '../storage/queues';
import { deleteFromSqsQueue } from '../adapters/service-queues';
import { receiptSigningKey } from '../adapters/signing-key';
import { logger } from '../observability';
import { requireQueue } from './operations';

type AckFailure = 'MESSAGE_NOT_FOUND' | 'INVALID_RECEIPT_HANDLE' | 'INTERNAL_ERROR';
type AckOutcome = { ok: true; delivery: Delivery } | { ok: false; reason: AckFailure };

export const ackError = (reason: AckFailure, messageId: string): ApiError => {
  if (reason === 'MESSAGE_NOT_FOUND') {
    return new ApiError(404, 'MESSAGE_NOT_FOUND', `Message ${messageId} is not in the queue (already acknowledged, expired or never there), or the receipt handle is not one of its handles.`);
  }
  if (reason === 'INVALID_RECEIPT_HANDLE') {
    return new ApiError(409, 'INVALID_RECEIPT_HANDLE', 'The receipt handle is not the current one of this message (its visibility timeout ended, a later receive superseded it, or it was altered); consume the message again.');
  }
  return new ApiError(500, 'INTERNAL_ERROR', 'The message could not be deleted from its queue; retry the ack.');
};

/** Judges and applies the acks of one call; outcomes in request order. */
async function ackAll(q: QueueItem, entries: { message_id: string; receipt_handle: string }[], now: number): Promise<AckOutcome[]> {
  const key = await receiptSigningKey();
  const judged = entries.map((e) => judgeHandle(e.receipt_handle, { queueId: q.id, messageId: e.message_id, now, key }));
  // Acks of the same message within one call: only the first may win it.
  const firstOf = new Map<string, number>();
  const won = await Promise.all(
    judged.map(async (j, i) => {
      if (j.verdict !== 'current' || firstOf.has(j.delivery.m)) return false;
      firstOf.set(j.delivery.m, i);
      return putAckRecord(q.namespace, q.id, j.delivery.m, j.delivery.u, now);
    }),
  );
  const current = judged.flatMap((j, i) => (j.verdict === 'current' ? [{ i, d: j.delivery }] : []));
  const failed = new Set(current.length ? await deleteFromSqsQueue(q.sqs_queue, current.map((c) => c.d.h)).catch(() => current.map((c) => c.d.h)) : []);
  const outcomes: AckOutcome[] = judged.map((j, i) => {
    if (j.verdict === 'other') return { ok: false, reason: 'MESSAGE_NOT_FOUND' };
    if (j.verdict === 'stale') return { ok: false, reason: 'INVALID_RECEIPT_HANDLE' };
    if (!won[i]) return { ok: false, reason: 'MESSAGE_NOT_FOUND' };
    if (failed.has(j.delivery.h)) return { ok: false, reason: 'INTERNAL_ERROR' };
    return { ok: true, delivery: j.delivery };
  });
  // Records of acks whose SQS delete failed go again, so a retried ack can still succeed.
  await Promise.all(
    judged.map(async (j, i) => {
      if (j.verdict === 'current' && won[i] && failed.has(j.delivery.h)) {
        logger.error('SQS did not delete an acknowledged message; its ack record is removed so the ack can be retried', { queue: q.name });
        await deleteAckRecord(q.namespace, q.id, j.delivery.m);
      }
    }),
  );
  const acked = outcomes.flatMap((o) => (o.ok ? [o.delivery] : []));
  if (acked.length) await releaseQueueRoom(q.namespace, q.id, { count: acked.length, bytes: acked.reduce((n, d) => n + d.s, 0) }, now);
  return outcomes;
}

/** Acknowledges one message; returns the time of the ack. */
export async function ackOne(ns: string, name: string, messageId: string, handle: string, now: number): Promise<number> {
  const q = await requireQueue(ns, name);
  const [out] = await ackAll(q, [{ message_id: messageId, receipt_handle: handle }], now);
  if (!out.ok) throw ackError(out.reason, messageId);
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
