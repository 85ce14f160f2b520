/**
 * A hand-off whose execution failed and whose failure was never handled.
 *
 * Scenario: attempt 1 fails with retries left; the delivery is noted `retrying` and its retry
 * execution starts (lambda/webhooks/deliver.ts `handToWorkflow`). The execution fails (here its
 * SendMessage goes to a queue that does not exist, past the ASL's retries), and the stack's rule
 * on failed executions, which ends such a delivery (lambda/handlers/webhook-attempt.ts), does not
 * reach its target: every try of it fails. The record stays `retrying`. A copy of the first job
 * then arrives (SQS delivers at least once): it finds the hand-off noted and starts its execution
 * by name; Step Functions answers ExecutionAlreadyExists, and DescribeExecution says FAILED.
 *
 * Expected: that job ends the delivery as the rule would have: failed, counted once (no pending
 * retry left), its on_failure hook run once, and no second POST. Before, it took the closed
 * execution for one that had put the retry on the queue, and the delivery stayed `retrying`.
 */
import { until } from '../fixtures/receiver';
import { executionName } from '../../lambda/webhooks/storage/retry-workflow';
import { enqueueJobs } from '../../lambda/webhooks/storage/delivery-queue';
import { deliveryOf, failingWorkflow, firstJob, handoffFixture, handoffWebhook, hookQueue, publish } from './handoff-fixture';

jest.setTimeout(90_000);

const f = handoffFixture('whhandofffailed', { visibilitySeconds: 8, seed: 4648 });

it('a job that finds its hand-off\'s execution failed and not handled ends the delivery as the failed-execution rule would', async () => {
  const { alerts, q, on_failure } = await hookQueue(f);
  const { recv, topic, webhookId, counts } = await handoffWebhook(f, { failFirst: 1 }, { retry_count: 2, retry_delay: 1, backoff_multiplier: 1, on_failure });
  // The same ASL on a queue that does not exist (its execution fails), and a rule whose target
  // fails every try (the runner tries it 4 times, 2 s apart, as EventBridge retries a target).
  const ruleTries: string[] = [];
  const wf = failingWorkflow(f, async (e) => {
    ruleTries.push(e.detail.status);
    throw new Error('rule target unavailable');
  });
  try {
    const id = await publish(f, topic, 'never retried');
    await until(async () => ruleTries.length >= 4, 40_000, 'the failed execution\'s rule tried and failed');
    expect(wf.broken.describeExecution(executionName(webhookId, id)).status).toBe('FAILED');
    expect((await deliveryOf(f, webhookId, id))?.outcome).toBe('retrying');
    // A copy of the first job (the execution's retry job without its retry).
    await enqueueJobs([firstJob(wf.started[0])]);
    const rec = await until(async () => { const r = await deliveryOf(f, webhookId, id); return r?.ended && r; }, 30_000, 'the delivery ended').catch(() => deliveryOf(f, webhookId, id));
    const [hook] = await until(async () => { const m = await q.consume(alerts, { max_messages: 10 }); return m.length > 0 && m; }, 20_000, 'the on_failure hook').catch(() => []);
    // The failure is counted at the end of the copy's batch, after its record and hook.
    const s = await until(async () => { const c = await counts(); return (c.failure_count ?? 0) >= 1 && c; }, 10_000, 'the failure counted').catch(() => counts());
    expect({ outcome: rec?.outcome, posts: recv.requests.length, failures: s.failure_count ?? 0, pending: s.pending_retries ?? 0, hook: hook?.payload }).toEqual({
      outcome: 'failed', posts: 1, failures: 1, pending: 0, hook: expect.stringMatching(/^failed: retry workflow failed .* after: /),
    });
  } finally {
    await wf.restore();
  }
});
