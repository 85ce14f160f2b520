/**
 * Slots of waiting consumers (lambda/long-poll/bulkhead.ts): one item per namespace and one for
 * the whole deployment, each holding a map of lease id → expiry (ms). A lease is taken in both
 * at once (one transaction, optimistic on each item's `version`), and given back after the wait;
 * a lease whose container died expires by itself and is pruned by the next taker, so a crash
 * never leaks a slot for longer than one long poll.
 *
 * Cost per long-poll consume: one BatchGetItem of two small items (strongly consistent, 2 RCU),
 * one TransactWriteItems of two updates (4 WCU) and two UpdateItems to give back (2 WCU). None
 * of it grows with the queue's depth or the number of resources.
 */
import { BatchGetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from './client';

/**
 * The slot items: the namespace's (its own partition, apart from its metadata) and the pool's,
 * shared by every function of the deployment (`pool` names it: config().longPollPool).
 */
export const slotKeys = {
  namespace: (ns: string) => ({ pk: `NS#${ns}#LONGPOLL`, sk: '#SLOTS' }),
  all: (pool = 'ALL') => ({ pk: `LONGPOLL#${pool}`, sk: '#SLOTS' }),
};

interface SlotItem {
  pk: string;
  sk: string;
  version?: number;
  leases?: Record<string, number>;
}

export interface SlotLimits {
  perNamespace: number;
  total: number;
  /** The pool the total counts in. @default 'ALL' */
  pool?: string;
}

export type TakeResult = { taken: true } | { taken: false; full: 'namespace' | 'total' | 'contended' };

const live = (item: SlotItem | undefined, now: number) => Object.entries(item?.leases ?? {}).filter(([, exp]) => exp > now);
const expired = (item: SlotItem | undefined, now: number) => Object.entries(item?.leases ?? {}).filter(([, exp]) => exp <= now).map(([id]) => id);

/** The update that adds `leaseId` to a slot item read as `item`, pruning its expired leases. */
function addLease(key: { pk: string; sk: string }, item: SlotItem | undefined, leaseId: string, expiresAt: number, now: number) {
  const table = tableName('meta');
  if (!item?.leases) {
    return {
      TableName: table,
      Key: key,
      UpdateExpression: 'SET leases = :m, version = :one',
      ConditionExpression: 'attribute_not_exists(version)',
      ExpressionAttributeValues: { ':m': { [leaseId]: expiresAt }, ':one': 1 },
    };
  }
  const gone = expired(item, now);
  const names: Record<string, string> = { '#id': leaseId, ...Object.fromEntries(gone.map((id, i) => [`#x${i}`, id])) };
  return {
    TableName: table,
    Key: key,
    UpdateExpression: `SET leases.#id = :exp, version = :next${gone.length ? ` REMOVE ${gone.map((_, i) => `leases.#x${i}`).join(', ')}` : ''}`,
    ConditionExpression: 'version = :v',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: { ':exp': expiresAt, ':v': item.version ?? 0, ':next': (item.version ?? 0) + 1 },
  };
}

/**
 * Takes a slot for `leaseId` until `expiresAt` in the namespace and in the deployment when both
 * have room; tries again (a few times) when another consume changed an item in between.
 */
export async function takeSlot(ns: string, leaseId: string, expiresAt: number, limits: SlotLimits, now: () => number = Date.now): Promise<TakeResult> {
  const table = tableName('meta');
  for (let attempt = 0; attempt < 4; attempt++) {
    const got = await ddb().send(new BatchGetCommand({ RequestItems: { [table]: { Keys: [slotKeys.namespace(ns), slotKeys.all(limits.pool)], ConsistentRead: true } } }));
    const items = (got.Responses?.[table] ?? []) as SlotItem[];
    const mine = items.find((i) => i.pk === slotKeys.namespace(ns).pk);
    const all = items.find((i) => i.pk === slotKeys.all(limits.pool).pk);
    const t = now();
    if (live(mine, t).length >= limits.perNamespace) return { taken: false, full: 'namespace' };
    if (live(all, t).length >= limits.total) return { taken: false, full: 'total' };
    try {
      await ddb().send(
        new TransactWriteCommand({
          TransactItems: [{ Update: addLease(slotKeys.namespace(ns), mine, leaseId, expiresAt, t) }, { Update: addLease(slotKeys.all(limits.pool), all, leaseId, expiresAt, t) }],
        }),
      );
      return { taken: true };
    } catch (e) {
      if (!isConditionFailed(e) && (e as { name?: string }).name !== 'TransactionCanceledException') throw e;
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 40 * (attempt + 1)));
    }
  }
  return { taken: false, full: 'contended' };
}

/** Gives a slot back (both items); a failure only delays it to the lease's expiry. */
export async function releaseSlot(ns: string, leaseId: string, pool?: string): Promise<void> {
  await Promise.all(
    [slotKeys.namespace(ns), slotKeys.all(pool)].map((Key) =>
      ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key,
          UpdateExpression: 'REMOVE leases.#id',
          ConditionExpression: 'attribute_exists(leases)',
          ExpressionAttributeNames: { '#id': leaseId },
        }),
      ).catch((e) => {
        if (!isConditionFailed(e)) throw e;
      }),
    ),
  );
}
