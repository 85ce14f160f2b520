/**
 * Slots of waiting consumers (lambda/queues/bulkhead.ts): one small counter item per namespace
 * and a sharded pool for the whole deployment. A slot is one conditional UpdateItem on the
 * namespace's item, then one on a pool shard, each `ADD used 1` and the taker's id into the set of
 * its period's holders; given back by `ADD used -1` and `DELETE` of the id. No read, no
 * transaction and no optimistic retry: DynamoDB applies each conditional update atomically, so a
 * count never passes its limit however many containers take slots at once
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html#WorkingWithItems.ConditionalUpdate).
 *
 * Once only. The SDK sends a call again when its answer is lost (a timeout, a 5xx:
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html), and DynamoDB
 * applies a conditional ADD again: two slots for one take, or one freed that another holds. So a
 * take's condition also asks that the set not hold its id yet, and a give-back's that it does: a
 * second application is refused, and a refused take whose item (`ALL_OLD`) holds its id knows its
 * first one was applied. The ids cost bytes, not writes: 11 bytes each (8 random bytes in
 * base64url), about 80 holders to the kilobyte a write unit counts, and the deployment's limits
 * are split over items of at most 64 slots (`MAX_SLOTS_PER_ITEM`, lambda/core/rules/long-poll-limits.ts:
 * the namespace's by `namespaceSlotShards`, the pool's by the config's shard count), so every write
 * costs 1 write unit (50 per namespace and 8 per pool shard at the default limits; item size:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
 * An item given more slots (`SlotLimits` asking for fewer items) costs a unit more per further KB.
 * A one-item transaction with a ClientRequestToken would be once-only too, at 2 write units a
 * write (docs/design/0006-bounded-consume.md).
 *
 * The pool's limit is split over `shards` items whose limits add up to it exactly, so the total of
 * waiting consumes stays at most the limit; a take tries one shard at random and, when it is full,
 * one other: no item is written by every waiting consume of the deployment, each shard takes about
 * 1/shards of them (a partition key takes 1,000 write units a second:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html).
 * The price: a consume is shortened when its two shards are full while others have room, so the
 * pool hands out nearly, not always exactly, its limit when nearly full. A namespace's item is
 * split the same way only when the namespace's consume rate limit is raised past what one item
 * takes (`namespaceShards`) or its limit past 64 slots; at the default limits each namespace has
 * its one item, written only by its own waiting consumes.
 *
 * A container that dies while it waits never gives its slot back. So that such a slot frees
 * itself, time is cut in periods at least as long as the longest lease (the longest wait plus a
 * slack), and every slot's holder is kept in its period's parity's set (`h0` / `h1`). Within
 * period g only slots of g and g-1 can still be held: the first take of period g finds the item
 * still in g-1 and rolls it over, dropping the set of parity g%2 (slots taken in g-2, all of whose
 * leases have ended: only dead containers' slots) and counting `used` again from the set it keeps.
 * A slot given back late (its period two behind) changes nothing, its id having left with the
 * roll-over. So a dead container's slot is free again within two periods, and the limit holds
 * exactly meanwhile.
 *
 * Cost per waiting consume: two conditional UpdateItems to take (1 WCU each) and two to give
 * back, 4 WCU and no read; plus, per item and period, one roll-over (the refused take, then the
 * roll-over that takes the slot with it: 1 WCU more, no read), and when a limit is full one
 * refused write (two on the pool when its first shard is full), no read either. A call sent again
 * after a lost answer adds its refused write.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { DEFAULT_POOL_SHARDS } from '../../core/rules/long-poll-limits';

/**
 * The slot items: the namespace's (its own partition, apart from its metadata) and the pool's
 * shards, shared by every function of the deployment (`pool` names it: config().longPollPool).
 */
export const slotKeys = {
  namespace: (ns: string, shard = 0) => ({ pk: shard === 0 ? `NS#${ns}#LONGPOLL` : `NS#${ns}#LONGPOLL#${shard}`, sk: '#COUNT' }),
  shard: (pool = 'ALL', shard = 0) => ({ pk: `LONGPOLL#${pool}#${shard}`, sk: '#COUNT' }),
};


