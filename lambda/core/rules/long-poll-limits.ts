/**
 * How many consumers may wait in a long poll at once. A waiting consumer holds
 * one Lambda execution for its whole wait (up to MAX_LONG_POLL_SECONDS), from the same account
 * pool that publishes, acks and management requests need: a new account's 10 concurrent
 * executions are all taken by 10 waiting consumers, any account's 1,000 by 1,000
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html). Pure.
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
 * Waiting consumes a minute one namespace slot item takes: a waiting consume writes its namespace's
 * item at most four times (its take and give-back, and at a period's roll-over a refused take and
 * the roll-over: lambda/queues/storage/long-poll-slots.ts), and a partition key takes about 1,000 write
 * units a second (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html):
 * 250 a second.
 */
const WAITING_CONSUMES_PER_SLOT_ITEM_PER_MINUTE = 15_000;

/**
 * Slots one item of a split namespace holds at least: a take tries two items at random, so items
 * of one slot each would shorten a namespace's few waiting consumes while others have room.
 */
const MIN_SLOTS_PER_NAMESPACE_ITEM = 10;

/**
 * Items a namespace's waiting slots are split over: every waiting consume is a consume the
 * namespace's rate limit counted (DESIGN.md section 10), so one item suffices until that limit
 * passes what one item takes; then one more per {@link WAITING_CONSUMES_PER_SLOT_ITEM_PER_MINUTE},
 * each holding at least {@link MIN_SLOTS_PER_NAMESPACE_ITEM} slots, at most 64.
 * @example namespaceSlotShards(500, 50) // 1 (the default consume limit)
 * @example namespaceSlotShards(60_000, 50) // 4
 */
export function namespaceSlotShards(consumeLimitPerMinute: number, perNamespace: number): number {
  const wanted = Math.ceil(consumeLimitPerMinute / WAITING_CONSUMES_PER_SLOT_ITEM_PER_MINUTE);
  return Math.max(1, Math.min(wanted, Math.floor(perNamespace / MIN_SLOTS_PER_NAMESPACE_ITEM), DEFAULT_POOL_SHARDS));
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

/** The header on a consume whose wait was shortened, naming the limit that was full. */
export const WAIT_SHORTENED_HEADER = 'X-Long-Poll-Shortened';
