/**
 * How a namespace's waiting slots are split over items, and the header of a shortened wait: the
 * long-poll bulkhead's own rules (lambda/queues/bulkhead.ts). The deployment's limits are derived
 * in core (lambda/core/rules/long-poll-limits.ts), as the config reads them. Pure.
 */
import { DEFAULT_POOL_SHARDS, MAX_SLOTS_PER_ITEM } from '../../core/rules/long-poll-limits';

/**
 * Waiting consumes a minute one namespace slot item takes: a waiting consume writes its namespace's
 * item at most four times (its take and give-back, and at a period's roll-over a refused take and
 * the roll-over: lambda/queues/storage/long-poll-slots.ts), each 1 write unit (no item holds more
 * than {@link MAX_SLOTS_PER_ITEM}), and a partition key takes about 1,000 write units a second
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html):
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
 * each holding at least {@link MIN_SLOTS_PER_NAMESPACE_ITEM} slots, at most 64; and never fewer
 * than keep each within {@link MAX_SLOTS_PER_ITEM} slots, so that a write costs 1 unit.
 * @example namespaceSlotShards(500, 50) // 1 (the default consume limit)
 * @example namespaceSlotShards(60_000, 50) // 4
 * @example namespaceSlotShards(500, 1000) // 16 (a raised limit: 63 slots an item)
 */
export function namespaceSlotShards(consumeLimitPerMinute: number, perNamespace: number): number {
  const wanted = Math.ceil(consumeLimitPerMinute / WAITING_CONSUMES_PER_SLOT_ITEM_PER_MINUTE);
  const forRate = Math.min(wanted, Math.floor(perNamespace / MIN_SLOTS_PER_NAMESPACE_ITEM), DEFAULT_POOL_SHARDS);
  return Math.max(1, forRate, Math.ceil(perNamespace / MAX_SLOTS_PER_ITEM));
}

/** The header on a consume whose wait was shortened, naming the limit that was full. */
export const WAIT_SHORTENED_HEADER = 'X-Long-Poll-Shortened';
