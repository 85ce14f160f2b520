/**
 * The per-message records of a queue (DESIGN.md section 6): the ack record of each acknowledged
 * message, which a consume's settle also writes for a message it dead-letters, drops or finds
 * expired (lambda/queues/leftovers.ts), and the count of receives the service handed back
 * unreturned. One item each, keyed by the message (`metaKeys.queueMessage`).
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';

const META = () => tableName('meta');

/**
 * Writes the ack record of a message (DESIGN.md section 6) unless one of an unexpired delivery is
 * there: true for the first ack of a message, false for a repeated or concurrent one (and for a
 * second copy SQS delivered at the same time). A later delivery may write a fresh one once the
 * acked delivery's visibility has ended (`until`: a second SQS copy). The record is kept until
 * `keepUntil` (the ack's time plus the queue's TTL: as long as the message could otherwise exist),
 * so a repeated ack after the visibility ended still finds it and answers 404, not 409; DynamoDB
 * TTL removes it after.
 *
 * `token` names the ack call that writes the record. When the SDK retries the write after an
 * answer was lost, the retry meets the record its own first attempt wrote and fails the
 * condition; the token tells that apart from another ack's record (one consistent read, only on a
 * failed condition), so the ack that won is not answered 404.
 */
export async function putAckRecord(ns: string, queueId: string, messageId: string, until: number, now: number, token: string, keepUntil = until): Promise<boolean> {
  const key = metaKeys.queueMessage(ns, queueId, messageId, 'ACK');
  try {
    await ddb().send(
      new PutCommand({
        TableName: META(),
        Item: { ...key, until, acked_at: now, ack_token: token, ttl: ttlSeconds(Math.max(until, keepUntil)) + 60 },
        ConditionExpression: 'attribute_not_exists(pk) OR #u <= :now',
        ExpressionAttributeNames: { '#u': 'until' },
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const out = await ddb().send(new GetCommand({ TableName: META(), Key: key, ConsistentRead: true }));
    return out.Item?.ack_token === token;
  }
}

/**
 * How long an ack call may still be running after it wrote its record: longer than the API
 * function may run (29 s, API Gateway's integration timeout, lib/constructs/functions.ts; Lambda
 * stops a function at its timeout: https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html).
 */
const ACK_RUNS_AT_MOST_MS = 30_000;

/**
 * What a settle's claim on a message found ({@link putSettledRecord}): `won`, this settle alone
 * removes the message (and republishes and counts it); `settled`, the message was acknowledged or
 * settled already (what is left in SQS is a copy to delete silently); `busy`, another settle's
 * claim may still be publishing it (the message is left hidden and met again later).
 */
export type SettleClaim = 'won' | 'settled' | 'busy';

/**
 * Records that a consume settles the message (dead-lettered, dropped or expired at receive) in
 * the place of its ack record, unless any record is there. Kept until `keepUntil`, so an old
 * handle of the message answers 404 like one of an acknowledged message, and no later ack or
 * settle counts it again. `token` tells a retried write of this settle from another's.
 *
 * With `claimUntil` the record is only a claim until {@link finishSettledRecord} makes it final:
 * the settle has yet to publish the message to its dead-letter topic, and may fail to (it then
 * takes the claim back with `deleteAckRecord`). A claim is no proof of a dead-lettering: another
 * settle meeting it answers `busy`, never `settled`, and once `claimUntil` has passed (the
 * settle that wrote it has ended, its function's time is up) it takes the claim over, so a claim
 * whose settle failed and could not take it back, or died midway, never removes the message
 * unpublished. Without `claimUntil` (nothing to publish: expiry) the record is final at once.
 * An ack record is final only once its call has surely ended ({@link ACK_RUNS_AT_MOST_MS}) or
 * while its delivery is current (then this is a second SQS copy): before that, `busy`.
 */
export async function putSettledRecord(ns: string, queueId: string, messageId: string, keepUntil: number, now: number, token: string, claimUntil?: number): Promise<SettleClaim> {
  const key = metaKeys.queueMessage(ns, queueId, messageId, 'ACK');
  try {
    await ddb().send(
      new PutCommand({
        TableName: META(),
        Item: { ...key, until: keepUntil, acked_at: now, settled: true, ack_token: token, ttl: ttlSeconds(keepUntil) + 60, ...(claimUntil === undefined ? {} : { claim_until: claimUntil }) },
        // A comparison with a missing attribute is false: final records and acks are never taken over.
        ConditionExpression: 'attribute_not_exists(pk) OR claim_until <= :now',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return 'won';
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const out = await ddb().send(new GetCommand({ TableName: META(), Key: key, ConsistentRead: true }));
    if (out.Item?.ack_token === token) return 'won';
    // Gone since (a claim taken back) or another settle's claim: met again after the hold.
    if (!out.Item || out.Item.claim_until !== undefined) return 'busy';
    // An ack whose delivery has ended and whose call may still run: its SQS delete may come
    // after the visibility, and the ack then answers 409 and takes its record back (lambda/queues/ack.ts),
    // so the message is not acknowledged: met again after the hold, never deleted as a copy.
    if (!out.Item.settled && Number(out.Item.until) <= now && Number(out.Item.acked_at) > now - ACK_RUNS_AT_MOST_MS) return 'busy';
    return 'settled';
  }
}

/**
 * Makes this settle's claim final once the message is dead-lettered or dropped. False when the
 * claim is no longer this settle's (it lapsed and another settle took it over, or that one took it
 * back): the other settle counts the message, or the next one after the hold does, so this one
 * must not count it too.
 */
export async function finishSettledRecord(ns: string, queueId: string, messageId: string, token: string): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.queueMessage(ns, queueId, messageId, 'ACK'),
        UpdateExpression: 'REMOVE claim_until',
        ConditionExpression: 'ack_token = :t',
        ExpressionAttributeValues: { ':t': token },
      }),
    );
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    return false;
  }
}

/** Whether the message has an ack record (it was acknowledged within its TTL). */
export async function hasAckRecord(ns: string, queueId: string, messageId: string, now: number): Promise<boolean> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.queueMessage(ns, queueId, messageId, 'ACK'), ConsistentRead: true }));
  // DynamoDB TTL deletes late (up to days): a record past its ttl is gone for this purpose.
  return !!out.Item && (out.Item.ttl === undefined || Number(out.Item.ttl) * 1000 > now);
}

