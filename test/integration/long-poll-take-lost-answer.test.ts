/**
 * Long-poll slot writes (lambda/queues/storage/long-poll-slots.ts) whose write DynamoDB applied but
 * whose answer was lost: the SDK's standard retry sends them again (a timeout or a 5xx:
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html), and a plain
 * conditional ADD is applied again
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html#WorkingWithItems.ConditionalUpdate):
 * a take counted twice held a phantom slot, held by no one until its period rolled over (within two
 * periods), so the namespace was shortened one slot early meanwhile; a give-back applied twice freed
 * a slot another consumer held. Each write now also adds or deletes the taker's id in a set, on the
 * condition that the set does not or does hold it yet, so a second application is refused and
 * counts nothing.
 */
import { randomUUID } from 'node:crypto';
import { resetConfig } from '../../lambda/core/config';
import { slotPeriodMs } from '../../lambda/queues/bulkhead';
import { namespaceSlotsInUse, releaseSlot, takeSlot } from '../../lambda/queues/storage/long-poll-slots';
import { dynamoClient } from '../../lambda/core/storage/client';

jest.setTimeout(60_000);

const POOL = `kept-lost-${randomUUID()}`;
const saved = { total: process.env.MSG_LONG_POLL_MAX_WAITING, perNs: process.env.MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE, pool: process.env.MSG_LONG_POLL_POOL };
beforeAll(() => {
  process.env.MSG_LONG_POLL_POOL = POOL;
  process.env.MSG_LONG_POLL_MAX_WAITING = '100';
  process.env.MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE = '2';
  resetConfig();
});
afterAll(() => {
  for (const [k, v] of [['MSG_LONG_POLL_MAX_WAITING', saved.total], ['MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE', saved.perNs], ['MSG_LONG_POLL_POOL', saved.pool]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetConfig();
});

/**
 * Runs `run` while the first UpdateItem attempt on each slot item matching `match` is applied by
 * DynamoDB and its answer lost (a timeout after the write): the SDK's retry sends it again. With
 * `every`, every attempt's answer is lost, a refusal's too, so the SDK gives up and throws.
 */
async function answersLost<T>(match: (pk: string, body: { UpdateExpression?: string }) => boolean, run: () => Promise<T>, every = false): Promise<{ result: T; lost: string[] }> {
  const lost: string[] = [];
  const name = `lose-${randomUUID()}`;
  const timeout = () => Object.assign(new Error('injected: answer lost after the write'), { name: 'TimeoutError', $metadata: {} });
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const body = args.input as { Key?: { pk?: { S?: string } | string }; UpdateExpression?: string };
      const pk = typeof body.Key?.pk === 'string' ? body.Key.pk : (body.Key?.pk?.S ?? '');
      const lose = context.commandName === 'UpdateItemCommand' && match(pk, body) && (every || !lost.includes(pk));
      if (!lose) return next(args);
      lost.push(pk);
      // Applied (or refused); the answer never comes back. TimeoutError is one the SDK retries.
      await next(args).catch(() => undefined);
      throw timeout();
    },
    { step: 'deserialize', name },
  );
  try {
    return { result: await run(), lost };
  } finally {
    dynamoClient().middlewareStack.remove(name);
  }
}

const inNamespace = (ns: string, now = Date.now()) => namespaceSlotsInUse(ns, 1, slotPeriodMs(), now);
const isTake = (ns: string) => (pk: string, b: { UpdateExpression?: string }) => pk.startsWith(`NS#${ns}#`) && /ADD used :one/.test(b.UpdateExpression ?? '');

it('a take whose answer is lost and retried counts one slot, not two', async () => {
  const ns = `kla-${randomUUID().slice(0, 8)}`;
  const limits = { perNamespace: 5, total: 100, pool: `${POOL}-a`, shards: 1 };
  // The item exists in this period (a take given back would do): the take is one conditional ADD.
  const warm = await takeSlot(ns, limits, slotPeriodMs());
  expect(warm.taken).toBe(true);
  const { result, lost } = await answersLost(isTake(ns), () => takeSlot(ns, limits, slotPeriodMs()));
  expect(lost).toHaveLength(1);
  expect(result.taken).toBe(true);
  // Two takes: two slots. A third counted would be held by no one for up to two periods.
  expect(await inNamespace(ns)).toBe(2);
  // And it is given back whole: none left.
  if (result.taken) await releaseSlot(result.slot);
  if (warm.taken) await releaseSlot(warm.slot);
  expect(await inNamespace(ns)).toBe(0);
});

it('the take of a new period, whose roll-over answer is lost and retried, counts one slot', async () => {
  const ns = `klr-${randomUUID().slice(0, 8)}`;
  const limits = { perNamespace: 5, total: 100, pool: `${POOL}-r`, shards: 1 };
  const t0 = Date.now();
  const later = t0 + 2 * slotPeriodMs(); // explicit clocks: the item is two periods behind then
  expect((await takeSlot(ns, limits, slotPeriodMs(), t0)).taken).toBe(true);
  const { result, lost } = await answersLost(
    (pk, b) => pk.startsWith(`NS#${ns}#`) && /^SET #p = :p/.test(b.UpdateExpression ?? ''),
    () => takeSlot(ns, limits, slotPeriodMs(), later),
  );
  expect(lost).toHaveLength(1);
  expect(result.taken).toBe(true);
  expect(await inNamespace(ns, later)).toBe(1);
});

it('a give-back whose answer is lost and retried frees one slot, not one another consumer holds', async () => {
  const ns = `klg-${randomUUID().slice(0, 8)}`;
  const limits = { perNamespace: 5, total: 100, pool: `${POOL}-g`, shards: 1 };
  const [a, b] = [await takeSlot(ns, limits, slotPeriodMs()), await takeSlot(ns, limits, slotPeriodMs())];
  if (!a.taken || !b.taken) throw new Error('two slots expected');
  const { lost } = await answersLost((pk, body) => pk.startsWith(`NS#${ns}#`) && /ADD used :minus/.test(body.UpdateExpression ?? ''), () => releaseSlot(a.slot));
  expect(lost).toHaveLength(1);
  // b still waits in its slot.
  expect(await inNamespace(ns)).toBe(1);
  await releaseSlot(b.slot);
  expect(await inNamespace(ns)).toBe(0);
});

it('a take whose every answer is lost fails and leaves no slot counted', async () => {
  const ns = `kle-${randomUUID().slice(0, 8)}`;
  const limits = { perNamespace: 5, total: 100, pool: `${POOL}-e`, shards: 1 };
  const warm = await takeSlot(ns, limits, slotPeriodMs());
  expect(warm.taken).toBe(true);
  await expect(answersLost(isTake(ns), () => takeSlot(ns, limits, slotPeriodMs()), true)).rejects.toThrow('answer lost');
  // Applied at its first attempt, refused at the SDK's next ones, then given back: the warm slot only.
  expect(await inNamespace(ns)).toBe(1);
});
