/**
 * Edges of a long-poll slot item's roll-over (lambda/queues/storage/long-poll-slots.ts,
 * docs/design/0006-bounded-consume.md "A slot is taken and given back once"):
 * - the roll-over's condition when the set it keeps is absent (its last id was deleted, and
 *   DynamoDB removes an empty set:
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html#Expressions.UpdateExpressions.DELETE),
 *   raced by a take of that period from a container whose clock is a period behind: the take makes
 *   the set again, and the roll-over must count it;
 * - a take whose every answer is lost (the SDK gives up) and whose give-back then fails too: its slot
 *   is held by no one, and must be free again within two periods, not for ever.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, dynamoClient, resetClients, tableName } from '../../lambda/core/storage/client';
import { releaseSlot, slotKeys, takeSlot, type SlotLimits } from '../../lambda/queues/storage/long-poll-slots';

jest.setTimeout(60_000);

const PERIOD_MS = 60_000;
const at = (period: number, ms = 1) => period * PERIOD_MS + ms;
type Raw = { period?: number; used?: number; h0?: Set<string>; h1?: Set<string> };
const read = async (key: { pk: string; sk: string }) => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: key, ConsistentRead: true }))).Item as Raw | undefined;
const pkOf = (input: unknown) => {
  const k = (input as { Key?: { pk?: { S?: string } | string } }).Key?.pk;
  return typeof k === 'string' ? k : (k?.S ?? '');
};

it('a roll-over that saw the kept set absent counts the take that made it again meanwhile', async () => {
  const ns = `roe-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 5, total: 1000, pool: `edges-${randomUUID()}`, shards: 1 };
  const key = slotKeys.namespace(ns);
  const g = Math.floor(Date.now() / PERIOD_MS) + 40;
  expect((await takeSlot(ns, limits, PERIOD_MS, at(g))).taken).toBe(true); // its container dies
  const y = await takeSlot(ns, limits, PERIOD_MS, at(g + 1));
  if (!y.taken) throw new Error('slot expected');
  await releaseSlot(y.slot); // the set of g + 1 is empty: gone
  expect((await read(key))?.[(g + 1) % 2 === 0 ? 'h0' : 'h1']).toBeUndefined();

  const name = `edges-${randomUUID()}`;
  let w: Awaited<ReturnType<typeof takeSlot>> | undefined;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const body = args.input as { UpdateExpression?: string };
      if (!w && /^Update(Item)?Command$/.test(context.commandName ?? '') && pkOf(args.input).startsWith(`NS#${ns}#`) && /^SET #p = :p/.test(body.UpdateExpression ?? '')) {
        w = await takeSlot(ns, limits, PERIOD_MS, at(g + 1, 2)); // a clock a period behind
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  let z;
  try {
    z = await takeSlot(ns, limits, PERIOD_MS, at(g + 2));
  } finally {
    ddb().middlewareStack.remove(name);
  }
  expect(w?.taken).toBe(true);
  expect(z.taken).toBe(true);
  const item = await read(key);
  // w and z are held; the dead container's slot of g has left.
  expect({ period: item?.period, used: item?.used, held: (item?.h0?.size ?? 0) + (item?.h1?.size ?? 0) }).toEqual({ period: g + 2, used: 2, held: 2 });
});

it('a take whose every answer is lost and whose give-back fails leaves its slot counted for two periods at most', async () => {
  const ns = `rof-${randomUUID().slice(0, 8)}`;
  const limits: SlotLimits = { perNamespace: 5, total: 1000, pool: `edges-${randomUUID()}`, shards: 1 };
  const key = slotKeys.namespace(ns);
  const g = Math.floor(Date.now() / PERIOD_MS) + 50;
  const warm = await takeSlot(ns, limits, PERIOD_MS, at(g));
  if (!warm.taken) throw new Error('slot expected');
  await releaseSlot(warm.slot);
  resetClients(); // a full retry quota
  const name = `edges-fail-${randomUUID()}`;
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const expr = (args.input as { UpdateExpression?: string }).UpdateExpression ?? '';
      if (context.commandName !== 'UpdateItemCommand' || !pkOf(args.input).startsWith(`NS#${ns}#`)) return next(args);
      // Takes: applied (or refused) and the answer lost, every attempt. Give-backs: never sent.
      if (/ADD used :minus/.test(expr)) throw Object.assign(new Error('injected: no route to DynamoDB'), { name: 'TimeoutError', $metadata: {} });
      await next(args).catch(() => undefined);
      throw Object.assign(new Error('injected: answer lost after the write'), { name: 'TimeoutError', $metadata: {} });
    },
    { step: 'deserialize', name },
  );
  try {
    await expect(takeSlot(ns, limits, PERIOD_MS, at(g, 2))).rejects.toThrow('answer lost');
  } finally {
    dynamoClient().middlewareStack.remove(name);
  }
  // Held by no one, counted (the record's "frees itself within two periods").
  expect((await read(key))?.used).toBe(1);
  const next = await takeSlot(ns, limits, PERIOD_MS, at(g + 1));
  expect(next.taken).toBe(true);
  expect((await read(key))?.used).toBe(2);
  if (next.taken) await releaseSlot(next.slot);
  // Two periods on, the roll-over drops it.
  const later = await takeSlot(ns, limits, PERIOD_MS, at(g + 2));
  expect(later.taken).toBe(true);
  const item = await read(key);
  expect({ used: item?.used, held: (item?.h0?.size ?? 0) + (item?.h1?.size ?? 0) }).toEqual({ used: 1, held: 1 });
});
