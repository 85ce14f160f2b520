/**
 * The long-poll pool is sharded (lambda/queues/storage/long-poll-slots.ts): no item is written by every
 * waiting consume of the deployment, and the total of waiting consumes stays bounded by the pool's
 * limit however many containers take slots at once.
 */
import { randomUUID } from 'node:crypto';
import { poolSlotsInUse, releaseSlot, shardCount, shardLimit, slotKeys, slotsInUse, takeSlot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';
import { ddb } from '../../lambda/core/storage/client';

jest.setTimeout(60_000);

const PERIOD_MS = 60_000;

/** Counts the slot writes (UpdateItems on LONGPOLL items) per partition key while `run` runs. */
async function countingSlotWrites<T>(run: () => Promise<T>): Promise<{ result: T; writes: Map<string, number> }> {
  const writes = new Map<string, number>();
  const name = `slot-writes-${randomUUID()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'UpdateCommand' || context.commandName === 'UpdateItemCommand') {
        const pk = String((args.input as { Key?: { pk?: unknown } }).Key?.pk ?? '');
        if (pk.includes('LONGPOLL')) writes.set(pk, (writes.get(pk) ?? 0) + 1);
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await run(), writes };
  } finally {
    ddb().middlewareStack.remove(name);
  }
}

it('spreads the pool over its shards: no pool item takes more than a fraction of the waiting consumes', async () => {
  const pool = `shards-${randomUUID()}`;
  const limits: SlotLimits = { perNamespace: 1000, total: 1000, pool, shards: 16 };
  // 64 waiting consumes, each of a queue of its own namespace.
  const { result: slots, writes } = await countingSlotWrites(async () => {
    const out = [];
    for (let i = 0; i < 64; i++) {
      const r = await takeSlot(`shq-${randomUUID().slice(0, 8)}`, limits, PERIOD_MS);
      if (r.taken) out.push(r.slot);
    }
    await Promise.all(out.map((s) => releaseSlot(s)));
    return out;
  });
  expect(slots).toHaveLength(64);
  const poolWrites = [...writes].filter(([pk]) => pk.startsWith(`LONGPOLL#${pool}`));
  const busiest = Math.max(...poolWrites.map(([, n]) => n));
  const all = poolWrites.reduce((sum, [, n]) => sum + n, 0);
  // One item took them all before (every take and give-back, 128+ writes); 16 shards at random take
  // about 8 each (a binomial draw: 25 % of the takes is far beyond its tail).
  expect(poolWrites.length).toBeGreaterThan(4);
  expect(busiest).toBeLessThan(all / 4);
  expect(await poolSlotsInUse(limits, PERIOD_MS)).toBe(0);
});

it('keeps the total of waiting consumes at most the pool limit, across shards, under concurrent takes', async () => {
  const pool = `shards-${randomUUID()}`;
  const limits: SlotLimits = { perNamespace: 1000, total: 20, pool, shards: 8 };
  const results = await Promise.all(Array.from({ length: 60 }, () => takeSlot(`shb-${randomUUID().slice(0, 8)}`, limits, PERIOD_MS)));
  const taken = results.flatMap((r) => (r.taken ? [r.slot] : []));
  expect(taken.length).toBeLessThanOrEqual(20);
  // Two shards are tried before a consume is shortened: nearly all of the pool is handed out.
  expect(taken.length).toBeGreaterThanOrEqual(14);
  expect(results.filter((r) => !r.taken).every((r) => !r.taken && r.full === 'total')).toBe(true);
  expect(await poolSlotsInUse(limits, PERIOD_MS)).toBe(taken.length);
  await Promise.all(taken.map((s) => releaseSlot(s)));
  expect(await poolSlotsInUse(limits, PERIOD_MS)).toBe(0);
});

