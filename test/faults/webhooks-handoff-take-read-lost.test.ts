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
import { handoffFixture, handoffWebhook, isTake, loseAnswers, publish } from './handoff-fixture';

jest.setTimeout(90_000);

const f = handoffFixture('whtakereadlost', { visibilitySeconds: 8, seed: 4711 });

it('a take applied with every answer lost, whose read fails too, still leaves no pending retry once the retry succeeded', async () => {
  const { recv, topic, webhookId, counts, successCounted } = await handoffWebhook(f, { failFirst: 1 }, { retry_count: 2, retry_delay: 1, backoff_multiplier: 1 });
  loseAnswers(f, 'TransactWriteItemsCommand', isTake(webhookId), 6);
  // The next read of the record after the sixth lost take (the only one-shot left by then) fails every attempt.
  f.injector.failNext({
    service: 'dynamodb', command: 'GetItemCommand', kind: { code: 'ProvisionedThroughputExceededException', status: 400 }, timing: 'before', attempts: Number.POSITIVE_INFINITY,
    matches: (input) => f.injector.unused === 1 && input.ConsistentRead === true && JSON.stringify(input.Key).includes(webhookId),
  });
  await publish(f, topic, 'take and read lost');
  await until(async () => f.injector.unused === 0, 30_000, 'the takes and the read failed');
  await successCounted(50_000);
  const s = await counts();
  expect({ posts: recv.requests.length, success: s.success_count ?? 0, pending: s.pending_retries ?? 0 }).toEqual({ posts: 2, success: 1, pending: 0 });
});
