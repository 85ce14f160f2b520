/**
 * Promises of the publish count that held under attack (coverage beside rate-limits-fold and
 * rate-limits-deferred-count): "exactly one count per API publish on every ending path"
 * (DeferredCount.claim(), lambda/limits/rate-limit.ts, lambda/publishing/write-budget.ts).
 *
 * - a 5xx after the claim: the count-and-charge write succeeded, then the queue's SQS send fails
 *   on every attempt; the publish answers 5xx and the middleware's onError does not count it again;
 * - batch publish ending 404 (no binding), 422 (bad entry), and an Idempotency-Key replay: one
 *   count each.
 * Counts are read strongly consistent, summed over the items of the split publish limit.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { unique } from '../fixtures/queues';
import { afterNewQueueDelay } from '../fixtures/harsh-waits';
import { windowOf } from '../../lambda/core/rules/rate-limits';
import { counterKey } from '../../lambda/limits/storage/rate-limits';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { placedFaults } from './placed';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'r12-count-paths', seed: 21, services: ['sqs'] });
afterEach(() => t.injector.clearOneShots());

/** The window's count over all the items of a split limit (the middleware counts on any; countAndCharge on item 0). */
async function countOf(window = windowOf(Date.now())): Promise<number> {
  const reads = Array.from({ length: 100 }, (_, shard) =>
    ddb().send(new GetCommand({ TableName: tableName('meta'), Key: counterKey({ namespace: t.namespace, category: 'publish', window }, shard), ConsistentRead: true })),
  );
  return (await Promise.all(reads)).reduce((n, out) => n + Number(out.Item?.count ?? 0), 0);
}

/** Runs `f` inside one window (waits for the next minute when under 15 s are left) and answers its count. */
async function counted(f: () => Promise<void>): Promise<number> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await new Promise((r) => setTimeout(r, left + 50));
  const window = windowOf(Date.now());
  const before = await countOf(window);
  await f();
  return (await countOf(window)) - before;
}

async function queueTopic() {
  const name = unique('q');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  await afterNewQueueDelay();
  return `${name}/t`;
}

it('a publish that fails in SQS after its count is counted once (5xx after the claim)', async () => {
  const topic = await queueTopic();
  t.injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: { code: 'InternalError', status: 500 }, timing: 'before', attempts: Infinity });
  t.injector.failNext({ service: 'sqs', command: 'SendMessageCommand', kind: { code: 'InternalError', status: 500 }, timing: 'before', attempts: Infinity });
  let status = 0;
  const n = await counted(async () => {
    status = (await t.api.call('POST', `/topics/${topic}/messages`, { payload: 'late failure' })).status;
  });
  expect(t.injector.unused).toBeLessThan(2);
  expect({ status: status >= 500, n }).toEqual({ status: true, n: 1 });
});

it('batch publishes ending 404, 422 and as an Idempotency-Key replay are counted once each', async () => {
  const topic = await queueTopic();
  const n404 = await counted(async () => {
    expect((await t.api.call('POST', `/topics/${unique('nobody')}/messages/batch`, { messages: [{ payload: 'a' }] })).status).toBe(404);
  });
  const n422 = await counted(async () => {
    expect((await t.api.call('POST', `/topics/${topic}/messages/batch`, { messages: [{ payload: 'a' }, { payload: 'b', delay_seconds: -1 }] })).status).toBe(422);
  });
  const key = unique('k');
  const first = await counted(async () => {
    expect((await t.api.call('POST', `/topics/${topic}/messages/batch`, { messages: [{ payload: 'a' }] }, { 'Idempotency-Key': key })).status).toBe(201);
  });
  const replay = await counted(async () => {
    expect((await t.api.call('POST', `/topics/${topic}/messages/batch`, { messages: [{ payload: 'a' }] }, { 'Idempotency-Key': key })).status).toBe(201);
  });
  expect({ n404, n422, first, replay }).toEqual({ n404: 1, n422: 1, first: 1, replay: 1 });
});