export interface SlotLimits {
  perNamespace: number;
  total: number;
  /** The pool the total counts in. @default 'ALL' */
  pool?: string;
  /** Items the pool's total is split over (fewer when the total is smaller). @default 64 */
  shards?: number;
  /**
   * Items the namespace's limit is split over, as the pool's total is (fewer when the limit is
   * smaller): more than one only for a namespace whose consume rate limit is raised past what one
   * item takes (`namespaceSlotShards`, lambda/queues/rules/long-poll-limits.ts). @default 1
   */
  namespaceShards?: number;
}

/** A slot held: give it back with {@link releaseSlot}. */
export interface Slot {
  ns: string;
  /** The namespace's item it counts in. */
  nsShard?: number;
  pool?: string;
  shard: number;
  /** The taker's id, held in both items' sets. */
  id: string;
  /** The periods it counts in, per item (the same unless containers' clocks differ). */
  nsPeriod: number;
  allPeriod: number;
}

/** Shards in use for a pool of `total`: at most one per slot, so each has room for one. */
export const shardCount = (limits: Pick<SlotLimits, 'total' | 'shards'>) => Math.max(1, Math.min(limits.shards ?? DEFAULT_POOL_SHARDS, limits.total));

/** Shard `i`'s limit: the total split as evenly as whole slots allow, adding up to it exactly. */
export function shardLimit(limits: Pick<SlotLimits, 'total' | 'shards'>, i: number): number {
  const n = shardCount(limits);
  return Math.floor(limits.total / n) + (i < limits.total % n ? 1 : 0);
}

export type TakeResult = { taken: true; slot: Slot } | { taken: false; full: 'namespace' | 'total' };

interface CountItem {
  period?: number;
  used?: number;
  h0?: string[];
  h1?: string[];
  /** Slots the code before the holders' sets took, per period parity (see {@link counted}). */
  c0?: number;
  c1?: number;
}

/** The item as the document client reads it (sets as Sets). */
type StoredItem = Omit<CountItem, 'h0' | 'h1'> & { h0?: Set<string>; h1?: Set<string> };

type Key = { pk: string; sk: string };

/** The set of holders of slots taken in `period` (its parity's). */
const holders = (period: number) => (period % 2 === 0 ? 'h0' : 'h1');

/**
 * The count of slots taken in `period` by the code before the holders' sets (`ADD used 1, c0|c1 1`,
 * given back by `ADD used -1, c0|c1 -1` while that period or the next is the item's and the count is
 * above 0). While a deployment replaces that code, consumes it started still take and give back so;
 * a roll-over counts them with the ids and keeps the counter of the period it keeps, so that their
 * give-back frees what was counted and nothing else (docs/design/0006-bounded-consume.md).
 */
const counted = (period: number) => (period % 2 === 0 ? 'c0' : 'c1');

/** A take's id, the same on each item it writes: 8 random bytes, 11 characters (see the header). */
const takerId = () => randomBytes(8).toString('base64url');

/**
 * Takes one slot of `key` in `period` for `me` if fewer than `limit` are used; rolls the item over
 * to `period` first when it is behind. Returns the period the slot counts in, or undefined when
 * full. A take that fails otherwise may still have been applied (every attempt's answer lost): it
 * is given back, which changes nothing if it was not, and the error thrown.
 */
async function takeOne(key: Key, limit: number, period: number, me: string): Promise<number | undefined> {
  const at = { period };
  try {
    return await takeOrRoll(key, limit, at, me);
  } catch (e) {
    await releaseOne(key, at.period, me).catch(() => undefined);
    throw e;
  }
}

/**
 * {@link takeOne}'s tries; `at.period` is the period of the last write sent. A refused take carries
 * the item as its condition saw it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`, no read:
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html), so telling
 * "full" from "behind" from "already mine" costs no read, and a roll-over takes the slot in the
 * same write.
 */
