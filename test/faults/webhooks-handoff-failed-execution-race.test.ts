/**
 * A job that ends its delivery on a failed execution, and the failed-execution rule's retried
 * target, at the same time.
 *
 * Scenario (as webhooks-handoff-failed-execution.test.ts): attempt 1 fails with retries left,
 * its execution fails (SendMessage to a queue that does not exist), and the stack's rule on failed
 * executions does not reach its target at first. EventBridge retries a target with exponential
 * backoff (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html;
 * the stack's rule: 8 retries within 24 hours, lib/constructs/webhook-delivery.ts), so its later
 * try can land at any moment. Meanwhile a copy of the first job starts the hand-off's
 * execution by name, finds it FAILED (it arrives once DescribeExecution, eventually consistent,
 * shows the failure: local/stepfunctions.ts) and ends the delivery itself
 * (lambda/webhooks/deliver.ts `endFailedExecution`: giveUpDelivery, then finishDelivery, which
 * runs on_failure and then marks the record ended). The rule's try lands while that job's hook
 * has run and its mark is on its way (here: held until the rule's run is done): its giveUpDelivery
 * finds the record failed, and its finishDelivery finds it not marked ended and runs the hook again.
 *
 * Expected (docs/webhooks.md "Retries and hooks", design record 17): the failure counted once and
 * `on_failure` published once. Actual: counted once, published twice.
 */
import { randomUUID } from 'node:crypto';
import { until } from '../fixtures/receiver';
import { enqueueJobs } from '../../lambda/webhooks/storage/delivery-queue';
import { executionName } from '../../lambda/webhooks/storage/retry-workflow';
import { jobMessageId } from '../../lambda/webhooks/rules/delivery';
import { handler as attemptHandler } from '../../lambda/handlers/webhook-attempt';
import { lambdaContext } from '../../local/lambda-context';
import { deliveryOf, failingWorkflow, firstJob, handoffFixture, handoffWebhook, hookQueue, publish } from './handoff-fixture';

jest.setTimeout(90_000);

const f = handoffFixture('whhandoffrace', { visibilitySeconds: 8, seed: 4712 });

it('a failed execution ended by a job and by the rule\'s retried target at once runs on_failure once', async () => {
  const { alerts, q, on_failure } = await hookQueue(f);
  const { recv, topic, webhookId, counts } = await handoffWebhook(f, { failFirst: 1 }, { retry_count: 2, retry_delay: 1, backoff_multiplier: 1, on_failure });
  let id = '';
  const record = () => deliveryOf(f, webhookId, id);
  // The first mark of the delivery's end (the job's, after its hook) waits until the rule's run is done.
  let ruleDone!: () => void;
  const ruleRan = new Promise<void>((r) => (ruleDone = r));
  let held = false;
  f.injector.addLatency({
    service: 'dynamodb', command: 'UpdateItemCommand', ms: 0,
    matches: (input) => !held && String(input.UpdateExpression).startsWith('SET ended = :true') && JSON.stringify(input.Key).includes(webhookId) && (held = true),
    hold: () => Promise.race([ruleRan, new Promise<void>((r) => setTimeout(r, 30_000).unref())]),
  });
  let ruleTries = 0;
  const wf = failingWorkflow(f, async (e) => {
    ruleTries++;
    // The rule's first try fails; a copy of the first job arrives once DescribeExecution shows
    // the failure; the rule's later try lands once that job recorded the end.
    if (ruleTries === 1) {
      const name = executionName(webhookId, jobMessageId(wf.started[0].job));
      await until(async () => wf.broken.describeExecution(name).status === 'FAILED', 20_000, 'DescribeExecution shows the failure');
      await enqueueJobs([firstJob(wf.started[0])]);
      throw new Error('rule target unavailable');
    }
    await until(async () => (await record())?.outcome === 'failed', 30_000, 'the job ended the delivery');
    try {
      return await attemptHandler(e, lambdaContext('msg-webhookAttempt', randomUUID()));
    } finally {
      ruleDone();
    }
  });
  try {
    id = await publish(f, topic, 'ended twice');
    await until(async () => ruleTries >= 2 && (await record())?.ended === true, 60_000, 'the delivery ended and the rule ran');
    const hooks: unknown[] = [];
    const settle = Date.now() + 5_000;
    while (Date.now() < settle) hooks.push(...(await q.consume(alerts, { max_messages: 10 })));
    const s = await counts();
    expect({ outcome: (await record())?.outcome, posts: recv.requests.length, failures: s.failure_count ?? 0, pending: s.pending_retries ?? 0, hooks: hooks.length }).toEqual({
      outcome: 'failed', posts: 1, failures: 1, pending: 0, hooks: 1,
    });
  } finally {
    ruleDone();
    await wf.restore();
  }
});
