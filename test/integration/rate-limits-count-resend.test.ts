/**
 * The bound docs/rate-limits.md "Failures" states for a publish's count write sent again by the
 * SDK after its answer was lost (storage/rate-limits.ts countAndCharge): a resend that meets its
 * own applied try does not count; only when another publish wrote in between may it count again.
 * The SDK's resend is the same UpdateItem, so sending the same parameters twice on DynamoDB Local
 * is that resend.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { ddb, isConditionFailed, tableName } from '../../lambda/core/storage/client';
import { countAndChargeParams, counterKey } from '../../lambda/limits/storage/rate-limits';
import { windowOf } from '../../lambda/core/rules/rate-limits';

jest.setTimeout(30_000);

const window = windowOf(Date.now());

async function send(namespace: string, call: string): Promise<'counted' | 'refused'> {
  try {
    await ddb().send(new UpdateCommand(countAndChargeParams({ namespace, window, limit: 1000, writes: 1, requestLimit: 1000, call })));
    return 'counted';
  } catch (e) {
    if (isConditionFailed(e)) return 'refused';
    throw e;
  }
}

async function count(namespace: string): Promise<number> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: counterKey({ namespace, category: 'publish', window }), ConsistentRead: true }));
  return Number(out.Item?.count ?? 0);
}

it('a resend of an applied count write is refused, so the publish counts once', async () => {
  const ns = `resend-${randomUUID()}`;
  const call = randomUUID();
  expect([await send(ns, call), await send(ns, call), await send(ns, call)]).toEqual(['counted', 'refused', 'refused']);
  expect(await count(ns)).toBe(1);
});

it('a resend after another publish wrote counts again: at most once per try, never fewer than the publishes', async () => {
  const ns = `resend-${randomUUID()}`;
  const a = randomUUID();
  await send(ns, a);
  await send(ns, randomUUID()); // another publish between the tries
  await send(ns, a); // the SDK's second try of the first publish
  await send(ns, a); // its third: meets its own second
  expect(await count(ns)).toBe(3);
});
