/**
 * The Wait + SQS-send retry workflow (docs/design/0017-webhook-delivery-once.md): never a retry POSTed twice.
 *
 * Promise (docs/design/0021-endpoint-health.md, 0017: "only a job carrying that count may
 * attempt, and its attempt moves the note on, so a later copy of the job does not POST it
 * again"; here the case of a Task SendMessage retried after a lost answer).
 *
 * Scenario: the Queue state's SendMessage is applied but its answer is lost; Step Functions runs
 * the Task's Retry (IntervalSeconds 2 in the ASL), so a second copy of the same retry job reaches
 * the queue about 2 s after the first. The receiver is slow (4 s to answer 500, inside the
 * webhook's 10 s timeout), so the first copy's attempt is still in flight when the second copy is
 * received: the record still notes the retry as queued (`queued` moves on only after the attempt),
 * and the second copy POSTs attempt 2 as well. The copies are not "handled at the same moment" in
 * one batch (the ASL's own retry interval puts them apart), so the same-batch wait does not apply.
 * The lost answer is made here by sending the copy the Task's retry would send (the same body,
 * the same group) when the first copy's POST arrives at the receiver.
 *
 * Observed (every run so far): 3 requests for a delivery with retry_count 1 (attempt 2 POSTed
 * twice). Expected: 2.
 *
 * Decision (docs/design/0017-webhook-delivery-once.md, docs/webhooks.md's delivery row): not
 * closed (a claim before every retry's POST would cost a write per retry and hold a crashed
 * attempt's delivery until it lapses); documented with its bound: each copy the Task sent POSTs at
 * most once, so one lost answer POSTs the in-flight attempt at most once more, and the delivery
 * still ends once, counted once.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook, getWebhookStatus } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import type { RetryState } from '../../lambda/webhooks/rules/delivery';

jest.setTimeout(90_000);

const bed = webhookTestbed('r15copies');

it('a second copy of a retry job (the Task\'s SendMessage retried after a lost answer) POSTs the retry at most once more, and the delivery ends once', async () => {
  // The execution's input: the retry job the Queue state sends.
  const started: RetryState[] = [];
  const wf = bed.local.workflow;
  const start = wf.start.bind(wf);
  wf.start = async (name, state) => (started.push(state), start(name, state));
  let copySent = false;
  const recv = await bed.receivers.start({
    failFirst: 100,
    delayMs: 4000,
    onRequest: (_r, n) => {
      if (n !== 2 || !started[0]) return;
      // Attempt 2 (the first copy) is in flight: the Task's retry puts the same job on the queue again.
      const job = started[0].job;
      void sqsClient()
        .send(new SendMessageCommand({ QueueUrl: bed.local.queueUrl, MessageBody: JSON.stringify(job), MessageGroupId: job.namespace }))
        .then(() => { copySent = true; });
    },
  });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1, timeout: 10, failure_threshold: 1000, disable_after: 86400 });
    const id = (await getWebhook(bed.ns.name, w.name))!.id;
    const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'once per attempt' });
    expect(published.status).toBe(201);
    const key = { namespace: bed.ns.name, webhookId: id, messageId: published.body.data.message_id };
    const rec = await until(async () => { const r = await readDelivery(key); return r && r.outcome !== 'retrying' && r; }, 60_000, 'the delivery ended');
    expect(copySent).toBe(true);
    expect(rec).toMatchObject({ outcome: 'failed', attempts: 2 });
    // Let the copy be received and handled.
    await new Promise((r) => setTimeout(r, 8000));
    // The documented bound: attempts 1 and 2, and at most one more POST of attempt 2 (the copy).
    expect(recv.requests.length).toBeGreaterThanOrEqual(2);
    expect(recv.requests.length).toBeLessThanOrEqual(3);
    expect(new Set(recv.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    // The copy changed nothing recorded: still ended once after 2 attempts, counted once.
    expect(await readDelivery(key)).toMatchObject({ outcome: 'failed', attempts: 2 });
    expect(await getWebhookStatus(bed.ns.name, id)).toMatchObject({ failure_count: 1 });
  } finally {
    wf.start = start;
  }
});
