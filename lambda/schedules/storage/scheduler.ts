/**
 * The scheduler table's held messages: a message published with a delay beyond
 * SQS's 900 s is one item here from its 201 until the tick hands it over (or it is cancelled).
 *
 * States: `pending` (in the due index) → `handing` (claimed by a tick, still in the index, so a
 * tick that crashed mid-handover leaves it for the next one once the claim expires) → `sent` or
 * `dropped` (out of the index, the message removed, kept as a small tombstone for a week so that
 * a cancel can answer 409). `pending` → `cancelled` by the cancel endpoint. Every change is one
 * conditional UpdateItem on the state, so a cancel and a handover never both win. The cancel's
 * writes are in ./scheduler-cancel.ts.
 *
 * A held message is two items of one partition: the state item above (keys, state, due time,
 * size, targets: well under 1 KB) and its body (`#BODY`: the message), written first. Every state
 * change (claim, progress, finish, cancel) updates only the state item: DynamoDB bills an update
 * by the larger of the item before and after, in 1 KB units
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html),
 * so one holding the message would cost its size twice per handover. The body is never written
 * again: it expires by TTL a week after its due time (TTL deletes are free of charge,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html); a cancel
 * deletes it at once. A message whose whole item fits in 1 KB stays on the state item (the split
 * would only add a write and a read), as do items held before the split.
 *
 * The messages of one publish request due in the same minute for the same targets are packed
 * instead (./held-packs.ts): one state item of the same shape for the pack, in the due index, and
 * per message a slot item at the key above; the tick reads both shapes.
 *
 * Costs: publish one Put of the body (its size) and one of the state item (1 unit, +1 index
 * write); handover one BatchGetItem of the state items, one of the bodies (strongly consistent,
 * 4 KB a read unit), two 1-unit updates of the state item (claim, done) and the index entry's
 * removal, and per target queue of a page one update of its counters before the send
 * (lambda/schedules/delayed.ts); a failed publish one DeleteItem per item it may have stored.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { batchGet, putEach } from '../../core/storage/batch';
import { schedulerKeys, ttlSeconds } from '../../core/storage/keys';
import type { Binding } from '../../core/storage/resources';
import { heldMarks, isPack } from './held-packs';
import type { PublishedMessage } from '../../core/rules/message';
import { dueShard, timeKey } from '../../core/rules/delays';

const TABLE = () => tableName('scheduler');
/** How long a handed-over or cancelled message's tombstone answers a cancel with 409. */
export const TOMBSTONE_MS = 7 * 24 * 3600_000;
/** A claim older than this was a tick that died: the next tick takes the message again. */
export const CLAIM_MS = 2 * 60_000;

type DelayedState = 'pending' | 'handing' | 'sent' | 'dropped' | 'cancelled';

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
  /** The token of the claim in force (kept on the tombstone by its finish). */
  claim_token?: string;
  done_at?: number;
  /** Binding ids a handover that partly failed already handed the message to (a string set): the retry skips them. */
  handed_to?: Set<string>;
  /** Binding ids found deleted by such a handover (the message was counted as dropped for them). */
  gone_from?: Set<string>;
  /** Queue ids the message reached in SQS whose held part (./queue-held.ts) a handover could not end: the retry ends it, without sending again. */
  held_left?: Set<string>;
  /** Set by a cancel until the room in its queues is given back: until when the cancel giving it back holds it (0: free to take). */
  release_until?: number;
  /** Queue ids whose room a cancel already gave back (a string set), when giving it back partly failed. */
  released?: Set<string>;
  /** Counted in its queues' expiry buckets and held amounts (lambda/queues/storage/queues.ts); absent on items held before those. */
  bucketed?: boolean;
  /** The held parts not ended yet (queue ids; a pack's `{slot}:{queue id}`): a handover ends one only by taking it out (lambda/schedules/held-ends.ts). */
  held_open?: Set<string>;
  /** Whether the item has `held_open` (an empty set is no attribute in DynamoDB); absent on items held before it. */
  held_marked?: boolean;
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
    ...heldMarks(targets.filter((t) => t.kind === 'QUEUE').map((t) => t.id)),
    due_shard: schedulerKeys.dueShard('M', dueShard(message.message_id)),
    due_sk: schedulerKeys.dueSk(timeKey(due), ns, message.message_id),
  };
}

