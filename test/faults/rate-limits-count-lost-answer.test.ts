/**
 * Checks "exactly one count per API publish on every ending path, including a
 * publish whose count write fails or throttles" (docs/rate-limits.md "Failures": "the request is
 * not counted again"; DeferredCount.claim() in lambda/core/rules/rate-limits.ts).
 *
 * Scenario: the publish's one counter write (storage/rate-limits.ts countAndCharge, `ADD #c :one,
 * #f :n` with a condition) is applied by DynamoDB but its answer is lost (a 500 after the write,
 * injected inside the SDK's retry loop by ./injector.ts). The SDK's standard retry sends the same
 * UpdateItem again; its condition still holds, so the ADD is applied a second time. The publish
 * answers 201, counted twice in the `publish` window (and its fan-out writes charged twice).
 *
 * Expected: the window's count is 1 after one publish. Observed: 2 (the claim makes one caller
 * count, but that caller's write is not idempotent).
 */
import { unique } from '../fixtures/queues';
import { windowOf } from '../../lambda/core/rules/rate-limits';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { counterKey } from '../../lambda/limits/storage/rate-limits';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { placedFaults } from './placed';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'r12-count-lost', seed: 12, services: ['dynamodb'] });

/** The window's count on the publish counter's item 0 (where countAndCharge counts), read strongly consistent. */
async function countOf(window: ReturnType<typeof windowOf>): Promise<number> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: counterKey({ namespace: t.namespace, category: 'publish', window }), ConsistentRead: true }));
  return Number(out.Item?.count ?? 0);
}

it('a publish whose count-and-charge answer is lost after the write is counted once', async () => {
  const name = unique('q');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  // Not at a minute's end: the count is read in the publish's window.
  const sec = new Date().getUTCSeconds();
  if (sec > 50) await new Promise((r) => setTimeout(r, (61 - sec) * 1000));
  const window = windowOf(Date.now());
  const before = await countOf(window);
  t.injector.failNext({
    service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: 1,
    matches: (input) => String(input.UpdateExpression).startsWith('ADD #c :one, #f :n') && JSON.stringify(input.Key).includes(t.namespace),
  });
  const res = await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'once' });
  expect(t.injector.unused).toBe(0);
  expect(res.status).toBe(201);
  const after = await countOf(window);
  expect(after - before).toBe(1);
});

// The same write timing out on every attempt, each applied (DynamoDB took it; the answers never
// came): the publish answers 503 SERVICE_UNAVAILABLE, which docs/rate-limits.md "Failures" says is
// "not counted again", yet the window holds one count per SDK attempt.
it('a publish whose count-and-charge times out after each applied attempt answers 503 and is counted at most once', async () => {
  const name = unique('q');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const sec = new Date().getUTCSeconds();
  if (sec > 45) await new Promise((r) => setTimeout(r, (61 - sec) * 1000));
  const window = windowOf(Date.now());
  const before = await countOf(window);
  t.injector.failNext({
    service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'TimeoutError', status: 0 }, timing: 'after', attempts: Infinity,
    matches: (input) => String(input.UpdateExpression).startsWith('ADD #c :one, #f :n') && JSON.stringify(input.Key).includes(t.namespace),
  });
  const res = await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'unanswered' });
  expect(t.injector.unused).toBe(0);
  expect(res.status).toBe(503);
  const after = await countOf(window);
  expect(after - before).toBeLessThanOrEqual(1);
});
