/**
 * The Wait + SQS-send retry workflow (docs/design/0017-webhook-delivery-once.md): every delivery ends failed
 * only after retry_count attempts.
 *
 * Promise (docs/webhooks.md, docs/design/0017 and 0021): a delivery that keeps failing ends
 * `failed` after 1 + retry_count attempts, counted once; an execution that fails ends the delivery
 * only because its retry job "never reached the queue".
 *
 * Scenario: execution 1's SendMessage is applied but its answer is lost, and its later tries fail
 * (an SQS brownout; the Task retries about 4 minutes, then the execution fails). The job it did
 * put on the queue is received meanwhile: attempt 2 fails, the record's note moves on (queued 2)
 * and execution 2 starts. Then execution 1's failure reaches the attempt function (the stack's
 * EventBridge rule; called here as that rule calls it, with execution 1's input). giveUpDelivery
 * reads a `retrying` record and ends the delivery, without checking that the note moved past the
 * failed execution's retry.
 *
 * Observed (every run so far): the delivery ends `failed` ("retry workflow failed
 * (SQS.SqsException) after: HTTP 500") after 2 of its 4 attempts, recorded as `attempts: 1` (2
 * were made); execution 2's retry job then finds it ended, and attempts 3 and 4 are never made. Expected: the late failure of an execution whose retry was received is ignored; 4 attempts.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import type { RetryState } from '../../lambda/webhooks/rules/delivery';
import { runAction } from '../../lambda/handlers/webhook-attempt';

jest.setTimeout(90_000);

const bed = webhookTestbed('r15stale');

it('a late failure of an execution whose retry job was received does not end the delivery early', async () => {
  const started: RetryState[] = [];
  const wf = bed.local.workflow;
  const start = wf.start.bind(wf);
  wf.start = async (name, state) => (started.push(state), start(name, state));
  try {
    const recv = await bed.receivers.start({ failFirst: 100 });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 3, retry_delay: 2, backoff_multiplier: 1, failure_threshold: 1000, disable_after: 86400 });
    const id = (await getWebhook(bed.ns.name, w.name))!.id;
    const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'four attempts' });
    expect(published.status).toBe(201);
    const key = { namespace: bed.ns.name, webhookId: id, messageId: published.body.data.message_id };
    // Attempt 2 (execution 1's job) made and handed on: the record notes the retry after attempt 2.
    await until(async () => (await readDelivery(key))?.queued === 2, 30_000, 'the retry after attempt 2 handed on');
    // Its execution starts once the hand-off's counts are taken, one write after the note.
    await until(async () => started.length >= 2, 10_000, 'execution 2 started');
    expect(started.map((s) => s.attempts)).toEqual([1, 2]);
    // Execution 1 fails late (its SendMessage's later tries failed): the rule hands its input over.
    await runAction({
      'detail-type': 'Step Functions Execution Status Change',
      detail: { status: 'FAILED', executionArn: 'execution-1', input: JSON.stringify(started[0]), error: 'SQS.SqsException', cause: 'Service Unavailable' },
    });
    const rec = await until(async () => { const r = await readDelivery(key); return r && r.outcome !== 'retrying' && r; }, 40_000, 'the delivery ended');
    await until(async () => wf.running === 0, 20_000, 'the executions ended');
    expect({ outcome: rec.outcome, attempts: rec.attempts, requests: recv.requests.length, error: rec.error }).toEqual({ outcome: 'failed', attempts: 4, requests: 4, error: 'HTTP 500' });
  } finally {
    wf.start = start;
  }
});
