/**
 * Two SQS copies of one first job at once, both POSTs failing: the copies' takes of the one
 * hand-off send the same derived token with different parameters.
 *
 * Scenario: SQS hands out two copies of a first job at once (it delivers at least once), both
 * POST (docs/webhooks.md "Guarantees" allows a second POST only here) and both fail with retries
 * left. Copy A notes the hand-off (`recordRetrying`, its counts stamped with A's `now`); copy B's
 * note is refused (the record exists), which handToWorkflow (lambda/webhooks/deliver.ts) ignores:
 * it builds the counts itself with B's own `now` and takes them (retry-handoff.ts
 * `countHandoff`). takeHandoff (lambda/webhooks/storage/webhook-delivery-once.ts) derives its token from the
 * delivery and the hand-off's number only, and its counter ADD carries `written_at = :w`, the
 * counts' time: the second take is the same token with other parameters, which DynamoDB refuses
 * with IdempotentParameterMismatchException within the token's 10 minutes
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken;
 * pinned on DynamoDB Local by test/integration/transact-write.test.ts), not a failed condition:
 * that copy's run throws and its job comes back (a visibility timeout later, a receive toward the
 * DLQ) instead of finding the hand-off taken.
 *
 * Expected (design record 17: a copy's take of a hand-off another copy took "answers as taken" /
 * "as applied"): no take refused with IdempotentParameterMismatchException; pending_retries 1.
 * The refused copy reads the note and takes it as it is, or takes nothing when it finds it taken
 * already: both copies hand off (start the workflow), one or two takes between them.
 */
import { until } from '../fixtures/receiver';
import { unique } from '../fixtures/queues';
import { ddb } from '../../lambda/core/storage/client';
import { setRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import { handoffFixture, handoffWebhook, isTake, publish, twoCopies } from './handoff-fixture';

jest.setTimeout(90_000);

const f = handoffFixture('whcopytoken', { visibilitySeconds: 8, seed: 4716, sqsSeed: 4717 });

it('a copy whose note was refused takes the hand-off as the same request, not a mismatched one', async () => {
  const topic = unique('t');
  // Both copies' POSTs are answered (both failing) once both arrived.
  const { recv, webhookId, counts } = await handoffWebhook(f, twoCopies(f, topic, 2), { retry_count: 1, retry_delay: 30, backoff_multiplier: 1 }, topic);
  // What DynamoDB answered the takes of this webhook's hand-offs.
  const answers: string[] = [];
  const name = `takes-${webhookId}`;
  const isItsTake = isTake(webhookId);
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const take = context.commandName === 'TransactWriteItemsCommand' && isItsTake(args.input as Record<string, unknown>);
      try {
        const out = await next(args);
        if (take) answers.push('ok');
        return out;
      } catch (e) {
        if (take) answers.push((e as Error).name);
        throw e;
      }
    },
    { step: 'initialize', name },
  );
  // Each copy's hand-off ends with its start of the workflow (the real one, only counted).
  const real = f.bed.local.workflow;
  const starts: string[] = [];
  setRetryWorkflow({ start: (n, state) => (starts.push(n), real.start(n, state)) });
  try {
    await publish(f, topic, 'two copies');
    await until(async () => starts.length >= 2, 40_000, 'both copies handed off');
    // The copy's job back and its execution (retry_delay 30 s: its retry not yet due).
    await new Promise((r) => setTimeout(r, 3_000));
    const s = await counts();
    expect({ posts: recv.requests.length, mismatched: answers.filter((a) => a === 'IdempotentParameterMismatchException').length, took: answers.includes('ok'), pending: s.pending_retries ?? 0 }).toEqual({ posts: 2, mismatched: 0, took: true, pending: 1 });
  } finally {
    ddb().middlewareStack.remove(name);
    setRetryWorkflow(real);
  }
});
