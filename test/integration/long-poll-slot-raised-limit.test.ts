/**
 * A namespace whose long-poll limit is raised to 1,000 waiting consumes
 * (MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE, docs/aws-parity.md), and a pool raised to 10,000
 * (MSG_LONG_POLL_MAX_WAITING). Their slots are split over items by `namespaceSlotShards`
 * (lambda/queues/rules/long-poll-limits.ts) and the config's pool shards (`poolSlotShards`,
 * lambda/core/rules/long-poll-limits.ts), as the bulkhead passes them, so that no item is written past a
 * partition's 1,000 write units a second
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html): one
 * namespace item takes 15,000 waiting consumes a minute, 250 a second, at four writes each, which is
 * 1,000 write units only while a write costs one. The holders' ids make the item grow 11 bytes per
 * slot held, and a write costs a unit per KB of the item
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html;
 * DynamoDB Local reports it with ReturnConsumedCapacity): a full item of 1,000 slots is past 11 KB,
 * so no item may hold that many. Every item here is as full as takes leave it, one slot short, under
 * the longest namespace name (63 characters), so a take finds no emptier item.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { loadConfig } from '../../lambda/core/config';
import { namespaceSlotShards } from '../../lambda/queues/rules/long-poll-limits';
import { releaseSlot, shardCount, shardLimit, slotKeys, takeSlot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';

jest.setTimeout(60_000);

const PERIOD_MS = 60_000;
const PER_NAMESPACE = 1000;
/** The consume rate limit at which the rule gave a namespace one slot item before the split by size (a minute's). */
const CONSUMES_PER_MINUTE = 15_000;

/** Puts `key` as `n` takes of `period` leave it (ids of 8 random bytes, as the takes' own). */
async function filled(key: { pk: string; sk: string }, period: number, n: number) {
  const ids = new Set(Array.from({ length: n }, () => randomBytes(8).toString('base64url')));
  await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { ...key, period, used: ids.size, ...(n ? { [period % 2 === 0 ? 'h0' : 'h1']: ids } : {}) } }));
}

it("the items of a raised namespace limit and pool, each one slot short of full, are written within a partition's 1,000 write units a second at the rate the split allows", async () => {
  const items = namespaceSlotShards(CONSUMES_PER_MINUTE, PER_NAMESPACE);
  const ns = `rlm-${randomUUID().replace(/-/g, '')}`.padEnd(63, 'x');
  const cfg = loadConfig({ MSG_LONG_POLL_MAX_WAITING: '10000', MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE: String(PER_NAMESPACE) });
  const limits: SlotLimits = { ...cfg.longPollLimits, pool: `raised-${randomUUID()}`, shards: cfg.longPollPoolShards, namespaceShards: items };
  const now = Date.now();
  const period = Math.floor(now / PERIOD_MS);
  const nsSplit = { total: PER_NAMESPACE, shards: items };
  const shards = shardCount(limits);
  await Promise.all([
    ...Array.from({ length: shardCount(nsSplit) }, (_, i) => filled(slotKeys.namespace(ns, i), period, shardLimit(nsSplit, i) - 1)),
    ...Array.from({ length: shards }, (_, i) => filled(slotKeys.shard(limits.pool, i), period, shardLimit(limits, i) - 1)),
  ]);

  const units = { namespace: [] as number[], pool: [] as number[] };
  const name = `raised-units-${randomUUID()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: { pk?: string }; ReturnConsumedCapacity?: string };
      const pk = input.Key?.pk ?? '';
      const which = pk.startsWith(`NS#${ns}#`) ? 'namespace' : pk.startsWith(`LONGPOLL#${limits.pool}#`) ? 'pool' : undefined;
      if (!/^Update(Item)?Command$/.test(context.commandName ?? '') || !which) return next(args);
      input.ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      units[which].push((out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0);
      return out;
    },
    { step: 'initialize', name },
  );
  try {
    const r = await takeSlot(ns, limits, PERIOD_MS, now);
    if (!r.taken) throw new Error('slot not taken');
    await releaseSlot(r.slot);
  } finally {
    ddb().middlewareStack.remove(name);
  }
  // The take and the give-back of one namespace item and of one pool shard.
  expect(units.namespace).toHaveLength(2);
  expect(units.pool).toHaveLength(2);
  const perSecond = (CONSUMES_PER_MINUTE / 60 / items) * 4 * Math.max(...units.namespace);
  console.log(JSON.stringify({ namespaceItems: items, poolShards: shards, unitsPerWrite: units, writeUnitsPerSecondOfANamespaceItem: perSecond }));
  expect(perSecond).toBeLessThanOrEqual(1000);
  // A pool shard's ceiling (2 writes per waiting consume, 500 a second) assumes 1 unit a write.
  expect(Math.max(...units.pool)).toBe(1);
});
