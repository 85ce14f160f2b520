/**
 * Slots of waiting consumers (lambda/queues/bulkhead.ts): one small counter item per namespace
 * and a sharded pool for the whole deployment. A slot is one conditional `ADD used 1` on the
 * namespace's item, then one on a pool shard, given back by `ADD used -1` after the wait. No read,
 * no transaction and no optimistic retry: DynamoDB applies each conditional ADD atomically, so a
 * count never passes its limit however many containers take slots at once
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html#WorkingWithItems.ConditionalUpdate),
 * and the items stay a few dozen bytes whatever the number of waiters (1 WCU per write).
 *
 * The pool's limit is split over `shards` items whose limits add up to it exactly, so the total of
 * waiting consumes stays at most the limit; a take tries one shard at random and, when it is full,
 * one other: no item is written by every waiting consume of the deployment, each shard takes about
 * 1/shards of them (a partition key takes 1,000 write units a second:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html).
 * The price: a consume is shortened when its two shards are full while others have room, so the
 * pool hands out nearly, not always exactly, its limit when nearly full. A namespace's item is
 * split the same way only when the namespace's consume rate limit is raised past what one item
 * takes (`namespaceShards`); at the default limits each namespace has its one item, written only
 * by its own waiting consumes.
 *
 * A container that dies while it waits never gives its slot back. So that such a slot frees
 * itself, time is cut in periods at least as long as the longest lease (the longest wait plus a
 * slack), and every slot is also counted under its period's parity (`c0` / `c1`). Within period g
 * only slots of g and g-1 can still be held: the first take of period g finds the item still in
 * g-1 and rolls it over, subtracting what parity g%2 still counts (slots taken in g-2, all of
 * whose leases have ended: only dead containers' slots) from `used`. A slot given back late (its
 * period two behind) changes nothing, its count having left with the roll-over. So a dead
 * container's slot is free again within two periods, and the limit holds exactly meanwhile.
 *
 * Cost per waiting consume: two conditional UpdateItems to take (1 WCU each) and two to give
 * back, 4 WCU and no read; plus, per item and period, one roll-over (the refused take, then the
 * roll-over that takes the slot with it: 1 WCU more, no read), and when a limit is full one
 * refused write (two on the pool when its first shard is full), no read either.
 */
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
  c0?: number;
  c1?: number;
}

type Key = { pk: string; sk: string };

const parity = (period: number) => (period % 2 === 0 ? 'c0' : 'c1');

/**
 * Takes one slot of `key` in `period` if fewer than `limit` are used; rolls the item over to
 * `period` first when it is behind. Returns the period the slot counts in, or undefined when full.
 * A refused take carries the item as its condition saw it (`ReturnValuesOnConditionCheckFailure:
 * ALL_OLD`, no read: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html),
 * so telling "full" from "behind" costs no read, and a roll-over takes the slot in the same write.
 */
