/**
 * Slots of waiting consumers (lambda/long-poll/bulkhead.ts): one small counter item per namespace
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
 * itself, time is cut in periods, each a third of the longest lease (the longest wait plus a slack), and every slot is also counted under
 * its period in a ring of {@link RING} counters (`c0` to `c3`, period modulo 4). Within period g only
 * slots of g-3 to g can still be held; the first take of period g finds the item behind and rolls
 * it over, subtracting from `used` what the ring still counts for the periods that ended (taken in
 * g-4 or before, all of whose leases have ended). A slot given back late (its period rolled out)
 * changes nothing, its count having left with the roll-over. So a slot not given back counts for
 * three to four periods from its take (the longest lease, then at most one period more), and the
 * limit holds exactly meanwhile.
 *
 * Cost per waiting consume: one conditional UpdateItem per item to take (1 WCU each, no read),
 * and one per item to give back: 4 WCU. A container remembers each item as its last write left
 * it (`ReturnValues`, free), so when the item is behind it rolls it over and takes in one write
 * conditional on the item being as remembered: a lone consumer, whose own writes are the item's
 * last, pays one write per item per take, a roll-over included (it paid a refused take and the
 * roll-over, 3 WCU per item with the give-back, 6 in all); when another container
 * wrote meanwhile the refusal carries the item (one refused write, billed), then the right write.
 * A full limit costs one refused write (two on the pool when its first shard is full).
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from './client';
import { DEFAULT_POOL_SHARDS } from '../domain/long-poll-limits';

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
   * item takes (`namespaceSlotShards`, lambda/domain/long-poll-limits.ts). @default 1
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
  c2?: number;
  c3?: number;
}

type Key = { pk: string; sk: string };

/** Periods a slot is counted under, modulo: a lease lasts at most RING - 1 periods (slotPeriodMs). */
export const RING = 4;
const ringKey = (period: number) => `c${period % RING}` as 'c0' | 'c1' | 'c2' | 'c3';
/** `used` less what the ring counts for the periods after `old.period` up to `period` (those counters' periods ended), or 0 when all ended. */
function usedAt(old: CountItem, period: number): number {
  if (old.period === undefined || period - old.period >= RING) return 0;
  let used = old.used ?? 0;
  for (let g = old.period + 1; g <= period; g++) used -= old[ringKey(g)] ?? 0;
  return used;
}
/** Each item as this container's last write of it left it (or a refusal showed it): see the header. */
const lastSeen = new Map<string, CountItem>();
const itemId = (key: Key) => `${key.pk}|${key.sk}`;
function remember(key: Key, item: CountItem | undefined) {
  if (lastSeen.size > 10_000) lastSeen.clear();
  if (item) lastSeen.set(itemId(key), item);
  else lastSeen.delete(itemId(key));
}

/**
 * Takes one slot of `key` in `period` if fewer than `limit` are used; rolls the item over to
 * `period` first when it is behind. Returns the period the slot counts in, or undefined when full.
 * A refused take carries the item as its condition saw it (`ReturnValuesOnConditionCheckFailure:
 * ALL_OLD`, no read: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html),
 * so telling "full" from "behind" costs no read, and a roll-over takes the slot in the same write.
 * An item this container remembers behind is rolled over at once (one write when no other
 * container wrote it since).
 */
