/**
 * A deployment of the once-only long-poll slots (lambda/queues/storage/long-poll-slots.ts) over slot
 * items that the code before it wrote (counts `used`, `c0`, `c1`, no holders' ids), while consumes
 * of that code still wait. The old code's give-back, arriving after the new code's first roll-over,
 * must free the slot it took and nothing else: had the roll-over forgotten the old slot (counting
 * only the holders' sets), the give-back would free a slot a consume of the new code holds, let one
 * more consume wait than the limit, and drive the count below zero. So the roll-over counts the old
 * slots of the period it keeps and keeps their counter, which the old give-back then decrements
 * (docs/design/0006-bounded-consume.md, "Consequences"; the writes below are the old code's
 * give-back, word for word; a Lambda function's update lets invocations in flight finish on the old
 * code: https://docs.aws.amazon.com/lambda/latest/dg/configuration-versions.html).
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { releaseSlot, slotKeys, takeSlot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';

jest.setTimeout(60_000);

const PERIOD_MS = 60_000;

/** The give-back of the code before the holders' sets, of a slot it took in `period`. */
async function oldGiveBack(key: { pk: string; sk: string }, period: number) {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: key,
      UpdateExpression: 'ADD used :minus, #c :minus',
      ConditionExpression: '(#p = :p OR #p = :next) AND #c > :zero',
      ExpressionAttributeNames: { '#c': period % 2 === 0 ? 'c0' : 'c1', '#p': 'period' },
      ExpressionAttributeValues: { ':minus': -1, ':p': period, ':next': period + 1, ':zero': 0 },
    }),
  );
}

const read = async (key: { pk: string; sk: string }) => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key, ConsistentRead: true }))).Item;

/** A namespace whose one item the old code left in period `g` holding one slot it took then. */
async function oldSlotHeld(perNamespace: number, g: number) {
  const ns = `upg-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace, total: 1000, pool: `upgrade-${randomUUID()}`, shards: 1 };
  const key = slotKeys.namespace(ns);
  await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { ...key, period: g, used: 1, [g % 2 === 0 ? 'c0' : 'c1']: 1 } }));
  return { ns, limits, key };
}

it("an old consume's give-back after the first roll-over of the new code frees no slot a new consume holds", async () => {
  const g = Math.floor(Date.now() / PERIOD_MS) + 30;
  const { ns, limits, key } = await oldSlotHeld(2, g);

  // Period g + 1, the new code: its roll-over keeps counting the old slot, and takes the other.
  const a = await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS + 1);
  expect(a.taken).toBe(true);
  // The old consume ends and gives its slot back, as the old code does.
  await oldGiveBack(key, g);

  // Every old consume is over; a holds one of the namespace's two slots.
  const b = await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS + 2);
  const c = await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS + 3);
  const item = await read(key);
  for (const r of [a, b, c]) if (r.taken) await releaseSlot(r.slot);
  const after = await read(key);
  expect({ bTaken: b.taken, cTaken: c.taken, usedWhileBothHold: item?.used, usedAfterAll: after?.used }).toEqual({ bTaken: true, cTaken: false, usedWhileBothHold: 2, usedAfterAll: 0 });
});

it('the old slot counts until its consume gives it back, however full the namespace, and its counter is gone two roll-overs on', async () => {
  const g = Math.floor(Date.now() / PERIOD_MS) + 40;
  const { ns, limits, key } = await oldSlotHeld(1, g);

  // Period g + 1: the old consume still waits in the namespace's one slot.
  const a = await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS + 1);
  expect(a).toEqual({ taken: false, full: 'namespace' });
  await oldGiveBack(key, g);
  // A give-back sent again by the old code's SDK finds the count at 0 and is refused.
  await expect(oldGiveBack(key, g)).rejects.toThrow(/conditional/i);
  const b = await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS + 2);
  expect(b.taken).toBe(true);
  if (b.taken) await releaseSlot(b.slot);
  expect((await read(key))?.used).toBe(0);

  // Two roll-overs on, nothing of the old code is left on the item.
  for (const p of [g + 2, g + 3]) {
    const r = await takeSlot(ns, limits, PERIOD_MS, p * PERIOD_MS + 1);
    expect(r.taken).toBe(true);
    if (r.taken) await releaseSlot(r.slot);
  }
  const last = await read(key);
  expect({ used: last?.used, c0: last?.c0, c1: last?.c1 }).toEqual({ used: 0, c0: undefined, c1: undefined });
});