const BODY_SK = schedulerKeys.delayedBody('', '').sk;

/**
 * Stores held messages (BatchWriteItem, 25 a call): the bodies first, then the state items of the
 * messages whose body is stored, so the tick never finds a state item without its message. The
 * indexes of the messages not confirmed stored (a body stored without its state item is never
 * found and expires by its TTL).
 */
export async function putDelayed(items: (DelayedItem & Record<string, unknown>)[]): Promise<{ failed: number[]; error?: unknown }> {
  const split = items.map((_, k) => k).filter((k) => !fitsOneUnit(items[k]));
  const splitSet = new Set(split);
  const bodies = split.map((k) => ({ pk: items[k].pk, sk: BODY_SK, message: items[k].message, ttl: ttlSeconds(items[k].due_at + TOMBSTONE_MS) }));
  const first = await putEach(TABLE(), bodies);
  const lost = new Set(first.failed.map((j) => split[j]));
  const stored = items.map((_, k) => k).filter((k) => !lost.has(k));
  const second = await putEach(
    TABLE(),
    stored.map((k) => {
      if (!splitSet.has(k)) return items[k];
      const { message: _message, ...state } = items[k];
      return state;
    }),
  );
  const failed = [...lost, ...second.failed.map((j) => stored[j])].sort((a, b) => a - b);
  return { failed, error: first.error ?? second.error };
}

/**
 * Whether the whole item, message included, stays within one write unit (1 KB; its JSON text
 * over-counts DynamoDB's size of names and values): it is then one item, as a split would add a
 * write at the publish and a read at the handover and save nothing on the claim and the finish.
 */
const fitsOneUnit = (item: Record<string, unknown>) => Buffer.byteLength(JSON.stringify(item)) <= 1000;

/**
 * Reads the messages of claimed state items (strongly consistent, like the state items: the body
 * was written just before its state item) into `message`; items that carry theirs (held before
 * the split) are left as they are. A body not found leaves `message` undefined.
 */
export async function loadDelayedMessages(items: DelayedItem[]): Promise<void> {
  const need = items.filter((i) => !i.message);
  if (!need.length) return;
  const bodies = await batchGet<{ pk: string; message: PublishedMessage }>(TABLE(), need.map((i) => ({ pk: i.pk, sk: BODY_SK })), true);
  const byPk = new Map(bodies.map((b) => [b.pk, b.message]));
  for (const i of need) i.message = byPk.get(i.pk);
}

/** Deletes a cancelled message's body at once (its TTL is the backstop when this fails). */
export async function dropDelayedBody(pk: string): Promise<void> {
  await ddb()
    .send(new DeleteCommand({ TableName: TABLE(), Key: { pk, sk: BODY_SK } }))
    .catch(() => undefined);
}

/**
 * Takes back held messages whose store was not confirmed (a BatchWriteItem whose answer was lost
 * may have stored them): each is deleted unless a tick or a cancel took it already (one
 * conditional DeleteItem each, only on a failed publish). Returns the indexes of those sure to be
 * gone (never stored, or deleted now); the others may still be handed over.
 */
export async function withdrawDelayed(items: Pick<DelayedItem, 'pk' | 'sk'>[]): Promise<number[]> {
  const gone = await Promise.all(
    items.map(async (i, index) => {
      try {
        await ddb().send(
          new DeleteCommand({
            TableName: TABLE(),
            Key: { pk: i.pk, sk: i.sk },
            // A pack with a cancelled slot is kept: that cancel gave its room back already.
            ConditionExpression: 'attribute_not_exists(pk) OR (#s = :pending AND attribute_not_exists(cancelled))',
            ExpressionAttributeNames: { '#s': 'state' },
            ExpressionAttributeValues: { ':pending': 'pending' },
          }),
        );
        return index;
      } catch {
        return undefined; // claimed or cancelled meanwhile, or not deleted: it may still be handed over
      }
    }),
  );
  return gone.filter((i): i is number => i !== undefined);
}

