/**
 * How many webhook deliveries each namespace has in flight (keys.ts `webhookInFlight`), so that
 * one namespace's backlog takes at most its share of the delivery function's capacity
 * (lambda/webhooks/share.ts). A delivery batch admits a namespace's jobs with one conditional ADD
 * and gives them back with one ADD when it is done: two writes per namespace and batch, not per
 * job. The count is kept per minute: a batch gives back to the minute it took from, and a count a
 * crashed invocation never gave back stops mattering when its minute ends.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from './client';
import { metaKeys } from './keys';

/** The minute a batch counts in (Unix seconds of its start). */
export const shareMinute = (nowMs: number) => Math.floor(nowMs / 60_000) * 60;

const key = (ns: string, minute: number) => metaKeys.webhookInFlight(ns, minute);

/**
 * Adds `n` deliveries and one batch if the counts stay within `share` deliveries and `batches`
 * batches; false (nothing changed) otherwise.
 */
async function tryAdd(ns: string, minute: number, n: number, share: number, batches: number): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: key(ns, minute),
        UpdateExpression: 'ADD #n :n, #b :one SET #ttl = :ttl',
        ConditionExpression: '(attribute_not_exists(#n) OR #n <= :room) AND (attribute_not_exists(#b) OR #b < :batches)',
        ExpressionAttributeNames: { '#n': 'in_flight', '#b': 'batches', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':n': n, ':one': 1, ':room': share - n, ':batches': batches, ':ttl': minute + 600 },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/**
 * Admits up to `wanted` deliveries of namespace `ns` in `minute`, within `share` in flight and
 * `batches` batches holding any of them; returns how many it admitted (0 to `wanted`), counted
 * (with this batch) until {@link releaseDeliveries}.
 */
export async function admitDeliveries(ns: string, minute: number, wanted: number, share: number, batches = Number.MAX_SAFE_INTEGER): Promise<number> {
  if (wanted <= 0) return 0;
  if (wanted <= share && (await tryAdd(ns, minute, wanted, share, batches))) return wanted;
  // Not all fit: take what is left, read once (a concurrent batch may take it first: then none).
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key(ns, minute), ConsistentRead: true }));
  if (Number(out.Item?.batches ?? 0) >= batches) return 0;
  const room = Math.min(wanted, share - Number(out.Item?.in_flight ?? 0));
  return room > 0 && (await tryAdd(ns, minute, room, share, batches)) ? room : 0;
}

/** Gives back `n` admitted deliveries of `minute` and the batch that held them. */
export async function releaseDeliveries(ns: string, minute: number, n: number): Promise<void> {
  if (n <= 0) return;
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: key(ns, minute),
      UpdateExpression: 'ADD #n :minus, #b :minusOne',
      ExpressionAttributeNames: { '#n': 'in_flight', '#b': 'batches' },
      ExpressionAttributeValues: { ':minus': -n, ':minusOne': -1 },
    }),
  );
}