async function takeOne(key: Key, limit: number, period: number): Promise<number | undefined> {
  const TableName = tableName('meta');
  for (let attempt = 0; attempt < 4; attempt++) {
    let old: CountItem | undefined;
    try {
      await ddb().send(
        new UpdateCommand({
          TableName,
          Key: key,
          UpdateExpression: 'ADD used :one, #c :one',
          ConditionExpression: '#p = :p AND used < :limit',
          ExpressionAttributeNames: { '#c': parity(period), '#p': 'period' },
          ExpressionAttributeValues: { ':one': 1, ':p': period, ':limit': limit },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return period;
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
      old = refusedItem(e);
    }
    if (old?.period === period) {
      // The item is in this period: full only if its count says so. A take that failed because the
      // item did not exist yet finds it made meanwhile by another container's roll-over: try again
      // (12 containers taking at once on a new item gave 1 slot of 3 before this).
      if ((old.used ?? 0) >= limit) return undefined;
      continue;
    }
    if (old?.period !== undefined && old.period > period) {
      period = old.period; // this container's clock is behind another's: count in the item's period
      continue;
    }
    const rolled = await rollOverAndTake(key, old, period, limit);
    if (rolled !== 'lost') return rolled === 'taken' ? period : undefined;
  }
  return undefined;
}

/** The numbers of a refused write's item (attribute-value form), undefined when there was none. */
function refusedItem(e: unknown): CountItem | undefined {
  const item = (e as { Item?: Record<string, { N?: string }> }).Item;
  if (!item) return undefined;
  const n = (k: keyof CountItem) => (item[k]?.N === undefined ? undefined : Number(item[k].N));
  return { period: n('period'), used: n('used'), c0: n('c0'), c1: n('c1') };
}

/**
 * Moves the item from its period (`old`, as the refusal saw it) to `period` and takes a slot in
 * the same write when there is room: slots of periods before `period - 1` are all over (their
 * leases ended), so what their parity still counts belongs to dead containers and leaves `used`.
 * Conditional on the item being as seen (every take and give-back moves `used`), so it loses to any
 * concurrent write ('lost': the caller tries again).
 */
async function rollOverAndTake(key: Key, old: CountItem | undefined, period: number, limit: number): Promise<'taken' | 'full' | 'lost'> {
  const fresh = old?.period === undefined || old.period < period - 1;
  const stale = parity(period); // counts period - 2 (or older): over; the new period's parity too
  const used = fresh ? 0 : (old?.used ?? 0) - (old?.[stale] ?? 0);
  const take = used < limit ? 1 : 0;
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: key,
        UpdateExpression: fresh ? 'SET #p = :p, used = :used, #s = :take, #o = :zero' : 'SET #p = :p, used = :used, #s = :take',
        ConditionExpression: old?.period === undefined ? 'attribute_not_exists(#p)' : '#p = :old AND used = :oldUsed',
        ExpressionAttributeNames: { '#p': 'period', '#s': stale, ...(fresh ? { '#o': parity(period + 1) } : {}) },
        ExpressionAttributeValues: {
          ':p': period,
          ':used': used + take,
          ':take': take,
          ...(fresh ? { ':zero': 0 } : {}),
          ...(old?.period === undefined ? {} : { ':old': old.period, ':oldUsed': old.used ?? 0 }),
        },
      }),
    );
    return take ? 'taken' : 'full';
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    return 'lost';
  }
}

/** Gives one slot of `key` taken in `period` back, unless the item rolled past it (it left then). */
async function releaseOne(key: Key, period: number): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: key,
        UpdateExpression: 'ADD used :minus, #c :minus',
        ConditionExpression: '(#p = :p OR #p = :next) AND #c > :zero',
        ExpressionAttributeNames: { '#c': parity(period), '#p': 'period' },
        ExpressionAttributeValues: { ':minus': -1, ':p': period, ':next': period + 1, ':zero': 0 },
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

/** Takes a slot in one of the namespace's items (one, unless its limit is split): the item and period, or undefined when full. */
async function takeInNamespace(ns: string, limits: SlotLimits, period: number): Promise<{ nsShard: number; nsPeriod: number } | undefined> {
  const split = { total: limits.perNamespace, shards: limits.namespaceShards ?? 1 };
  for (const nsShard of twoOf(shardCount(split))) {
    const nsPeriod = await takeOne(slotKeys.namespace(ns, nsShard), shardLimit(split, nsShard), period);
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
  const inNs = await takeInNamespace(ns, limits, period);
  if (inNs === undefined) return { taken: false, full: 'namespace' };
  const { nsShard, nsPeriod } = inNs;
  try {
    for (const shard of twoOf(shardCount(limits))) {
      const allPeriod = await takeOne(slotKeys.shard(limits.pool, shard), shardLimit(limits, shard), nsPeriod);
      if (allPeriod !== undefined) return { taken: true, slot: { ns, nsShard, pool: limits.pool, shard, nsPeriod, allPeriod } };
    }
  } catch (e) {
    await releaseOne(slotKeys.namespace(ns, nsShard), nsPeriod).catch(() => undefined);
    throw e;
  }
  await releaseOne(slotKeys.namespace(ns, nsShard), nsPeriod);
  return { taken: false, full: 'total' };
}

/** Gives a slot back (both items); a failure only delays it to the roll-over two periods on. */
export async function releaseSlot(slot: Slot): Promise<void> {
  await Promise.all([releaseOne(slotKeys.namespace(slot.ns, slot.nsShard), slot.nsPeriod), releaseOne(slotKeys.shard(slot.pool, slot.shard), slot.allPeriod)]);
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
  const item = (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key, ConsistentRead: true }))).Item as CountItem | undefined;
  const period = Math.floor(now / periodMs);
  if (item?.period === undefined || item.period < period - 1) return 0;
  // In the last period: what the parity of period - 2 counts has ended (leaves at the roll-over).
  return (item.used ?? 0) - (item.period < period ? (item[parity(period)] ?? 0) : 0);
}