/**
 * Removes the ack record written by the ack call `token` (its SQS delete failed, or its own write
 * failed and may have been applied), so a retried ack can still succeed. Never removes the record
 * of another ack.
 */
export async function deleteAckRecord(ns: string, queueId: string, messageId: string, token: string): Promise<void> {
  try {
    await ddb().send(
      new DeleteCommand({
        TableName: META(),
        Key: metaKeys.queueMessage(ns, queueId, messageId, 'ACK'),
        ConditionExpression: 'ack_token = :t',
        ExpressionAttributeValues: { ':t': token },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // not ours, or never written: nothing to remove
  }
}

/**
 * Counts a receive the service handed back without returning it (a consume over its response
 * budget), so the retry limit does not count it; kept as long as the message may live.
 */
export async function addReleasedReceive(ns: string, queueId: string, messageId: string, ttlSecondsFromNow: number, now: number): Promise<void> {
  await ddb().send(
    new UpdateCommand({
      TableName: META(),
      Key: metaKeys.queueMessage(ns, queueId, messageId, 'RELEASED'),
      UpdateExpression: 'ADD released :one SET #t = :ttl',
      ExpressionAttributeNames: { '#t': 'ttl' },
      ExpressionAttributeValues: { ':one': 1, ':ttl': ttlSeconds(now + ttlSecondsFromNow * 1000) + 3600 },
    }),
  );
}

/** Released receives of messages (only asked for messages that look out of deliveries). */
export async function releasedReceives(ns: string, queueId: string, messageIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  await Promise.all(
    messageIds.map(async (id) => {
      const got = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.queueMessage(ns, queueId, id, 'RELEASED'), ConsistentRead: true }));
      if (got.Item?.released) out.set(id, Number(got.Item.released));
    }),
  );
  return out;
}