async function takeOrRoll(key: Key, limit: number, at: { period: number }, me: string): Promise<number | undefined> {
  const TableName = tableName('meta');
  for (let attempt = 0; attempt < 4; attempt++) {
    const period = at.period;
    let old: CountItem | undefined;
    try {
      await ddb().send(
        new UpdateCommand({
          TableName,
          Key: key,
          UpdateExpression: 'ADD used :one, #h :mine',
          ConditionExpression: '#p = :p AND used < :limit AND NOT contains(#h, :me)',
          ExpressionAttributeNames: { '#h': holders(period), '#p': 'period' },
          ExpressionAttributeValues: { ':one': 1, ':mine': new Set([me]), ':me': me, ':p': period, ':limit': limit },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return period;
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
      old = refusedItem(e);
    }
    // The SDK sent this take again after DynamoDB had applied it (its answer lost): the slot is ours.
    if (old?.[holders(period)]?.includes(me)) return period;
    if (old?.period === period) {
      // The item is in this period: full only if its count says so. A take that failed because the
      // item did not exist yet finds it made meanwhile by another container's roll-over: try again
      // (12 containers taking at once on a new item gave 1 slot of 3 before this).
      if ((old.used ?? 0) >= limit) return undefined;
      continue;
    }
    if (old?.period !== undefined && old.period > period) {
      at.period = old.period; // this container's clock is behind another's: count in the item's period
      continue;
    }
    const rolled = await rollOverAndTake(key, old, period, limit, me);
    if (rolled !== 'lost') return rolled === 'taken' ? period : undefined;
  }
  return undefined;
}

/** The item of a refused write (attribute-value form) as numbers and sets, undefined when there was none. */
function refusedItem(e: unknown): CountItem | undefined {
  const item = (e as { Item?: Record<string, { N?: string; SS?: string[] }> }).Item;
  if (!item) return undefined;
  const n = (k: 'period' | 'used' | 'c0' | 'c1') => (item[k]?.N === undefined ? undefined : Number(item[k].N));
  return { period: n('period'), used: n('used'), h0: item.h0?.SS, h1: item.h1?.SS, c0: n('c0'), c1: n('c1') };
}

/**
 * Moves the item from its period (`old`, as the refusal saw it) to `period` and takes a slot for
 * `me` in the same write when there is room: slots of periods before `period - 1` are all over
 * (their leases ended), so their holders' set and old count are dropped (what is left of them
 * belongs to dead containers) and `used` counted again from the set of `period - 1`, which is
 * kept, and from that period's old count ({@link counted}), which is kept too. Conditional on the
 * item being in its period and the kept set and count as seen (takes and give-backs of
 * `period - 1` change them), so it loses to those ('lost': the caller tries again); a refusal whose
 * item holds `me` is this roll-over sent again after it was applied ('taken').
 */
async function rollOverAndTake(key: Key, old: CountItem | undefined, period: number, limit: number, me: string): Promise<'taken' | 'full' | 'lost'> {
  const fresh = old?.period === undefined || old.period < period - 1;
  const ids = fresh ? 0 : (old?.[holders(period - 1)]?.length ?? 0);
  const oldCount = fresh ? undefined : old?.[counted(period - 1)];
  const kept = ids + Math.max(0, oldCount ?? 0);
  const take = kept < limit;
  const set = ['#p = :p', 'used = :used', ...(take ? ['#s = :mine'] : [])];
  // The new period's old count goes with its set (old takes of the new period make it again).
  const remove = [...(take ? [] : ['#s']), '#sc', ...(fresh ? ['#k', '#kc'] : [])];
  const keptAsSeen = `${ids ? 'size(#k) = :ids' : 'attribute_not_exists(#k)'} AND ${oldCount === undefined ? 'attribute_not_exists(#kc)' : '#kc = :oldCount'}`;
  const condition = old?.period === undefined ? 'attribute_not_exists(#p)' : fresh ? '#p = :old' : `#p = :old AND ${keptAsSeen}`;
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: key,
        UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
        ConditionExpression: condition,
        // #s, #sc: the set and old count of period - 2 (or older), over, and the new period's;
        // #k, #kc: period - 1's.
        ExpressionAttributeNames: { '#p': 'period', '#s': holders(period), '#sc': counted(period), '#k': holders(period - 1), '#kc': counted(period - 1) },
        ExpressionAttributeValues: {
          ':p': period,
          ':used': kept + (take ? 1 : 0),
          ...(take ? { ':mine': new Set([me]) } : {}),
          ...(old?.period === undefined ? {} : { ':old': old.period }),
          ...(ids && !fresh ? { ':ids': ids } : {}),
          ...(oldCount !== undefined ? { ':oldCount': oldCount } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return take ? 'taken' : 'full';
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    return refusedItem(e)?.[holders(period)]?.includes(me) ? 'taken' : 'lost';
  }
}

/**
 * Gives `me`'s slot of `key` taken in `period` back: only while the set of its period's parity
 * holds it, so never twice (a give-back sent again after a lost answer is refused) and not after
 * the item rolled past it (its id left then).
 */
async function releaseOne(key: Key, period: number, me: string): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: key,
        UpdateExpression: 'ADD used :minus DELETE #h :mine',
        ConditionExpression: 'contains(#h, :me)',
        ExpressionAttributeNames: { '#h': holders(period) },
        ExpressionAttributeValues: { ':minus': -1, ':mine': new Set([me]), ':me': me },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/** One item of `n` at random, then one other: the items a take tries. */
function twoOf(n: number): number[] {
  const first = Math.floor(Math.random() * n);
  return n > 1 ? [first, (first + 1 + Math.floor(Math.random() * (n - 1))) % n] : [first];
}

/** Takes a slot for `me` in one of the namespace's items (one, unless its limit is split): the item and period, or undefined when full. */
async function takeInNamespace(ns: string, limits: SlotLimits, period: number, me: string): Promise<{ nsShard: number; nsPeriod: number } | undefined> {
  const split = { total: limits.perNamespace, shards: limits.namespaceShards ?? 1 };
  for (const nsShard of twoOf(shardCount(split))) {
    const nsPeriod = await takeOne(slotKeys.namespace(ns, nsShard), shardLimit(split, nsShard), period, me);
    if (nsPeriod !== undefined) return { nsShard, nsPeriod };
  }
  return undefined;
}

/**
 * Takes a slot in the namespace and in the deployment when both have room. `periodMs` must be at
 * least the longest time a slot is held by a live container (the longest wait and a slack).
 */
export async function takeSlot(ns: string, limits: SlotLimits, periodMs: number, now = Date.now()): Promise<TakeResult> {
  const period = Math.floor(now / periodMs);
  const id = takerId();
  const inNs = await takeInNamespace(ns, limits, period, id);
  if (inNs === undefined) return { taken: false, full: 'namespace' };
  const { nsShard, nsPeriod } = inNs;
  try {
    for (const shard of twoOf(shardCount(limits))) {
      const allPeriod = await takeOne(slotKeys.shard(limits.pool, shard), shardLimit(limits, shard), nsPeriod, id);
      if (allPeriod !== undefined) return { taken: true, slot: { ns, nsShard, pool: limits.pool, shard, id, nsPeriod, allPeriod } };
    }
  } catch (e) {
    await releaseOne(slotKeys.namespace(ns, nsShard), nsPeriod, id).catch(() => undefined);
    throw e;
  }
  await releaseOne(slotKeys.namespace(ns, nsShard), nsPeriod, id);
  return { taken: false, full: 'total' };
}

/** Gives a slot back (both items), once however often it is sent; a failure only delays it to the roll-over two periods on. */
export async function releaseSlot(slot: Slot): Promise<void> {
  await Promise.all([releaseOne(slotKeys.namespace(slot.ns, slot.nsShard), slot.nsPeriod, slot.id), releaseOne(slotKeys.shard(slot.pool, slot.shard), slot.allPeriod, slot.id)]);
}

/** Slots in use in the whole pool now (tests and the admin view): the shards' sum. */
export async function poolSlotsInUse(limits: Pick<SlotLimits, 'total' | 'shards' | 'pool'>, periodMs: number, now = Date.now()): Promise<number> {
  const counts = await Promise.all(Array.from({ length: shardCount(limits) }, (_, i) => slotsInUse(slotKeys.shard(limits.pool, i), periodMs, now)));
  return counts.reduce((a, b) => a + b, 0);
}

/** Slots in use in a namespace now, over its `shards` items (tests). */
export async function namespaceSlotsInUse(ns: string, shards: number, periodMs: number, now = Date.now()): Promise<number> {
  const counts = await Promise.all(Array.from({ length: Math.max(1, shards) }, (_, i) => slotsInUse(slotKeys.namespace(ns, i), periodMs, now)));
  return counts.reduce((a, b) => a + b, 0);
}

/** Slots in use of `key` now (tests and the admin view): `used` while the item is in this or the last period. */
export async function slotsInUse(key: Key, periodMs: number, now = Date.now()): Promise<number> {
  const item = (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key, ConsistentRead: true }))).Item as StoredItem | undefined;
  const period = Math.floor(now / periodMs);
  if (item?.period === undefined || item.period < period - 1) return 0;
  // In the last period: the slots of period - 2 have ended (their set and old count leave at the roll-over).
  return (item.used ?? 0) - (item.period < period ? (item[holders(period)]?.size ?? 0) + Math.max(0, item[counted(period)] ?? 0) : 0);
}
