/**
 * The scheduler table's held messages (issue 20 item 1): a message published with a delay beyond
 * SQS's 900 s is one item here from its 201 until the tick hands it over (or it is cancelled).
 *
 * States: `pending` (in the due index) → `handing` (claimed by a tick, still in the index, so a
 * tick that crashed mid-handover leaves it for the next one once the claim expires) → `sent` or
 * `dropped` (out of the index, the message removed, kept as a small tombstone for a week so that
 * a cancel can answer 409). `pending` → `cancelled` by the cancel endpoint. Every change is one
 * conditional UpdateItem on the state, so a cancel and a handover never both win.
 *
 * Costs (DynamoDB bills an update by the larger of the item before and after): publish one Put
 * of the item (+1 index write); handover one BatchGetItem read, two updates of the item (claim,
 * done) and the index entry's removal.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from './client';
import { batchGet, putEach } from './batch';
import { schedulerKeys, ttlSeconds } from './keys';
import type { Binding } from './resources';
import type { PublishedMessage } from '../domain/message';
import { dueShard, timeKey } from '../domain/delays';

const TABLE = () => tableName('scheduler');
/** How long a handed-over or cancelled message's tombstone answers a cancel with 409. */
export const TOMBSTONE_MS = 7 * 24 * 3600_000;
/** A claim older than this was a tick that died: the next tick takes the message again. */
export const CLAIM_MS = 2 * 60_000;

export type DelayedState = 'pending' | 'handing' | 'sent' | 'dropped' | 'cancelled';

export interface DelayedItem {
  pk: string;
  sk: string;
  namespace: string;
  message_id: string;
  /** Epoch ms the message is due. */
  due_at: number;
  state: DelayedState;
  /** The bindings (standard queues, webhooks) that get the message when it is due; gone after the handover. */
  targets?: Binding[];
  message?: PublishedMessage;
  /** Bytes the message holds in each target queue's counters (its payload). */
  size: number;
  created_at: number;
  claim_until?: number;
  done_at?: number;
  /** Counted in its queues' expiry buckets and held amounts (lambda/storage/queues.ts); absent on items held before those. */
  bucketed?: boolean;
}

/** The item of a message held until `due`, in the due index. */
export function newDelayedItem(ns: string, message: PublishedMessage, targets: Binding[], due: number, now: number): DelayedItem & Record<string, unknown> {
  return {
    ...schedulerKeys.delayed(ns, message.message_id),
    namespace: ns,
    message_id: message.message_id,
    due_at: due,
    state: 'pending',
    targets,
    message,
    size: message.size,
    created_at: now,
    bucketed: true,
    due_shard: schedulerKeys.dueShard('M', dueShard(message.message_id)),
    due_sk: schedulerKeys.dueSk(timeKey(due), ns, message.message_id),
  };
}

/** Stores held messages (BatchWriteItem, 25 a call); the indexes of those not confirmed stored. */
export const putDelayed = (items: Record<string, unknown>[]) => putEach(TABLE(), items);

/** Keys of up to `limit` held messages of one shard due at or before `upTo`, oldest first, and where the next page starts. */
export async function dueDelayedKeys(shard: number, upTo: number, limit: number, start?: Record<string, unknown>): Promise<{ keys: { pk: string; sk: string }[]; next?: Record<string, unknown> }> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: TABLE(),
      IndexName: 'due',
      KeyConditionExpression: 'due_shard = :s AND due_sk < :upTo',
      ExpressionAttributeValues: { ':s': schedulerKeys.dueShard('M', shard), ':upTo': timeKey(upTo + 1) },
      Limit: limit,
      ExclusiveStartKey: start,
    }),
  );
  return { keys: (out.Items ?? []).map((i) => ({ pk: i.pk as string, sk: i.sk as string })), next: out.LastEvaluatedKey };
}

/** Items of the scheduler table by key (held messages, schedules), strongly consistent: the index is eventually consistent. */
export const getSchedulerItems = <T>(keys: { pk: string; sk: string }[]) => batchGet<T>(TABLE(), keys, true);
export const getDelayedItems = (keys: { pk: string; sk: string }[]) => getSchedulerItems<DelayedItem>(keys);

/** Claims a pending message (or one whose claim expired) for a handover; false when another tick or a cancel won. */
export async function claimDelayed(item: Pick<DelayedItem, 'pk' | 'sk'>, now: number): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET #s = :handing, claim_until = :until',
        ConditionExpression: '#s = :pending OR (#s = :handing AND claim_until < :now)',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':handing': 'handing', ':pending': 'pending', ':until': now + CLAIM_MS, ':now': now },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** Ends a claimed handover: `sent` (or `dropped`: every target was deleted), out of the index. */
export async function finishDelayed(item: Pick<DelayedItem, 'pk' | 'sk'>, state: 'sent' | 'dropped', now: number): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET #s = :state, done_at = :now, #ttl = :ttl REMOVE due_shard, due_sk, message, targets, claim_until',
        ConditionExpression: '#s = :handing',
        ExpressionAttributeNames: { '#s': 'state', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':state': state, ':handing': 'handing', ':now': now, ':ttl': ttlSeconds(now + TOMBSTONE_MS) },
      }),
    );
  } catch (e) {
    // Finished by another tick that took over an expired claim: the message went out either way.
    if (!isConditionFailed(e)) throw e;
  }
}

export type CancelOutcome = { outcome: 'cancelled'; item: DelayedItem } | { outcome: 'already'; item: DelayedItem } | { outcome: 'unknown' };

/** Cancels a pending held message: `cancelled` with the item as it was, `already` with its current state, or `unknown`. */
export async function cancelDelayed(ns: string, messageId: string, now: number): Promise<CancelOutcome> {
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: schedulerKeys.delayed(ns, messageId),
        UpdateExpression: 'SET #s = :cancelled, done_at = :now, #ttl = :ttl REMOVE due_shard, due_sk, message, claim_until',
        ConditionExpression: '#s = :pending',
        ExpressionAttributeNames: { '#s': 'state', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':cancelled': 'cancelled', ':pending': 'pending', ':now': now, ':ttl': ttlSeconds(now + TOMBSTONE_MS) },
        ReturnValues: 'ALL_OLD',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { outcome: 'cancelled', item: out.Attributes as DelayedItem };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const item = (e as { Item?: Record<string, unknown> }).Item;
    return item ? { outcome: 'already', item: unmarshalled(item) } : { outcome: 'unknown' };
  }
}

/** The document client hands back a refused condition's item in DynamoDB JSON. */
function unmarshalled(item: Record<string, unknown>): DelayedItem {
  const v = (a: unknown) => (a as { S?: string; N?: string })?.S ?? Number((a as { N?: string })?.N);
  return { state: v(item.state), message_id: v(item.message_id), done_at: v(item.done_at), due_at: v(item.due_at) } as unknown as DelayedItem;
}