it('a pool smaller than its shard count still hands out exactly its limit', async () => {
  const limits: SlotLimits = { perNamespace: 10, total: 2, pool: `shards-${randomUUID()}`, shards: 64 };
  const a = await takeSlot(`sha-${randomUUID().slice(0, 8)}`, limits, PERIOD_MS);
  const b = await takeSlot(`sha-${randomUUID().slice(0, 8)}`, limits, PERIOD_MS);
  const c = await takeSlot(`sha-${randomUUID().slice(0, 8)}`, limits, PERIOD_MS);
  expect([a.taken, b.taken, c]).toEqual([true, true, { taken: false, full: 'total' }]);
});

it('a take that rolls an item over to a new period, or finds it full, reads nothing', async () => {
  const limits: SlotLimits = { perNamespace: 1, total: 1, pool: `shards-${randomUUID()}`, shards: 1 };
  const ns = `shr-${randomUUID().slice(0, 8)}`;
  const period = 10_000;
  const t0 = Date.now(); // explicit clocks: the periods do not depend on how fast the calls are
  const reads: string[] = [];
  const name = `slot-reads-${randomUUID()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      if (/Get|Query|Scan/.test(context.commandName ?? '')) reads.push(context.commandName ?? '');
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    const first = await takeSlot(ns, limits, period, t0); // new items
    expect(first.taken).toBe(true);
    expect(await takeSlot(ns, limits, period, t0)).toEqual({ taken: false, full: 'namespace' }); // full
    if (first.taken) await releaseSlot(first.slot);
    // Two periods on: both items roll over, and the slot is taken in the roll-over's write.
    const later = await takeSlot(ns, limits, period, t0 + 2 * period);
    expect(later.taken).toBe(true);
    if (later.taken) expect(later.slot.nsPeriod).toBe(Math.floor((t0 + 2 * period) / period));
  } finally {
    ddb().middlewareStack.remove(name);
  }
  expect(reads).toEqual([]);
});

it.each([
  [500, 64],
  [2, 64],
  [1, 1],
  [1000, 7],
  [63, 64],
])('the shards of a pool of %i (%i shards asked) hold exactly the total, at least one slot each', (total, shards) => {
  const n = shardCount({ total, shards });
  const limits = Array.from({ length: n }, (_, i) => shardLimit({ total, shards }, i));
  expect(limits.reduce((a, b) => a + b, 0)).toBe(total);
  expect(Math.min(...limits)).toBeGreaterThanOrEqual(1);
  expect(Math.max(...limits) - Math.min(...limits)).toBeLessThanOrEqual(1);
});

it('splits a namespace whose consume limit is raised over items of its own, and its waiting consumes stay at most its limit', async () => {
  const ns = `shn-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 20, total: 1000, pool: `shards-${randomUUID()}`, shards: 8, namespaceShards: 4 };
  const { result: results, writes } = await countingSlotWrites(() => Promise.all(Array.from({ length: 60 }, () => takeSlot(ns, limits, PERIOD_MS))));
  const taken = results.flatMap((r) => (r.taken ? [r.slot] : []));
  expect(taken.length).toBeLessThanOrEqual(20);
  expect(taken.length).toBeGreaterThanOrEqual(14);
  expect(results.filter((r) => !r.taken).every((r) => !r.taken && r.full === 'namespace')).toBe(true);
  // The namespace's writes land on its four items, none on another namespace's.
  const nsKeys = [0, 1, 2, 3].map((i) => slotKeys.namespace(ns, i).pk);
  expect(new Set(nsKeys).size).toBe(4);
  const nsWrites = [...writes].filter(([pk]) => pk.startsWith(`NS#${ns}#`));
  expect(nsWrites.map(([pk]) => pk).every((pk) => nsKeys.includes(pk))).toBe(true);
  expect(nsWrites.length).toBe(4);
  const held = await Promise.all(nsKeys.map((_, i) => slotsInUse(slotKeys.namespace(ns, i), PERIOD_MS)));
  expect(held.reduce((a, b) => a + b, 0)).toBe(taken.length);
  await Promise.all(taken.map((s) => releaseSlot(s)));
  expect((await Promise.all(nsKeys.map((_, i) => slotsInUse(slotKeys.namespace(ns, i), PERIOD_MS)))).reduce((a, b) => a + b, 0)).toBe(0);
});
