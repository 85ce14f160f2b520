/**
 * A long-poll slot take (lambda/queues/storage/long-poll-slots.ts) whose write DynamoDB applied but
 * whose answer was lost: the SDK's standard retry sends it again (a timeout or a 5xx:
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html), and the slot
 * write is a plain conditional ADD, which DynamoDB applies again
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/WorkingWithItems.html#WorkingWithItems.ConditionalUpdate).
 * Two slots are then counted for one take: a phantom slot held by no one until its period rolls
 * over (within two periods), so the namespace is shortened one slot early meanwhile.
 */
import { randomUUID } from 'node:crypto';
import { resetConfig } from '../../lambda/core/config';
import { slotPeriodMs } from '../../lambda/queues/bulkhead';
import { namespaceSlotsInUse, takeSlot } from '../../lambda/queues/storage/long-poll-slots';
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
 * DynamoDB and its answer lost (a timeout after the write): the SDK's retry sends it again.
 */
async function answersLost<T>(match: (pk: string, body: { UpdateExpression?: string }) => boolean, run: () => Promise<T>): Promise<{ result: T; lost: string[] }> {
  const lost: string[] = [];
  const name = `lose-${randomUUID()}`;
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName !== 'UpdateItemCommand') return out;
      const body = args.input as { Key?: { pk?: { S?: string } | string }; UpdateExpression?: string };
      const pk = typeof body.Key?.pk === 'string' ? body.Key.pk : (body.Key?.pk?.S ?? '');
      if (!match(pk, body) || lost.includes(pk)) return out;
      lost.push(pk);
      // Applied; the answer never comes back. TimeoutError is one the SDK retries.
      throw Object.assign(new Error('injected: answer lost after the write'), { name: 'TimeoutError', $metadata: {} });
    },
    { step: 'deserialize', name },
  );
  try {
    return { result: await run(), lost };
  } finally {
    dynamoClient().middlewareStack.remove(name);
  }
}

const inNamespace = (ns: string) => namespaceSlotsInUse(ns, 1, slotPeriodMs());

// Open defect, kept visible: the take is not once-only (a transaction with a request token would
// be, at 2 write units). Marked failing until it is; jest reports it when it starts to pass.
it.failing('a take whose answer is lost and retried counts one slot, not two', async () => {
  const ns = `kla-${randomUUID().slice(0, 8)}`;
  const limits = { perNamespace: 5, total: 100, pool: `${POOL}-a`, shards: 1 };
  // The item exists in this period (a take given back would do): the take is one conditional ADD.
  const warm = await takeSlot(ns, limits, slotPeriodMs());
  expect(warm.taken).toBe(true);
  const { result, lost } = await answersLost((pk, b) => pk.startsWith(`NS#${ns}#`) && /ADD used :one/.test(b.UpdateExpression ?? ''), () => takeSlot(ns, limits, slotPeriodMs()));
  expect(lost).toHaveLength(1);
  expect(result.taken).toBe(true);
  // Two takes: two slots. A third counted is held by no one for up to two periods.
  expect(await inNamespace(ns)).toBe(2);
});
