/**
 * A deployment of the once-only long-poll slots (lambda/queues/storage/long-poll-slots.ts) over slot
 * items that the code before it wrote (counts `used`, `c0`, `c1`, no holders' ids), while consumes
 * of that code still wait. docs/design/0006-bounded-consume.md ("Consequences") accepts that their
 * slots "may be counted less for up to two periods": the roll-over counts again from the holders'
 * sets, which do not know them. It does not accept that the old code's give-back, arriving after that
 * roll-over, frees a second time the slot the roll-over already forgot: that takes a slot a consume
 * of the new code holds, lets one more consume wait than the limit after every old consume has
 * ended, and drives the count below zero (the writes below are the old code's give-back, word for
 * word; a Lambda function's update lets invocations in flight finish on the old code:
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-versions.html).
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

it("an old consume's give-back after the first roll-over of the new code frees no slot a new consume holds", async () => {
  const ns = `upg-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 1, total: 1000, pool: `upgrade-${randomUUID()}`, shards: 1 };
  const key = slotKeys.namespace(ns);
  const g = Math.floor(Date.now() / PERIOD_MS) + 30;
  // The old code took the namespace's one slot in period g: its item as that code leaves it.
  await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { ...key, period: g, used: 1, [g % 2 === 0 ? 'c0' : 'c1']: 1 } }));

  // Period g + 1, the new code: its roll-over forgets the old slot (accepted by the record).
  const a = await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS + 1);
  expect(a.taken).toBe(true);
  // The old consume ends and gives its slot back, as the old code does.
  await oldGiveBack(key, g);

  // Every old consume is over; a holds the namespace's one slot.
  const b = await takeSlot(ns, limits, PERIOD_MS, (g + 1) * PERIOD_MS + 2);
  const item = (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key, ConsistentRead: true }))).Item;
  if (b.taken) await releaseSlot(b.slot);
  if (a.taken) await releaseSlot(a.slot);
  const after = (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key, ConsistentRead: true }))).Item;
  expect({ bTaken: b.taken, usedWhileAHolds: item?.used, usedAfterBoth: after?.used }).toEqual({ bTaken: false, usedWhileAHolds: 1, usedAfterBoth: 0 });
});
