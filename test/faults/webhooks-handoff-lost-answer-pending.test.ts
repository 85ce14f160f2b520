/**
 * The pending-retry count of a hand-off whose note was applied with every answer lost.
 *
 * Scenario (as webhooks-handoff-lost-answer.test.ts, first case): attempt 1 fails with retries
 * left; `recordRetrying` (storage/webhook-deliveries.ts) puts the `retrying` record, DynamoDB
 * applies it but every answer is lost, so the run throws before `countLater({ pending: 1 })`.
 * SQS hands the job back; it finds the hand-off noted and starts its execution by name without
 * writing the note (lambda/webhooks/deliver.ts, `noted`), so nothing counts the pending retry.
 * The retry then succeeds and `recordFinal` from `retrying` counts `pending: -1`.
 *
 * Expected (DESIGN.md section 9, counts exact): once the delivery succeeded, one success and no
 * pending retry: `pending_retries` 0, not -1 (a -1 hides `next_retry` of the webhook's next
 * pending retry on GET /webhooks/{name}/status, which shows it only while the count is above 0).
 */
import { until } from '../fixtures/receiver';
import { handoffFixture, handoffWebhook, isRetryingPut, isTake, loseAnswers, publish } from './handoff-fixture';

jest.setTimeout(90_000);

const f = handoffFixture('whhandoffpend', { visibilitySeconds: 8, seed: 4647 });

it('a hand-off whose note was applied with every answer lost leaves no pending retry once the retry succeeded', async () => {
  const { recv, topic, webhookId, counts, successCounted } = await handoffWebhook(f, { failFirst: 1 }, { retry_count: 2, retry_delay: 1, backoff_multiplier: 1 });
  loseAnswers(f, 'PutItemCommand', isRetryingPut(webhookId));
  await publish(f, topic, 'handed off');
  await until(async () => f.injector.unused === 0, 20_000, 'the hand-off write failed');
  // The success and its pending -1 are flushed together, at the end of the retry's batch.
  await successCounted(50_000);
  const s = await counts();
  expect({ posts: recv.requests.length, success: s.success_count ?? 0, pending: s.pending_retries ?? 0 }).toEqual({ posts: 2, success: 1, pending: 0 });
});

it('a restarted hand-off shows its pending retry, next retry and error as a first hand-off does', async () => {
  // A retry 30 s after the hand-off: the counts are read while it waits.
  const { recv, topic, webhookId, counts } = await handoffWebhook(f, { failFirst: 1 }, { retry_count: 2, retry_delay: 30, backoff_multiplier: 1 });
  loseAnswers(f, 'PutItemCommand', isRetryingPut(webhookId));
  const published = Date.now();
  await publish(f, topic, 'restarted');
  await until(async () => f.injector.unused === 0, 20_000, 'the hand-off write failed');
  // The job comes back after 8 s and starts the noted hand-off's execution.
  const s = await until(async () => { const c = await counts(); return c.next_retry !== undefined && c; }, 30_000, 'the restarted hand-off counted').catch(() => counts());
  expect({ posts: recv.requests.length, pending: s.pending_retries ?? 0, error: s.last_error, nextRetryLater: (s.next_retry ?? 0) >= published + 30_000 }).toEqual({
    posts: 1, pending: 1, error: expect.stringContaining('500'), nextRetryLater: true,
  });
});

/** A webhook whose first attempt fails, and `tries` calls of its hand-off take failing after they applied (every attempt of each call). */
async function takeLost(tries: number) {
  const { recv, topic, webhookId, counts, successCounted } = await handoffWebhook(f, { failFirst: 1 }, { retry_count: 2, retry_delay: 1, backoff_multiplier: 1 });
  loseAnswers(f, 'TransactWriteItemsCommand', isTake(webhookId), tries);
  await publish(f, topic, 'take lost');
  await until(async () => f.injector.unused === 0, 20_000, 'the take failed');
  await successCounted(50_000);
  const s = await counts();
  return { posts: recv.requests.length, success: s.success_count ?? 0, pending: s.pending_retries ?? 0 };
}

// storage/webhook-delivery-once.ts `takeHandoff`: its next try carries the same token and answers as applied.
it('a take of the hand-off\'s counts applied with its answer lost counts them once', async () => {
  expect(await takeLost(1)).toEqual({ posts: 2, success: 1, pending: 0 });
});

// Every try of the run (6) lost: the run throws, and the take counted the pending retry with it.
it('a take of the hand-off\'s counts applied with every try\'s answer lost counts them once', async () => {
  expect(await takeLost(6)).toEqual({ posts: 2, success: 1, pending: 0 });
});
