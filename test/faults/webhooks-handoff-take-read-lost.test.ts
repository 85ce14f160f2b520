/**
 * The hand-off's take under lost answers, when the read that tells its fate fails too.
 *
 * Scenario: attempt 1 fails with retries left; the run notes the hand-off and takes its counts
 * (lambda/webhooks/retry-handoff.ts `countHandoff`, one TransactWriteItems with the pending
 * retry: lambda/webhooks/storage/webhook-delivery-once.ts). The take is applied, but every one of its 6
 * tries loses its answer, and the next consistent read of the record fails as well (DynamoDB
 * throttling or unavailable for a few seconds). The run throws; SQS hands the job back; it finds
 * the hand-off noted with its counts taken, counts nothing and starts the execution. The retry
 * succeeds and its end gives the pending retry back. (Before the take and the count were one
 * transaction, that read was the lost run's only way to learn it had taken: -1.)
 *
 * Expected (docs/webhooks.md "Guarantees": counts exact under lost answers; design record 17
 * "The hand-off's counts, once"): one success, `pending_retries` 0. Before the fix: -1.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { dynamoClient } from '../../lambda/core/storage/client';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readWebhookCounters } from '../../lambda/webhooks/storage/webhook-counters';
import { FaultInjector } from './injector';

jest.setTimeout(90_000);

const bed = webhookTestbed('whtakereadlost', { visibilitySeconds: 8 });
const injector = new FaultInjector(4711);
beforeAll(() => injector.attach(dynamoClient(), 'dynamodb'));
afterEach(() => injector.clearOneShots());

it('a take applied with every answer lost, whose read fails too, still leaves no pending retry once the retry succeeded', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, backoff_multiplier: 1 });
  const webhookId = (await getWebhook(bed.ns.name, w.name))!.id;
  for (let i = 0; i < 6; i++) {
    injector.failNext({
      service: 'dynamodb', command: 'TransactWriteItemsCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: Number.POSITIVE_INFINITY,
      matches: (input) => JSON.stringify(input).includes('REMOVE handoff_uncounted') && JSON.stringify(input).includes(webhookId),
    });
  }
  // The next read of the record after the sixth lost take (the only one-shot left by then) fails every attempt.
  injector.failNext({
    service: 'dynamodb', command: 'GetItemCommand', kind: { code: 'ProvisionedThroughputExceededException', status: 400 }, timing: 'before', attempts: Number.POSITIVE_INFINITY,
    matches: (input) => injector.unused === 1 && input.ConsistentRead === true && JSON.stringify(input.Key).includes(webhookId),
  });
  const res = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'take and read lost' });
  expect(res.status).toBe(201);
  await until(async () => injector.unused === 0, 30_000, 'the takes and the read failed');
  const counts = async () => (await readWebhookCounters(bed.ns.name, webhookId)).status;
  await until(async () => ((await counts()).success_count ?? 0) >= 1, 50_000, 'the retry succeeded and was counted');
  const s = await counts();
  expect({ posts: recv.requests.length, success: s.success_count ?? 0, pending: s.pending_retries ?? 0 }).toEqual({ posts: 2, success: 1, pending: 0 });
});
