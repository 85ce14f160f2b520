/**
 * A lone consumer's slot takes cost one write per slot item, a period's roll-over included
 * (lambda/storage/long-poll-slots.ts): the container remembers each item as its last write left it
 * and rolls a behind item over in the take itself, instead of a refused take and then the roll-over.
 */
import { randomUUID } from 'node:crypto';
import { moveSlot, releaseSlot, slotKeys, slotsInUse, takeSlot, type SlotLimits } from '../../lambda/storage/long-poll-slots';
import { ddb } from '../../lambda/storage/client';

jest.setTimeout(60_000);

/** The slot writes (UpdateItems on LONGPOLL items, refused ones included) made while `run` runs. */
async function slotWrites<T>(run: () => Promise<T>): Promise<{ result: T; writes: string[] }> {
  const writes: string[] = [];
  const name = `slot-writes-${randomUUID()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'UpdateCommand' || context.commandName === 'UpdateItemCommand') {
        const pk = String((args.input as { Key?: { pk?: unknown } }).Key?.pk ?? '');
        if (pk.includes('LONGPOLL')) writes.push(pk);
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

const PERIOD_MS = 200;
const nextPeriod = () => new Promise((r) => setTimeout(r, PERIOD_MS - (Date.now() % PERIOD_MS) + 5));

it('a lone consumer takes and gives back its slot with one write per item, each take in a new period', async () => {
  const ns = `roll-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 2, total: 10, pool: `roll-${randomUUID()}`, shards: 1 };
  // The first take makes the items (a refused take on a missing item, then the making write).
  const first = await takeSlot(ns, limits, PERIOD_MS);
  if (!first.taken) throw new Error('first take refused');
  await releaseSlot(first.slot);
  for (let round = 0; round < 4; round++) {
    await nextPeriod();
    const { result, writes } = await slotWrites(async () => {
      const r = await takeSlot(ns, limits, PERIOD_MS);
      if (r.taken) await releaseSlot(r.slot);
      return r;
    });
    expect(result.taken).toBe(true);
    // A take and a give-back per item: 4 writes (6 before: a refused take, the roll-over, the give-back per item).
    expect(writes).toHaveLength(4);
  }
  expect(await slotsInUse(slotKeys.namespace(ns), PERIOD_MS)).toBe(0);
});

it('still refuses past the limit and rolls over right when another container wrote the item meanwhile', async () => {
  const ns = `roll-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 2, total: 10, pool: `roll-${randomUUID()}`, shards: 1 };
  const period = 10_000;
  const held = await Promise.all([takeSlot(ns, limits, period), takeSlot(ns, limits, period)]);
  expect(held.every((r) => r.taken)).toBe(true);
  expect(await takeSlot(ns, limits, period)).toEqual({ taken: false, full: 'namespace' });
  // A dead holder: its slot counts for the ring's periods, then leaves; meanwhile the limit holds.
  const shortPeriod = 150;
  const dead = await takeSlot(`${ns}-d`, { ...limits, perNamespace: 1 }, shortPeriod);
  expect(dead.taken).toBe(true);
  expect(await takeSlot(`${ns}-d`, { ...limits, perNamespace: 1 }, shortPeriod)).toEqual({ taken: false, full: 'namespace' });
  const end = Date.now() + 5_000;
  let again = await takeSlot(`${ns}-d`, { ...limits, perNamespace: 1 }, shortPeriod);
  while (!again.taken && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    again = await takeSlot(`${ns}-d`, { ...limits, perNamespace: 1 }, shortPeriod);
  }
  expect(again.taken).toBe(true);
  await Promise.all(held.map((r) => (r.taken ? releaseSlot(r.slot) : undefined)));
  expect(await slotsInUse(slotKeys.namespace(ns), period)).toBe(0);
});

it('a kept slot moves to a new period with one write per item and no room taken: the share still refuses past its limit', async () => {
  const ns = `roll-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 1, total: 10, pool: `roll-${randomUUID()}`, shards: 1 };
  const kept = await takeSlot(ns, limits, PERIOD_MS);
  if (!kept.taken) throw new Error('first take refused');
  let slot = kept.slot;
  for (let round = 0; round < 3; round++) {
    await nextPeriod();
    const { result: moved, writes } = await slotWrites(() => moveSlot(slot, PERIOD_MS));
    if (!moved) throw new Error('the kept slot did not move');
    expect(writes).toHaveLength(2);
    slot = moved;
    expect(await slotsInUse(slotKeys.namespace(ns), PERIOD_MS)).toBe(1);
    expect(await takeSlot(ns, limits, PERIOD_MS)).toEqual({ taken: false, full: 'namespace' });
  }
  // Not moved, it leaves with the ring: the share is free again within four periods.
  const end = Date.now() + 5_000;
  while ((await takeSlot(ns, limits, PERIOD_MS)).taken !== true) {
    if (Date.now() > end) throw new Error('the kept slot never left the ring');
    await new Promise((r) => setTimeout(r, 50));
  }
});
