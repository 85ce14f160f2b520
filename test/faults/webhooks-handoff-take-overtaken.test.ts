/**
 * A take of the first hand-off's counts whose answers are all lost, read after the delivery
 * moved on.
 *
 * Scenario: attempt 1 fails with retries left; run A notes the hand-off and takes its counts
 * (lambda/webhooks/retry-handoff.ts `countHandoff`). The take is applied, but DynamoDB is slow
 * and every one of its 6 tries (one TransactWriteItems each, with the pending retry and a token
 * of the first hand-off: lambda/webhooks/storage/webhook-delivery-once.ts) loses its answer. Meanwhile the run outlasts the job's visibility
 * timeout, so SQS hands the job out again: that copy finds the hand-off noted with its counts
 * taken, starts the execution, and the delivery carries on (retry 2 fails and hands off, its run
 * taking that hand-off's counts and writing its own id in `handoff_taken`; retry 3 succeeds, and
 * its record, a put, carries no `handoff_taken`). Run A's one read then finds no `handoff_taken`
 * of its own (here: the ended record; earlier: the later hand-off's run's id), so it takes its
 * applied take for another run's and counts nothing. The first hand-off's pending retry is never
 * counted, and the success gives it back.
 *
 * Expected (docs/webhooks.md "Guarantees": counts exact under lost answers; design record 17
 * "The hand-off's counts, once"): one success, `pending_retries` 0. Before the fix: -1.
 */
import { until } from '../fixtures/receiver';
import { handoffFixture, handoffWebhook, isTake, loseAnswers, publish } from './handoff-fixture';

jest.setTimeout(120_000);

const f = handoffFixture('whtakeovertaken', { visibilitySeconds: 3, seed: 4713 });

it('a lost take read after a later hand-off\'s take still counts the first hand-off\'s pending retry', async () => {
  const { recv, topic, webhookId, counts, successCounted } = await handoffWebhook(f, { failFirst: 2 }, { retry_count: 3, retry_delay: 1, backoff_multiplier: 1 });
  // Run A: the first take of this webhook's hand-off counts (the first hand-off's token); its tries are slow and lose their answers.
  let runA: string | undefined;
  const take = isTake(webhookId);
  const isRunA = (input: Record<string, unknown>) => {
    if (!take(input)) return false;
    const run = input.ClientRequestToken as string;
    runA ??= run;
    return run === runA;
  };
  loseAnswers(f, 'TransactWriteItemsCommand', isRunA, 6);
  f.injector.addLatency({ service: 'dynamodb', command: 'TransactWriteItemsCommand', ms: 1500, matches: isRunA });
  await publish(f, topic, 'overtaken');
  await until(async () => f.injector.unused === 0, 60_000, 'run A\'s takes failed');
  await successCounted(60_000);
  // Run A's read and its batch's flush are done by then (its tries take about 6 x 1.5 s).
  await new Promise((r) => setTimeout(r, 15_000));
  const s = await counts();
  expect({ posts: recv.requests.length, success: s.success_count ?? 0, pending: s.pending_retries ?? 0 }).toEqual({ posts: 3, success: 1, pending: 0 });
});
