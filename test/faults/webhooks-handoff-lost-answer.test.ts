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
import { deliveryOf, handoffFixture, handoffWebhook, isRetryingPut, loseAnswers, publish } from './handoff-fixture';

jest.setTimeout(90_000);

// The job whose run threw comes back after 8 s.
const f = handoffFixture('whhandoff', { visibilitySeconds: 8, seed: 4646 });

it('a hand-off to the retry workflow whose record write was applied with every answer lost still retries', async () => {
  const { recv, topic, webhookId } = await handoffWebhook(f, { failFirst: 1 }, { retry_count: 2, retry_delay: 1, backoff_multiplier: 1 });
  loseAnswers(f, 'PutItemCommand', isRetryingPut(webhookId));
  const id = await publish(f, topic, 'handed off');
  await until(async () => f.injector.unused === 0, 20_000, 'the hand-off write failed');
  // The job comes back after 8 s; the retry 1 s after its execution starts. 40 s is ample.
  await until(async () => recv.requests.length >= 2, 40_000, 'the retry POSTed').catch(() => undefined);
  // The record ends `success` once the 2xx's answer is recorded, a moment after the receiver got
  // the POST (a CI run read it in between): read until it ends, or the bound passes.
  const rec = await until(async () => { const r = await deliveryOf(f, webhookId, id); return r?.outcome === 'success' ? r : undefined; }, 10_000, 'the delivery recorded').catch(() => deliveryOf(f, webhookId, id));
  expect({ posts: recv.requests.length, outcome: rec?.outcome }).toEqual({ posts: 2, outcome: 'success' });
});

it('a queued retry that failed again, whose note moving on was applied with every answer lost, still retries', async () => {
  const { recv, topic, webhookId } = await handoffWebhook(f, { failFirst: 2 }, { retry_count: 3, retry_delay: 1, backoff_multiplier: 1 });
  // storage/webhook-deliveries.ts `advanceRetry`: the note moves from attempt 1 to attempt 2.
  loseAnswers(f, 'UpdateItemCommand', (input) => String(input.UpdateExpression).startsWith('SET attempts = :a, queued = :a') && JSON.stringify(input.Key).includes(webhookId));
  const id = await publish(f, topic, 'moved on');
  await until(async () => f.injector.unused === 0, 30_000, 'the note moving on failed');
  await until(async () => recv.requests.length >= 3, 40_000, 'the second retry POSTed').catch(() => undefined);
  // The record ends `success` once the 2xx's answer is recorded, a moment after the receiver got
  // the POST (a CI run read it in between): read until it ends, or the bound passes.
  const rec = await until(async () => { const r = await deliveryOf(f, webhookId, id); return r?.outcome === 'success' ? r : undefined; }, 10_000, 'the delivery recorded').catch(() => deliveryOf(f, webhookId, id));
  expect({ posts: recv.requests.length, outcome: rec?.outcome }).toEqual({ posts: 3, outcome: 'success' });
});
