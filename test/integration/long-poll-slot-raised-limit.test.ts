/**
 * A namespace whose long-poll limit is raised to 1,000 waiting consumes
 * (MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE, docs/aws-parity.md). Its slots are split over items by
 * `namespaceSlotShards` (lambda/queues/rules/long-poll-limits.ts) so that no item is written past a
 * partition's 1,000 write units a second
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html): one
 * item takes 15,000 waiting consumes a minute, 250 a second, at four writes each, which is 1,000
 * write units only while a write costs one. The holders' ids make the item grow 11 bytes per slot
 * held, and a write costs a unit per KB of the item
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html;
 * DynamoDB Local reports it with ReturnConsumedCapacity): a full item of 1,000 slots is past 11 KB.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { namespaceSlotShards } from '../../lambda/queues/rules/long-poll-limits';
import { releaseSlot, slotKeys, takeSlot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';

jest.setTimeout(60_000);

const PERIOD_MS = 60_000;
const PER_NAMESPACE = 1000;
/** The consume rate limit at which the rule still gives a namespace one slot item (a minute's). */
const CONSUMES_PER_MINUTE = 15_000;

it('a namespace item of a raised limit, full, is written within a partition\'s 1,000 write units a second at the rate the split allows it', async () => {
  const items = namespaceSlotShards(CONSUMES_PER_MINUTE, PER_NAMESPACE);
  expect(items).toBe(1);
  const ns = `rlm-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: PER_NAMESPACE, total: 100_000, pool: `raised-${randomUUID()}`, shards: 64, namespaceShards: items };
  const now = Date.now();
  const period = Math.floor(now / PERIOD_MS);
  // The item as 999 takes of this period leave it (ids of 8 random bytes, as the takes' own).
  const ids = new Set(Array.from({ length: PER_NAMESPACE - 1 }, () => randomBytes(8).toString('base64url')));
  await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { ...slotKeys.namespace(ns), period, used: ids.size, [period % 2 === 0 ? 'h0' : 'h1']: ids } }));

  const units: number[] = [];
  const name = `raised-units-${randomUUID()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: { pk?: string }; ReturnConsumedCapacity?: string };
      if (!/^Update(Item)?Command$/.test(context.commandName ?? '') || !input.Key?.pk?.startsWith(`NS#${ns}#`)) return next(args);
      input.ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      units.push((out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0);
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
  // The take and the give-back of the namespace's item.
  expect(units).toHaveLength(2);
  const perSecond = (CONSUMES_PER_MINUTE / 60 / items) * 4 * Math.max(...units);
  console.log(JSON.stringify({ unitsPerWrite: units, writeUnitsPerSecondOfTheItem: perSecond }));
  expect(perSecond).toBeLessThanOrEqual(1000);
});
