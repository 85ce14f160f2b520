/**
 * How many consumers may wait in a long poll at once. A waiting consumer holds
 * one Lambda execution for its whole wait (up to MAX_LONG_POLL_SECONDS), from the same account
 * pool that publishes, acks and management requests need: a new account's 10 concurrent
 * executions are all taken by 10 waiting consumers, any account's 1,000 by 1,000
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html). Pure. Here in core
 * because the config derives the deployment's limits from them; how a namespace's slots are split
 * is the queues' own (lambda/queues/rules/long-poll-limits.ts).
 */

/** Lambda's default concurrency quota per account and region. */
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

/** Share of the account's concurrency all waiting consumers together may hold. */
const WAITING_SHARE_OF_ACCOUNT = 0.5;

/** Share of the waiting slots one namespace may hold, so one tenant cannot take them all. */
const NAMESPACE_SHARE_OF_WAITING = 0.1;

/**
 * Items the deployment's pool of waiting slots is split over (lambda/queues/storage/long-poll-slots.ts):
 * each partition key takes 1,000 write units a second and a waiting consume writes its shard
 * twice, so 64 shards take about 32,000 waiting consumes a second.
 */
export const DEFAULT_POOL_SHARDS = 64;

/**
 * Slots one slot item holds at most, the namespace's and the pool's shards alike, so that a full
 * item stays within the 1 KB a write unit counts and every slot write costs 1 write unit (a write
 * costs a unit per KB of the larger of the item before and after it:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
 * Each holder's id is 11 bytes (lambda/queues/storage/long-poll-slots.ts): 64 are 704 bytes, beside
 * about 150 of keys (a namespace name of up to 63 characters), period, count and attribute names.
 * Measured on DynamoDB Local (docs/design/0006-bounded-consume.md): with the longest namespace name
 * an item costs 1 unit a write up to 82 holders, 2 from 85; a full item of 1,000 cost 11, which
 * would have put one namespace item at 11,000 write units a second at the rate its split allows
 * (lambda/queues/rules/long-poll-limits.ts).
 */
export const MAX_SLOTS_PER_ITEM = 64;

/**
 * Items the pool's `total` is split over: the shards asked for, and more when the total would put
 * more than {@link MAX_SLOTS_PER_ITEM} slots in one (fewer, one a slot, when the total is smaller:
 * the storage's `shardCount`).
 * @example poolSlotShards(500) // 64 (about 8 slots a shard)
 * @example poolSlotShards(100_000) // 1,563
 */
export function poolSlotShards(total: number, asked = DEFAULT_POOL_SHARDS): number {
  return Math.max(1, asked, Math.ceil(total / MAX_SLOTS_PER_ITEM));
}

export interface LongPollLimits {
  /** Waiting consumers in one namespace at most. */
  perNamespace: number;
  /** Waiting consumers in the whole deployment at most. */
  total: number;
}

/**
 * The limits for an account with `accountConcurrency` executions: half of it for waiting
 * consumers, a tenth of that per namespace (at least one each), unless set explicitly.
 * @example longPollLimits(1000) // { perNamespace: 50, total: 500 }
 * @example longPollLimits(10) // { perNamespace: 1, total: 5 }
 */
export function longPollLimits(accountConcurrency: number, explicit: Partial<LongPollLimits> = {}): LongPollLimits {
  const total = explicit.total ?? Math.max(1, Math.floor(accountConcurrency * WAITING_SHARE_OF_ACCOUNT));
  const perNamespace = explicit.perNamespace ?? Math.max(1, Math.floor(total * NAMESPACE_SHARE_OF_WAITING));
  return { total, perNamespace: Math.min(perNamespace, total) };
}