async function takeOne(key: Key, limit: number, period: number): Promise<number | undefined> {
  const TableName = tableName('meta');
  let old = lastSeen.get(itemId(key));
  for (let attempt = 0; attempt < 4; attempt++) {
    if (old?.period !== undefined && old.period > period) period = old.period; // this container's clock is behind another's: count in the item's period
    if (old?.period !== undefined && old.period < period) {
      const rolled = await rollOverAndTake(key, old, period, limit);
      if (rolled.result !== 'lost') return rolled.result === 'taken' ? period : undefined;
      old = rolled.old;
      continue;
    }
    try {
      const out = await ddb().send(
        new UpdateCommand({
          TableName,
          Key: key,
          UpdateExpression: 'ADD used :one, #c :one',
          ConditionExpression: '#p = :p AND used < :limit',
          ExpressionAttributeNames: { '#c': ringKey(period), '#p': 'period' },
          ExpressionAttributeValues: { ':one': 1, ':p': period, ':limit': limit },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      remember(key, out.Attributes as CountItem | undefined);
      return period;
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
      old = refusedItem(e);
      remember(key, old);
    }
    if (old?.period === period) {
      // The item is in this period: full only if its count says so. A take that failed because the
      // item did not exist yet finds it made meanwhile by another container's roll-over: try again
      // (12 containers taking at once on a new item gave 1 slot of 3 before this).
      if ((old.used ?? 0) >= limit) return undefined;
      continue;
    }
    if (old === undefined || old.period === undefined) {
      const rolled = await rollOverAndTake(key, old, period, limit);
      if (rolled.result !== 'lost') return rolled.result === 'taken' ? period : undefined;
      old = rolled.old;
    }
  }
  return undefined;
}

/** The numbers of a refused write's item (attribute-value form), undefined when there was none. */
function refusedItem(e: unknown): CountItem | undefined {
  const item = (e as { Item?: Record<string, { N?: string }> }).Item;
  if (!item) return undefined;
  const n = (k: keyof CountItem) => (item[k]?.N === undefined ? undefined : Number(item[k].N));
  return { period: n('period'), used: n('used'), c0: n('c0'), c1: n('c1'), c2: n('c2'), c3: n('c3') };
}

/**
 * Moves the item from its period (`old`, as last seen) to `period` and takes a slot in the same
 * write when there is room: slots of the periods that left the ring are all over (their leases
 * ended), so what the ring still counts for them belongs to dead containers and leaves `used`. Conditional on the item being as seen (every
 * take and give-back moves `used`), so it loses to any concurrent write ('lost', with the item as
 * the refusal saw it: the caller tries again).
 */
async function rollOverAndTake(key: Key, old: CountItem | undefined, period: number, limit: number): Promise<{ result: 'taken' | 'full' | 'lost'; old?: CountItem }> {
  const used = old ? usedAt(old, period) : 0;
  const take = used < limit ? 1 : 0;
  // The ring's counters after the roll-over: those of the periods that ended are emptied, the new
  // period's counts the take; the others (periods still in the ring) stay.
  const counters: Record<string, number> = {};
  const gap = old?.period === undefined ? RING : Math.min(RING, period - old.period);
  for (let g = period - gap + 1; g <= period; g++) counters[ringKey(g)] = g === period ? take : 0;
  const names = Object.keys(counters);
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: key,
        UpdateExpression: `SET #p = :p, used = :used, ${names.map((_, i) => `#r${i} = :r${i}`).join(', ')}`,
        ConditionExpression: old?.period === undefined ? 'attribute_not_exists(#p)' : '#p = :old AND used = :oldUsed',
        ExpressionAttributeNames: { '#p': 'period', ...Object.fromEntries(names.map((k, i) => [`#r${i}`, k])) },
        ExpressionAttributeValues: {
          ':p': period,
          ':used': used + take,
          ...Object.fromEntries(names.map((k, i) => [`:r${i}`, counters[k]])),
          ...(old?.period === undefined ? {} : { ':old': old.period, ':oldUsed': old.used ?? 0 }),
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    remember(key, out.Attributes as CountItem | undefined);
    return { result: take ? 'taken' : 'full' };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const seen = refusedItem(e);
    remember(key, seen);
    return { result: 'lost', old: seen };
  }
}

/** Gives one slot of `key` taken in `period` back, unless the item rolled past it (it left then). */
async function releaseOne(key: Key, period: number): Promise<void> {
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: key,
        UpdateExpression: 'ADD used :minus, #c :minus',
        ConditionExpression: '#p BETWEEN :p AND :last AND #c > :zero',
        ExpressionAttributeNames: { '#c': ringKey(period), '#p': 'period' },
        ExpressionAttributeValues: { ':minus': -1, ':p': period, ':last': period + RING - 1, ':zero': 0 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    remember(key, out.Attributes as CountItem | undefined);
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/**
 * Moves one slot of `key` counted in period `from` (a kept slot: its consume ended, lambda/long-poll/
 * bulkhead.ts) to `period`, for a new consume of the same container: `used` stays, so no limit is
 * checked (the count goes from an ended consume to a live one). No write when `from` is `period`
 * (the count lives RING - 1 periods more, the longest lease); undefined when the count has left the
 * ring (the caller takes a slot anew). One write otherwise, a roll-over included when the item is
 * remembered as it is.
 */
async function moveOne(key: Key, from: number, period: number): Promise<number | undefined> {
  let old = lastSeen.get(itemId(key));
  for (let attempt = 0; attempt < 4; attempt++) {
    if (old?.period !== undefined && old.period > period) period = old.period;
    if (from === period) return period;
    if (period - from >= RING) return undefined;
    const fromKey = ringKey(from);
    try {
      if (old?.period !== undefined && old.period < period) {
        // Behind: roll over and move in one write, on the item as remembered. `from` is in the ring
        // at `period`, so its counter is not among those emptied.
        const used = usedAt(old, period);
        if ((old[fromKey] ?? 0) < 1) return undefined;
        const sets: Record<string, number> = { [fromKey]: (old[fromKey] ?? 0) - 1 };
        for (let g = Math.max(old.period + 1, period - RING + 1); g <= period; g++) sets[ringKey(g)] = g === period ? 1 : 0;
        const names = Object.keys(sets);
        const out = await ddb().send(
          new UpdateCommand({
            TableName: tableName('meta'),
            Key: key,
            UpdateExpression: `SET #p = :p, used = :used, ${names.map((_, i) => `#r${i} = :r${i}`).join(', ')}`,
            ConditionExpression: '#p = :old AND used = :oldUsed',
            ExpressionAttributeNames: { '#p': 'period', ...Object.fromEntries(names.map((k, i) => [`#r${i}`, k])) },
            ExpressionAttributeValues: { ':p': period, ':used': used, ':old': old.period, ':oldUsed': old.used ?? 0, ...Object.fromEntries(names.map((k, i) => [`:r${i}`, sets[k]])) },
            ReturnValues: 'ALL_NEW',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        remember(key, out.Attributes as CountItem | undefined);
        return period;
      }
      const out = await ddb().send(
        new UpdateCommand({
          TableName: tableName('meta'),
          Key: key,
          UpdateExpression: 'ADD #n :one, #o :minus',
          ConditionExpression: '#p = :p AND #o > :zero',
          ExpressionAttributeNames: { '#n': ringKey(period), '#o': fromKey, '#p': 'period' },
          ExpressionAttributeValues: { ':one': 1, ':minus': -1, ':p': period, ':zero': 0 },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      remember(key, out.Attributes as CountItem | undefined);
      return period;
    } catch (e) {
      if (!isConditionFailed(e)) throw e;
      old = refusedItem(e);
      remember(key, old);
      if (old === undefined || (old.period === period && (old[fromKey] ?? 0) < 1)) return undefined;
    }
  }
  return undefined;
}

/**
 * Moves a kept slot (both items) to `now`'s period for a new consume of the container that kept
 * it: the new slot, or undefined when either count has left the ring (whatever was moved is
 * given back; the caller takes a slot anew).
 */
export async function moveSlot(slot: Slot, periodMs: number, now = Date.now()): Promise<Slot | undefined> {
  const period = Math.floor(now / periodMs);
  const nsKey = slotKeys.namespace(slot.ns, slot.nsShard);
  const poolKey = slotKeys.shard(slot.pool, slot.shard);
  const [nsPeriod, allPeriod] = await Promise.all([moveOne(nsKey, slot.nsPeriod, period), moveOne(poolKey, slot.allPeriod, period)]);
  if (nsPeriod !== undefined && allPeriod !== undefined) return { ...slot, nsPeriod, allPeriod };
  await Promise.all([nsPeriod !== undefined ? releaseOne(nsKey, nsPeriod) : undefined, allPeriod !== undefined ? releaseOne(poolKey, allPeriod) : undefined]);
  return undefined;
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
 * Takes a slot in the namespace and in the deployment when both have room. `periodMs` times
 * `RING - 1` must be at least the longest time a slot is held by a live container (the longest
 * wait and a slack): lambda/long-poll/bulkhead.ts, `slotPeriodMs`.
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

/** Slots in use of `key` now (tests and the admin view): `used` less what the ring counts for periods that ended. */
export async function slotsInUse(key: Key, periodMs: number, now = Date.now()): Promise<number> {
  const item = (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key, ConsistentRead: true }))).Item as CountItem | undefined;
  const period = Math.floor(now / periodMs);
  if (item?.period === undefined) return 0;
  // Behind: what the ring counts for the periods since has ended (leaves at the roll-over).
  return item.period >= period ? (item.used ?? 0) : usedAt(item, period);
}
