/**
 * The fault suite's "5 % of calls" run lost a webhook delivery now and then under load: its first
 * attempt was answered 500, it was never answered 2xx, and it was not counted as failed.
 *
 * Scenario: the attempt that failed with retries left hands the delivery to the retry workflow
 * (lambda/webhooks/deliver.ts `handToWorkflow`): it writes the `retrying` record noting the
 * hand-off (a conditional PutItem), then starts the execution. DynamoDB applies the write but
 * every answer is lost (500s after the write, past the SDK's retries, ./injector.ts), so the run
 * throws before starting any execution and SQS hands the job back after its visibility timeout.
 * That job reads the `retrying` record: before the fix it took it for a workflow that owns the
 * delivery, returned `retrying` and was deleted. No execution, no retry job: the delivery was lost.
 *
 * Expected: the job handed back starts the execution of the noted hand-off (by its name, so a
 * running or ended one is not started twice), and the retry POSTs and succeeds.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { dynamoClient } from '../../lambda/core/storage/client';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { FaultInjector } from './injector';

jest.setTimeout(90_000);

// The job whose run threw comes back after 8 s.
const bed = webhookTestbed('whhandoff', { visibilitySeconds: 8 });
const injector = new FaultInjector(4646);
beforeAll(() => injector.attach(dynamoClient(), 'dynamodb'));
afterEach(() => injector.clearOneShots());

it('a hand-off to the retry workflow whose record write was applied with every answer lost still retries', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, backoff_multiplier: 1 });
  const webhookId = (await getWebhook(bed.ns.name, w.name))!.id;
  injector.failNext({
    service: 'dynamodb', command: 'PutItemCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: Number.POSITIVE_INFINITY,
    matches: (input) => {
      const item = JSON.stringify(input.Item ?? {});
      return item.includes('"retrying"') && item.includes(webhookId);
    },
  });
  const res = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'handed off' });
  expect(res.status).toBe(201);
  const id = res.body.data.message_id as string;
  await until(async () => injector.unused === 0, 20_000, 'the hand-off write failed');
  // The job comes back after 8 s; the retry 1 s after its execution starts. 40 s is ample.
  await until(async () => recv.requests.length >= 2, 40_000, 'the retry POSTed').catch(() => undefined);
  // The record ends `success` once the 2xx's answer is recorded, a moment after the receiver got
  // the POST (a CI run read it in between): read until it ends, or the bound passes.
  const rec = await until(async () => { const r = await readDelivery({ namespace: bed.ns.name, webhookId, messageId: id }); return r?.outcome === 'success' ? r : undefined; }, 10_000, 'the delivery recorded').catch(() => readDelivery({ namespace: bed.ns.name, webhookId, messageId: id }));
  expect({ posts: recv.requests.length, outcome: rec?.outcome }).toEqual({ posts: 2, outcome: 'success' });
});

it('a queued retry that failed again, whose note moving on was applied with every answer lost, still retries', async () => {
  const recv = await bed.receivers.start({ failFirst: 2 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 3, retry_delay: 1, backoff_multiplier: 1 });
  const webhookId = (await getWebhook(bed.ns.name, w.name))!.id;
  // storage/webhook-deliveries.ts `advanceRetry`: the note moves from attempt 1 to attempt 2.
  injector.failNext({
    service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: Number.POSITIVE_INFINITY,
    matches: (input) => String(input.UpdateExpression).startsWith('SET attempts = :a, queued = :a') && JSON.stringify(input.Key).includes(webhookId),
  });
  const res = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'moved on' });
  expect(res.status).toBe(201);
  const id = res.body.data.message_id as string;
  await until(async () => injector.unused === 0, 30_000, 'the note moving on failed');
  await until(async () => recv.requests.length >= 3, 40_000, 'the second retry POSTed').catch(() => undefined);
  // The record ends `success` once the 2xx's answer is recorded, a moment after the receiver got
  // the POST (a CI run read it in between): read until it ends, or the bound passes.
  const rec = await until(async () => { const r = await readDelivery({ namespace: bed.ns.name, webhookId, messageId: id }); return r?.outcome === 'success' ? r : undefined; }, 10_000, 'the delivery recorded').catch(() => readDelivery({ namespace: bed.ns.name, webhookId, messageId: id }));
  expect({ posts: recv.requests.length, outcome: rec?.outcome }).toEqual({ posts: 3, outcome: 'success' });
});