/** Keys of up to `limit` held messages of one shard due at or before `upTo`, oldest first, and where the next page starts. */
export async function dueDelayedKeys(shard: number, upTo: number, limit: number, start?: Record<string, unknown>): Promise<{ keys: { pk: string; sk: string }[]; indexKeys: Record<string, unknown>[]; next?: Record<string, unknown> }> {
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
  const items = out.Items ?? [];
  return { keys: items.map((i) => ({ pk: i.pk as string, sk: i.sk as string })), indexKeys: items, next: out.LastEvaluatedKey };
}

/** Items of the scheduler table by key (held messages, schedules), strongly consistent: the index is eventually consistent. */
export const getSchedulerItems = <T>(keys: { pk: string; sk: string }[]) => batchGet<T>(TABLE(), keys, true);
export const getDelayedItems = (keys: { pk: string; sk: string }[]) => getSchedulerItems<DelayedItem>(keys);

/**
 * Claims a pending message (or one whose claim expired) for a handover: the claim's token, or
 * undefined when another tick or a cancel won. The token makes the claim's and its finish's
 * writes recognise themselves: when DynamoDB applied one and its answer was lost, the SDK sends
 * the same request again, which meets that write; without the token the claim would answer
 * "another tick won" (the message then waits out the claim) and the finish "another tick ended
 * it" (the namespace's held quota then never given back).
 */
export async function claimDelayed(item: Pick<DelayedItem, 'pk' | 'sk'>, now: number): Promise<{ token: string; item: DelayedItem } | undefined> {
  const token = randomUUID();
  try {
    // The item as claimed (a pack's cancelled slots as of the claim: none can be added after it).
    const out = await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET #s = :handing, claim_until = :until, claim_token = :tok',
        ConditionExpression: '#s = :pending OR (#s = :handing AND (claim_until < :now OR claim_token = :tok))',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':handing': 'handing', ':pending': 'pending', ':until': now + CLAIM_MS, ':now': now, ':tok': token },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { token, item: out.Attributes as DelayedItem };
  } catch (e) {
    if (isConditionFailed(e)) return undefined;
    throw e;
  }
}

/**
 * Ends the handover claimed with `token`: `sent` (or `dropped`: every target was deleted), out of
 * the index; false when another tick took the claim over (its finish ends it). The token stays on
 * the tombstone, so a retried write of this finish meets its own.
 */
export async function finishDelayed(item: Pick<DelayedItem, 'pk' | 'sk' | 'message_id'>, state: 'sent' | 'dropped', now: number, token: string): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: item.pk, sk: item.sk },
        // A pack keeps its targets: a cancel that marked its slot before the claim and failed to
        // write its tombstone copies them from here when retried, to give its queues' room back.
        UpdateExpression: `SET #s = :state, done_at = :now, #ttl = :ttl REMOVE due_shard, due_sk, message, ${isPack(item) ? '' : 'targets, '}claim_until, handed_to, gone_from, held_left`,
        ConditionExpression: 'claim_token = :tok AND (#s = :handing OR #s = :state)',
        ExpressionAttributeNames: { '#s': 'state', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':state': state, ':handing': 'handing', ':now': now, ':ttl': ttlSeconds(now + TOMBSTONE_MS), ':tok': token },
      }),
    );
    return true;
  } catch (e) {
    // Finished by another tick that took over an expired claim: the message went out either way.
    if (!isConditionFailed(e)) throw e;
    return false;
  }
}

/**
 * Records, on a claimed handover that partly failed, the targets that got the message (or were
 * found deleted), so that the tick that retries it after the claim expires sends only to the
 * others, and the queues among them whose held part is still to end (`heldLeft`). One write per partly failed message; a handover that fully succeeds or fully fails
 * writes nothing more.
 */
export async function recordHandoverProgress(item: Pick<DelayedItem, 'pk' | 'sk'>, handed: string[], gone: string[], heldLeft: string[] = []): Promise<void> {
  const adds: string[] = [];
  const values: Record<string, unknown> = { ':handing': 'handing' };
  if (heldLeft.length) {
    adds.push('held_left :l');
    values[':l'] = new Set(heldLeft);
  }
  if (handed.length) {
    adds.push('handed_to :h');
    values[':h'] = new Set(handed);
  }
  if (gone.length) {
    adds.push('gone_from :g');
    values[':g'] = new Set(gone);
  }
  if (!adds.length) return;
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: `ADD ${adds.join(', ')}`,
        ConditionExpression: '#s = :handing',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: values,
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // finished by another tick meanwhile
  }
}
