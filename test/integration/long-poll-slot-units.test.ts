/**
 * What a long-poll slot's writes cost (lambda/queues/storage/long-poll-slots.ts), asked of DynamoDB
 * with ReturnConsumedCapacity (DynamoDB Local computes it from the item's size as the service
 * does: 1 write unit per KB of the larger of the item before and after the write,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html).
 * The takers' ids the items hold to make the writes once-only cost no write unit while an item
 * holds a full namespace of the default limit (50), and one more per KB beyond; the alternative,
 * a transaction with a ClientRequestToken, costs 2 write units per item written
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling).
 */
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { releaseSlot, takeSlot, type Slot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';

jest.setTimeout(60_000);

const PERIOD_MS = 60_000;

/** Write units of the UpdateItems and transactions sent while `run` runs, one entry per call. */
async function writeUnits<T>(run: () => Promise<T>): Promise<{ result: T; units: number[] }> {
  const units: number[] = [];
  const name = `slot-units-${randomUUID()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      if (!/^(Update|UpdateItem|TransactWrite|TransactWriteItems)Command$/.test(context.commandName ?? '')) return next(args);
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      units.push((Array.isArray(consumed) ? consumed : [consumed]).reduce((a, c) => a + (c?.CapacityUnits ?? 0), 0));
      return out;
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await run(), units };
  } finally {
    ddb().middlewareStack.remove(name);
  }
}

/** Takes `n` slots of `ns` one after another (each namespace item and shard then holds n ids). */
async function holding(ns: string, limits: SlotLimits, n: number, now: number): Promise<Slot[]> {
  const out: Slot[] = [];
  for (let i = 0; i < n; i++) {
    const r = await takeSlot(ns, limits, PERIOD_MS, now);
    if (!r.taken) throw new Error(`slot ${i} of ${n} not taken`);
    out.push(r.slot);
  }
  return out;
}

it.each([
  [0, 1],
  [49, 1],
  [99, 2],
])('a take and its give-back beside %i slots held in the same items cost %i write unit(s) per write', async (others, perWrite) => {
  const ns = `slu-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 100, total: 1000, pool: `units-${randomUUID()}`, shards: 1 };
  // The items exist in this period: the take is one write per item, as for every take but a
  // period's first. One clock for all: no roll-over between the takes.
  const now = Date.now();
  const held = await holding(ns, limits, Math.max(1, others), now);
  if (others === 0) await releaseSlot(held.pop() as Slot);
  const { result, units: taking } = await writeUnits(() => takeSlot(ns, limits, PERIOD_MS, now));
  if (!result.taken) throw new Error('slot not taken');
  const { units: giving } = await writeUnits(() => releaseSlot(result.slot));
  // Two writes each (the namespace's item and the pool's shard).
  expect(taking).toEqual([perWrite, perWrite]);
  expect(giving).toEqual([perWrite, perWrite]);
  await Promise.all(held.map((s) => releaseSlot(s)));
});

it('a one-item transaction with a ClientRequestToken, the once-only alternative, costs 2 write units', async () => {
  const key = { pk: `NS#slu-${randomUUID().slice(0, 8)}#LONGPOLL`, sk: '#COUNT' };
  const { units } = await writeUnits(() =>
    ddb().send(
      new TransactWriteCommand({
        ClientRequestToken: randomUUID(),
        TransactItems: [{ Update: { TableName: tableName('meta'), Key: key, UpdateExpression: 'ADD used :one', ExpressionAttributeValues: { ':one': 1 } } }],
      }),
    ),
  );
  expect(units).toEqual([2]);
});
