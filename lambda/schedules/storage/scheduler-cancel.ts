/**
 * The cancel of a held message (./scheduler.ts): `pending` → `cancelled` in one conditional
 * UpdateItem on the state, so a cancel and a handover never both win, then the giving back of the
 * room it held in its queues under a hold (`release_until`) that a retry of the cancel may take
 * over once it expires. A packed message's slot is cancelled by ./held-packs.ts.
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { schedulerKeys, ttlSeconds } from '../../core/storage/keys';
import { cancelSlot, type SlotItem } from './held-packs';
import { dropDelayedBody, TOMBSTONE_MS, type DelayedItem } from './scheduler';

const TABLE = () => tableName('scheduler');

export type CancelOutcome = { outcome: 'cancelled'; item: DelayedItem } | { outcome: 'already'; item: DelayedItem } | { outcome: 'unknown' };

/** How long a cancel holds the giving back of its queues' room before a retry of the cancel may take it over. */
export const RELEASE_LEASE_MS = 30_000;

/**
 * Cancels a pending held message: `cancelled` with the item as it was, `already` with its current
 * state, or `unknown`. A cancelled message keeps `release_until` (the cancel's hold, `now` +
 * {@link RELEASE_LEASE_MS}) until {@link endCancelRelease} records its queues' room given back.
 */
export async function cancelDelayed(ns: string, messageId: string, now: number): Promise<CancelOutcome> {
  // As a claim's token: the SDK's resend of this write applied with its answer lost fails its
  // condition; the token read back tells it from a repeated cancel (which would meet its hold: 503).
  const token = randomUUID();
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: schedulerKeys.delayed(ns, messageId),
        UpdateExpression: 'SET #s = :cancelled, done_at = :now, #ttl = :ttl, release_until = :lease, cancel_token = :tok REMOVE due_shard, due_sk, message, claim_until',
        ConditionExpression: '#s = :pending',
        ExpressionAttributeNames: { '#s': 'state', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':cancelled': 'cancelled', ':pending': 'pending', ':now': now, ':ttl': ttlSeconds(now + TOMBSTONE_MS), ':lease': now + RELEASE_LEASE_MS, ':tok': token },
        ReturnValues: 'ALL_OLD',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    if (!out.Attributes?.message) await dropDelayedBody(schedulerKeys.delayed(ns, messageId).pk);
    return { outcome: 'cancelled', item: out.Attributes as DelayedItem };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const item = (e as { Item?: Record<string, unknown> }).Item;
    if (!item) return { outcome: 'unknown' };
    const own = unmarshall(item as Parameters<typeof unmarshall>[0]);
    if (own.cancel_token === token) {
      await dropDelayedBody(schedulerKeys.delayed(ns, messageId).pk); // again: a no-op if deleted
      return { outcome: 'cancelled', item: own as DelayedItem }; // this cancel's own write: the room is given back
    }
    // A packed message's slot item (./held-packs.ts) until its cancel makes it a tombstone.
    if (item.pack && !item.state) return cancelSlot(own as SlotItem, now, now + RELEASE_LEASE_MS);
    return { outcome: 'already', item: unmarshalled(item) };
  }
}

/** The document client hands back a refused condition's item in DynamoDB JSON. */
function unmarshalled(item: Record<string, unknown>): DelayedItem {
  const v = (a: unknown) => (a as { S?: string; N?: string })?.S ?? Number((a as { N?: string })?.N);
  const release = item.release_until === undefined ? {} : { release_until: v(item.release_until) };
  return { state: v(item.state), message_id: v(item.message_id), done_at: v(item.done_at), due_at: v(item.due_at), ...release } as unknown as DelayedItem;
}

/**
 * Takes over giving back a cancelled message's queue room, left unfinished by an earlier cancel
 * (it failed, or its hold expired): the item as it now is and the new hold, `busy` while another
 * cancel holds it, `done` when nothing is left to give back.
 */
export async function takeCancelRelease(ns: string, messageId: string, now: number): Promise<{ item: DelayedItem; lease: number } | 'busy' | 'done'> {
  const lease = now + RELEASE_LEASE_MS;
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: schedulerKeys.delayed(ns, messageId),
        UpdateExpression: 'SET release_until = :lease',
        ConditionExpression: '#s = :cancelled AND release_until < :now',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':lease': lease, ':cancelled': 'cancelled', ':now': now },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { item: out.Attributes as DelayedItem, lease };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const item = (e as { Item?: Record<string, unknown> }).Item;
    return item?.release_until === undefined ? 'done' : 'busy';
  }
}

/**
 * Ends a cancel's hold on giving back its queues' room: all given back (`finished`), or the queue
 * ids given back so far recorded and the hold dropped, so that a retry of the cancel takes over at
 * once and gives back only the rest.
 */
export async function endCancelRelease(ns: string, messageId: string, lease: number, released: string[], finished: boolean): Promise<void> {
  const values: Record<string, unknown> = { ':lease': lease };
  let update = 'REMOVE release_until, released';
  if (!finished) {
    update = `SET release_until = :free${released.length ? ' ADD released :r' : ''}`;
    values[':free'] = 0;
    if (released.length) values[':r'] = new Set(released);
  }
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: schedulerKeys.delayed(ns, messageId),
        UpdateExpression: update,
        ConditionExpression: 'release_until = :lease',
        ExpressionAttributeValues: values,
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // another cancel took over after the hold expired
  }
}
