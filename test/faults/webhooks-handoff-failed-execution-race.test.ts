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
 * execution by name, finds it FAILED and ends the delivery itself
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
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { dynamoClient } from '../../lambda/core/storage/client';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { readWebhookCounters } from '../../lambda/webhooks/storage/webhook-counters';
import { setRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import { enqueueJobs } from '../../lambda/webhooks/storage/delivery-queue';
import { handler as attemptHandler } from '../../lambda/handlers/webhook-attempt';
import type { RetryState } from '../../lambda/webhooks/rules/delivery';
import { LocalRetryWorkflow } from '../../local/stepfunctions';
import { lambdaContext } from '../../local/lambda-context';
import { FaultInjector } from './injector';

jest.setTimeout(90_000);

const bed = webhookTestbed('whhandoffrace', { visibilitySeconds: 8 });
const injector = new FaultInjector(4712);
beforeAll(() => injector.attach(dynamoClient(), 'dynamodb'));
afterEach(() => injector.clearLatency());

it('a failed execution ended by a job and by the rule\'s retried target at once runs on_failure once', async () => {
  const alerts = unique('alerts');
  const q = queueApi(bed.call);
  await q.create({ name: alerts, topic_filter: `${alerts}/#` });
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, backoff_multiplier: 1, on_failure: { topic: `${alerts}/failed`, payload: 'failed: {{.error}}' } });
  const webhookId = (await getWebhook(bed.ns.name, w.name))!.id;
  let id = '';
  const record = () => readDelivery({ namespace: bed.ns.name, webhookId, messageId: id });
  // The first mark of the delivery's end (the job's, after its hook) waits until the rule's run is done.
  let ruleDone!: () => void;
  const ruleRan = new Promise<void>((r) => (ruleDone = r));
  let held = false;
  injector.addLatency({
    service: 'dynamodb', command: 'UpdateItemCommand', ms: 0,
    matches: (input) => !held && String(input.UpdateExpression).startsWith('SET ended = :true') && JSON.stringify(input.Key).includes(webhookId) && (held = true),
    hold: () => Promise.race([ruleRan, new Promise<void>((r) => setTimeout(r, 30_000).unref())]),
  });
  const started: RetryState[] = [];
  let ruleTries = 0;
  const broken = new LocalRetryWorkflow(async (e) => {
    ruleTries++;
    // The rule's first try fails; a copy of the first job arrives; the rule's later try lands
    // once that job recorded the end.
    if (ruleTries === 1) {
      const { retry: _, ...job } = started[0].job;
      await enqueueJobs([job]);
      throw new Error('rule target unavailable');
    }
    await until(async () => (await record())?.outcome === 'failed', 30_000, 'the job ended the delivery');
    try {
      return await attemptHandler(e, lambdaContext('msg-webhookAttempt', randomUUID()));
    } finally {
      ruleDone();
    }
  }, () => undefined, { queueUrl: `${bed.local.queueUrl}-missing`, retryIntervalMs: 10 });
  const start = broken.start.bind(broken);
  broken.start = (name, state) => (started.push(state), start(name, state));
  setRetryWorkflow(broken);
  try {
    const res = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'ended twice' });
    expect(res.status).toBe(201);
    id = res.body.data.message_id as string;
    await until(async () => ruleTries >= 2 && (await record())?.ended === true, 60_000, 'the delivery ended and the rule ran');
    const hooks: unknown[] = [];
    const settle = Date.now() + 5_000;
    while (Date.now() < settle) hooks.push(...(await q.consume(alerts, { max_messages: 10 })));
    const s = (await readWebhookCounters(bed.ns.name, webhookId)).status;
    expect({ outcome: (await record())?.outcome, posts: recv.requests.length, failures: s.failure_count ?? 0, pending: s.pending_retries ?? 0, hooks: hooks.length }).toEqual({
      outcome: 'failed', posts: 1, failures: 1, pending: 0, hooks: 1,
    });
  } finally {
    ruleDone();
    await broken.stop();
    setRetryWorkflow(bed.local.workflow);
  }
});
