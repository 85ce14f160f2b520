/**
 * Held messages packed per publish request (lambda/schedules/storage/held-packs.ts; DynamoDB Local and
 * fauxqs, the real tick with a clock moved forward): a cancel of one message of a pack, a cancel
 * that meets the pack's claim, a cancel that failed halfway, and packs handed over beside
 * messages held one item each (the format of a lone message and of every item held before packs).
 */
import { heldPackTestbed, slotTombstoneOf, tickAt as tick, withFault } from '../fixtures/held-packs';
import { injectDynamoFault } from '../fixtures/dynamo-calls';
import { heldUsage } from '../../lambda/limits/storage/held-quota';
import { heldStates } from '../../lambda/schedules/storage/held-packs';
import { claimDelayed, getSchedulerItems, CLAIM_MS } from '../../lambda/schedules/storage/scheduler';
import { schedulerKeys } from '../../lambda/core/storage/keys';

jest.setTimeout(120_000);

const { ns, q, cancel, slotOf, held, handOver } = heldPackTestbed('dpk');

it('cancels one message of a pack: the room given back before the answer, the others handed over once, and each answered right after', async () => {
  const h = await held(['a', 'bb', 'ccc'], 3 * 3600);
  const { name, ids, before } = h;
  // One pack: the three slot items name the same pack.
  const slots = await Promise.all(ids.map(slotOf));
  expect(new Set(slots.map((s) => s.pack)).size).toBe(1);
  expect(slots.map((s) => s.slot).sort()).toEqual([0, 1, 2]);
  expect((await q.get(name)).message_count).toBe(3);
  expect(await heldUsage(ns.name)).toEqual({ messages: before.messages + 3, bytes: before.bytes + 6 });

  const first = await cancel(ids[1]);
  expect(first.status).toBe(200);
  expect(first.body.data).toMatchObject({ message_id: ids[1], status: 'cancelled' });
  expect((await q.get(name)).message_count).toBe(2);
  expect(await heldUsage(ns.name)).toEqual({ messages: before.messages + 2, bytes: before.bytes + 4 });
  // A repeated cancel answers the same, giving nothing back twice.
  expect((await cancel(ids[1])).status).toBe(200);
  expect((await q.get(name)).message_count).toBe(2);

  expect((await handOver(h)).sort()).toEqual([ids[0], ids[2]].sort());
  expect((await q.get(name)).message_count).toBe(0);
  expect(await heldUsage(ns.name)).toEqual(before);
  // After the handover: the cancelled one is still cancelled, the others were delivered.
  expect((await cancel(ids[1])).status).toBe(200);
  const late = await cancel(ids[0]);
  expect(late.status).toBe(409);
  expect(late.body.error?.code).toBe('ALREADY_DELIVERED');
  const states = new Map((await heldStates(ns.name, ids)).map((i) => [i.message_id, i.state]));
  expect(states).toEqual(new Map([[ids[0], 'sent'], [ids[1], 'cancelled'], [ids[2], 'sent']]));
});

it('a cancel that meets the pack\'s claim answers 409, and the claim sends every message once', async () => {
  const { name, ids, due } = await held(['x', 'y'], 4 * 3600);
  // A tick claims the pack (and dies before sending): a cancel can no longer tell whether it is sent.
  const slot = await slotOf(ids[0]);
  expect(await claimDelayed({ pk: slot.pack, sk: slot.sk }, due)).toBeDefined();
  const refused = await cancel(ids[0]);
  expect(refused.status).toBe(409);
  expect(refused.body.error?.details).toMatchObject({ state: 'handing_over' });
  expect((await q.get(name)).message_count).toBe(2);
  // Once the claim expires, the next tick hands both over.
  await tick(due + CLAIM_MS + 1000);
  expect((await q.drain(name)).sort()).toEqual([...ids].sort());
  expect((await q.get(name)).message_count).toBe(0);
});

it('a cancel that failed after marking its slot answers 5xx, and its retry gives the room back once', async () => {
  const h = await held(['p', 'q'], 5 * 3600);
  const { name, ids } = h;
  // The slot item's tombstone write is refused (as DynamoDB does when throttled), every attempt.
  const fault = injectDynamoFault({ when: slotTombstoneOf(ids[0]), mode: 'before', times: 100, name: 'ThrottlingException' });
  const first = await withFault(fault, () => cancel(ids[0]));
  expect(fault.hits.length).toBeGreaterThan(0);
  expect(first.status).toBeGreaterThanOrEqual(500);
  expect((await q.get(name)).message_count).toBe(2);
  const retry = await cancel(ids[0]);
  expect(retry.status).toBe(200);
  expect((await q.get(name)).message_count).toBe(1);
  expect((await cancel(ids[0])).status).toBe(200);
  expect((await q.get(name)).message_count).toBe(1);
  expect(await handOver(h)).toEqual([ids[1]]);
  expect((await q.get(name)).message_count).toBe(0);
});

it('hands over messages held one item each (a lone message, the format of items held before packs) beside packs, each once', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const before = await heldUsage(ns.name);
  // Due in different minutes: one item each, unpacked.
  const lone = await q.publishBatch(topic, [0, 1].map((k) => ({ payload: `lone${k}`, delay_seconds: 6 * 3600 - k * 120 })));
  const packed = await q.publishBatch(topic, [0, 1, 2].map((k) => ({ payload: `pack${k}`, delay_seconds: 6 * 3600 })));
  const loneItems = await getSchedulerItems<{ state?: string; pack?: string }>(lone.message_ids.map((id: string) => schedulerKeys.delayed(ns.name, id)));
  expect(loneItems.map((i) => [i.state, i.pack])).toEqual([['pending', undefined], ['pending', undefined]]);
  expect((await slotOf(packed.message_ids[0])).pack).toBeDefined();
  // One cancel of each kind.
  expect((await cancel(lone.message_ids[1])).status).toBe(200);
  expect((await cancel(packed.message_ids[2])).status).toBe(200);
  expect((await q.get(name)).message_count).toBe(3);
  await tick(Date.parse(packed.timestamp) + 6 * 3600_000 + 1000);
  expect((await q.drain(name)).sort()).toEqual([lone.message_ids[0], packed.message_ids[0], packed.message_ids[1]].sort());
  expect((await q.get(name)).message_count).toBe(0);
  expect(await heldUsage(ns.name)).toEqual(before);
});

it('a pack whose store answered an error after it was written is taken back whole: the publish fails, counts and quota as before, nothing handed over', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const before = await heldUsage(ns.name);
  // The write of the pack's state item (the one in the due index) is applied, its answer lost.
  const fault = injectDynamoFault({ when: (c) => /^BatchWrite/.test(c.command) && JSON.stringify(c.input).includes('"due_shard"') && JSON.stringify(c.input).includes(`NS#${ns.name}#DELAYED#pack-`), mode: 'after', times: 1 });
  const res = await withFault(fault, () => q.call('POST', `/topics/${topic}/messages/batch`, { messages: ['u', 'v', 'w'].map((payload) => ({ payload, delay_seconds: 8 * 3600 })) }));
  expect(fault.hits.length).toBe(1);
  expect(res.status).toBeGreaterThanOrEqual(500);
  expect((await q.get(name)).message_count).toBe(0);
  expect(await heldUsage(ns.name)).toEqual(before);
  await tick(Date.now() + 8 * 3600_000 + 60_000);
  expect(await q.drain(name)).toEqual([]);
});
