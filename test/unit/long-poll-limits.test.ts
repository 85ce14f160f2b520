import { longPollLimits } from '../../lambda/core/rules/long-poll-limits';
import { namespaceSlotShards } from '../../lambda/queues/rules/long-poll-limits';
import { loadConfig } from '../../lambda/core/config';

describe('long-poll limits derived from the account concurrency', () => {
  it.each([
    [1000, { total: 500, perNamespace: 50 }],
    [10, { total: 5, perNamespace: 1 }],
    [1, { total: 1, perNamespace: 1 }],
    [3000, { total: 1500, perNamespace: 150 }],
  ])('account of %i executions: %j', (concurrency, want) => {
    expect(longPollLimits(concurrency)).toEqual(want);
  });

  it('takes explicit limits, never more per namespace than in total', () => {
    expect(longPollLimits(1000, { total: 20 })).toEqual({ total: 20, perNamespace: 2 });
    expect(longPollLimits(1000, { total: 3, perNamespace: 10 })).toEqual({ total: 3, perNamespace: 3 });
  });

  it('reads them from the environment', () => {
    expect(loadConfig({}).longPollLimits).toEqual({ total: 500, perNamespace: 50 });
    expect(loadConfig({ MSG_ACCOUNT_CONCURRENCY: '10' }).longPollLimits).toEqual({ total: 5, perNamespace: 1 });
    expect(loadConfig({ MSG_LONG_POLL_MAX_WAITING: '8', MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE: '2' }).longPollLimits).toEqual({ total: 8, perNamespace: 2 });
    expect(loadConfig({}).longPollPool).toBe('ALL');
    expect(loadConfig({}).longPollPoolShards).toBe(64);
    expect(loadConfig({ MSG_LONG_POLL_POOL_SHARDS: '4', MSG_LONG_POLL_MAX_WAITING: '256' }).longPollPoolShards).toBe(4);
    // Never more than 64 slots a shard, so that a full shard is written at 1 write unit.
    expect(loadConfig({ MSG_LONG_POLL_POOL_SHARDS: '4' }).longPollPoolShards).toBe(8);
    expect(loadConfig({ MSG_LONG_POLL_MAX_WAITING: '100000' }).longPollPoolShards).toBe(1563);
  });
});

describe("a namespace's slot items", () => {
  it.each([
    [500, 50, 1], // the default consume limit: one item, as always
    [15_000, 50, 1],
    [15_001, 50, 2],
    [60_000, 50, 4],
    [60_000, 2, 1], // at least 10 slots an item
    [1_000_000, 50, 5],
    [10_000_000, 1000, 64],
    [0, 50, 1],
    // Never more than 64 slots an item, so that a full item is written at 1 write unit.
    [500, 64, 1],
    [500, 65, 2],
    [15_000, 1000, 16],
    [10_000_000, 10_000, 157],
  ])('a consume limit of %i a minute with %i slots: %i items', (limit, perNamespace, want) => {
    expect(namespaceSlotShards(limit, perNamespace)).toBe(want);
  });
});
