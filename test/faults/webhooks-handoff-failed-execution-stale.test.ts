/**
 * A job that meets its hand-off's failed execution while DescribeExecution still answers RUNNING.
 *
 * DescribeExecution "is eventually consistent. The results are best effort and may not reflect
 * very recent updates and changes."
 * (https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html; the
 * local runner answers a close only after its lag, local/stepfunctions.ts).
 *
 * Scenario (as webhooks-handoff-failed-execution.test.ts): attempt 1 fails with retries left, its
 * execution fails (SendMessage to a queue that does not exist), and the stack's rule on failed
 * executions does not reach its target at first (EventBridge retries it:
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html). A copy of
 * the first job arrives at once and starts the hand-off's execution by name: StartExecution says
 * ExecutionAlreadyExists (the name is taken), and DescribeExecution, inside its lag (30 s here, so
 * the answer is stale whatever the machine's load), says RUNNING.
 *
 * Expected: the copy takes the execution as the delivery's owner and does nothing (no POST, no
 * count); the rule's retried target ends the delivery: failed, counted once (no pending retry
 * left), on_failure published once.
 */
import { randomUUID } from 'node:crypto';
import { until } from '../fixtures/receiver';
import { enqueueJobs } from '../../lambda/webhooks/storage/delivery-queue';
import { handler as attemptHandler } from '../../lambda/handlers/webhook-attempt';
import { lambdaContext } from '../../local/lambda-context';
import { deliveryOf, failingWorkflow, firstJob, handoffFixture, handoffWebhook, hookQueue, publish } from './handoff-fixture';

jest.setTimeout(90_000);

const f = handoffFixture('whhandoffstale', { visibilitySeconds: 8, seed: 4821 });

it('a job told RUNNING by a stale DescribeExecution leaves the failed execution to the rule, which ends the delivery once', async () => {
  const { alerts, q, on_failure } = await hookQueue(f);
  const { recv, topic, webhookId, counts } = await handoffWebhook(f, { failFirst: 1 }, { retry_count: 2, retry_delay: 1, backoff_multiplier: 1, on_failure });
  let id = '';
  const record = () => deliveryOf(f, webhookId, id);
  let ruleTries = 0;
  const wf = failingWorkflow(f, async (e) => {
    ruleTries++;
    // The rule's first try fails; a copy of the first job arrives and is handled before the
    // rule's next try (2 s later in the runner): the copy's start is the second start.
    if (ruleTries === 1) {
      await enqueueJobs([firstJob(wf.started[0])]);
      await until(async () => wf.answers.length >= 2, 20_000, 'the copy started the execution by name');
      throw new Error('rule target unavailable');
    }
    return attemptHandler(e, lambdaContext('msg-webhookAttempt', randomUUID()));
  }, { describeLagMs: 30_000 });
  try {
    id = await publish(f, topic, 'left to the rule');
    await until(async () => ruleTries >= 2 && (await record())?.ended === true, 60_000, 'the rule ended the delivery');
    const hooks: unknown[] = [];
    const settle = Date.now() + 3_000;
    while (Date.now() < settle) hooks.push(...(await q.consume(alerts, { max_messages: 10 })));
    const s = await until(async () => { const c = await counts(); return (c.failure_count ?? 0) >= 1 && c; }, 10_000, 'the failure counted').catch(() => counts());
    expect({ copy: wf.answers[1], outcome: (await record())?.outcome, posts: recv.requests.length, failures: s.failure_count ?? 0, pending: s.pending_retries ?? 0, hooks: hooks.length }).toEqual({
      copy: 'running', outcome: 'failed', posts: 1, failures: 1, pending: 0, hooks: 1,
    });
  } finally {
    await wf.restore();
  }
});
