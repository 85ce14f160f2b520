/**
 * A retry held back by the webhook's limits or its open circuit is handed to the delivery queue
 * with its attempt number and its execution ends at once (docs/design/0021-endpoint-health.md):
 * it never loops in Step Functions (a Standard execution fails at 25,000 history events, and each
 * round is billed). Held by the circuit, it is parked with the first attempts and released in
 * order by the probe's success; held by `max_in_flight`, it comes back when its place frees. It
 * keeps its count: its attempt is logged as attempt 2 and ends the delivery. The executions run on
 * the local workflow (the stack's ASL). And an execution that fails (its SendMessage failing past
 * the Queue state's retries) is caught outside it: the delivery still ends, with its on_failure hook.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { until } from '../fixtures/receiver';
import { scaled } from '../fixtures/time-scale';
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery, recordRetrying } from '../../lambda/webhooks/storage/webhook-deliveries';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { parkedJobs } from '../../lambda/webhooks/storage/webhook-parked';
import { executionName, retryWorkflow, setRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import { runAction } from '../../lambda/handlers/webhook-attempt';
import { LocalRetryWorkflow } from '../../local/stepfunctions';
import { enqueueJobs } from '../../lambda/webhooks/storage/delivery-queue';
import { jobMessageId, type RetryState } from '../../lambda/webhooks/rules/delivery';
import type { PublishedMessage } from '../../lambda/core/rules/message';
import { logger } from '../../lambda/core/observability';
import { DELIVERY_FAILED_LOG } from '../../lambda/webhooks/deliver';

jest.setTimeout(90_000);

const bed = webhookTestbed('whheld');

/** A retry execution of `message` after its failed attempt 1, started as the delivery function starts it (its record `retrying`, the hand-off noted). */
async function startRetry(webhook: { id: string; name: string }, message: PublishedMessage) {
  const key = { namespace: bed.ns.name, webhookId: webhook.id, messageId: message.message_id };
  expect(await recordRetrying(key, { nextRetry: Date.now(), error: 'HTTP 500', now: Date.now(), queued: 1 })).toBe(true);
  const state: RetryState = { job: { namespace: bed.ns.name, webhook_id: webhook.id, webhook_name: webhook.name, message, retry: { attempts: 1, last_error: 'HTTP 500' } }, attempts: 1, wait_seconds: 0, last_error: 'HTTP 500', outcome: 'retry' };
  const before = bed.local.workflow.transitions;
  expect(await retryWorkflow().start(executionName(webhook.id, message.message_id), state)).toBe('started');
  return { key, transitions: () => bed.local.workflow.transitions - before };
}

const newMessage = (topic: string, payload: string): PublishedMessage => ({ message_id: unique('held'), topic, payload, content_type: 'text/plain', properties: {}, published_at: Date.now(), size: payload.length });

it('parks a retry held by an open circuit: its execution ends after its Wait and send (2 transitions), and the probe\'s success delivers it as attempt 2', async () => {
  const recv = await bed.receivers.start({});
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, failure_threshold: 1000, disable_after: 86400 });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  // The circuit is open (a run of 5 failed attempts) and the probe is held for 6 s more (at the
  // suite's time scale: the job must reach the delivery function and be parked before the probe
  // frees, through the workflow, SQS and the event source, all slower on loaded cores).
  await ddb().send(new UpdateCommand({
    TableName: tableName('meta'), Key: metaKeys.resource(bed.ns.name, 'WEBHOOK', w.name),
    UpdateExpression: 'SET health = :h', ExpressionAttributeValues: { ':h': { failing_since: Date.now() - 10_000, failed_attempts: 5, failures: 0, probe_until: Date.now() + scaled(6000), last_error: 'HTTP 500' } },
  }));
  const message = newMessage(topic, 'held by the circuit');
  const run = await startRetry({ id, name: w.name }, message);
  // The execution ends at once (Wait, Queue), and the delivery function parks the job it sent.
  await until(async () => bed.local.workflow.running === 0, 5000, 'the retry execution ended');
  expect(run.transitions()).toBe(2);
  expect(recv.requests).toHaveLength(0);
  // The job the execution sent is received and parked by the delivery function.
  const parked = await until(async () => { const j = (await parkedJobs(bed.ns.name, id, 10)).jobs; return j.length > 0 && j; }, 5000, 'the retry parked');
  expect(parked.map((j) => [jobMessageId(j), j.retry?.attempts])).toEqual([[message.message_id, 1]]);
  // The probe ticket comes back once the probe is free: the parked retry is the probe, and succeeds.
  await recv.waitFor(1, 20_000);
  const rec = await until(async () => { const r = await readDelivery(run.key); return r && r.outcome !== 'retrying' && r; }, 10_000, 'the delivery ended');
  expect(rec).toMatchObject({ outcome: 'success', attempts: 2 });
  expect(run.transitions()).toBe(2);
  const log = await until(async () => { const r = await bed.call('GET', `/webhooks/${w.name}/deliveries?message_id=${message.message_id}`); return r.body.data?.deliveries?.length > 0 && r.body.data.deliveries; }, 10_000, 'the delivery log entry');
  expect(log.map((e: { attempt: number; outcome: string; final: boolean }) => [e.attempt, e.outcome, e.final])).toEqual([[2, 'succeeded', true]]);
  await until(async () => { const s = (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data; return s.success_count === 1 && s.next_retry === null; }, 10_000, 'counted once, no retry pending');
  expect(recv.requests).toHaveLength(1);
});

it('ends a parked retry whose attempt fails as its last: failed, counted once, on_failure run, a copy kept for replay', async () => {
  const recv = await bed.receivers.start({ failFirst: 100 });
  const topic = unique('t');
  const alerts = unique('alerts');
  const q = queueApi(bed.call);
  await q.create({ name: alerts, topic_filter: `${alerts}/#` });
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1, failure_threshold: 1000, disable_after: 86400, on_failure: { topic: `${alerts}/failed`, payload: 'failed: {{.error}}' } });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  await ddb().send(new UpdateCommand({
    TableName: tableName('meta'), Key: metaKeys.resource(bed.ns.name, 'WEBHOOK', w.name),
    UpdateExpression: 'SET health = :h', ExpressionAttributeValues: { ':h': { failing_since: Date.now() - 10_000, failed_attempts: 5, failures: 0, probe_until: Date.now() + 3000, last_error: 'HTTP 500' } },
  }));
  const message = newMessage(topic, 'last try');
  const run = await startRetry({ id, name: w.name }, message);
  const rec = await until(async () => { const r = await readDelivery(run.key); return r && r.outcome !== 'retrying' && r; }, 30_000, 'the delivery ended');
  expect(rec).toMatchObject({ outcome: 'failed', attempts: 2, error: 'HTTP 500' });
  expect(recv.requests).toHaveLength(1);
  const [hook] = await until(async () => { const m = await q.consume(alerts, { max_messages: 10 }); return m.length > 0 && m; }, 15_000, 'the on_failure hook');
  expect(hook.payload).toBe('failed: HTTP 500');
  await until(async () => { const s = (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data; return s.failure_count === 1 && s.next_retry === null; }, 10_000, 'counted once, no retry pending');
  expect((await bed.call('POST', `/webhooks/${w.name}/deliveries/${message.message_id}/replay`)).status).toBe(200);
  expect(run.transitions()).toBe(2);
});

it('starts the next execution when a parked retry fails with retries left, and a late copy of its job POSTs nothing', async () => {
  const recv = await bed.receivers.start({ failFirst: 100 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, failure_threshold: 1000, disable_after: 86400 });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  await ddb().send(new UpdateCommand({
    TableName: tableName('meta'), Key: metaKeys.resource(bed.ns.name, 'WEBHOOK', w.name),
    UpdateExpression: 'SET health = :h', ExpressionAttributeValues: { ':h': { failing_since: Date.now() - 10_000, failed_attempts: 5, failures: 0, probe_until: Date.now() + 2000, last_error: 'HTTP 500' } },
  }));
  const message = newMessage(topic, 'two more tries');
  const run = await startRetry({ id, name: w.name }, message);
  const rec = await until(async () => { const r = await readDelivery(run.key); return r && r.outcome !== 'retrying' && r; }, 60_000, 'the delivery ended');
  expect(rec).toMatchObject({ outcome: 'failed', attempts: 3 });
  expect(recv.requests).toHaveLength(2);
  const log = await until(async () => { const r = await bed.call('GET', `/webhooks/${w.name}/deliveries?message_id=${message.message_id}`); return r.body.data?.deliveries?.length >= 2 && r.body.data.deliveries; }, 10_000, 'the delivery log entries');
  expect(log.map((e: { attempt: number; final: boolean }) => [e.attempt, e.final])).toEqual([[3, true], [2, false]]);
  // A copy of the first queued job (SQS delivers at least once) arrives after the end: no POST.
  await enqueueJobs([{ namespace: bed.ns.name, webhook_id: id, webhook_name: w.name, message, retry: { attempts: 1, last_error: 'HTTP 500' } }]);
  await new Promise((r) => setTimeout(r, 3000));
  expect(recv.requests).toHaveLength(2);
  await until(async () => { const s = (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data; return s.failure_count === 1 && s.next_retry === null; }, 10_000, 'counted once, no retry pending');
});

it('drops a parked retry whose webhook was disabled meanwhile, as a first attempt is, giving its pending retry back', async () => {
  const recv = await bed.receivers.start({});
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, failure_threshold: 1000, disable_after: 86400 });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  // The probe is held 4 s (at the suite's time scale): the retry is parked and the webhook
  // disabled before it frees.
  await ddb().send(new UpdateCommand({
    TableName: tableName('meta'), Key: metaKeys.resource(bed.ns.name, 'WEBHOOK', w.name),
    UpdateExpression: 'SET health = :h', ExpressionAttributeValues: { ':h': { failing_since: Date.now() - 10_000, failed_attempts: 5, failures: 0, probe_until: Date.now() + scaled(4000), last_error: 'HTTP 500' } },
  }));
  const message = newMessage(topic, 'parked, then paused');
  const run = await startRetry({ id, name: w.name }, message);
  await until(async () => (await parkedJobs(bed.ns.name, id, 10)).jobs.length === 1, 5000, 'the retry parked');
  expect((await bed.call('PATCH', `/webhooks/${w.name}`, { enabled: false })).status).toBe(200);
  const rec = await until(async () => { const r = await readDelivery(run.key); return r && r.outcome !== 'retrying' && r; }, 20_000, 'the delivery ended');
  expect(rec).toMatchObject({ outcome: 'dropped' });
  expect(recv.requests).toHaveLength(0);
  expect((await parkedJobs(bed.ns.name, id, 10)).jobs).toHaveLength(0);
  await until(async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.next_retry === null, 10_000, 'no retry pending');
});

it('hands a retry held by max_in_flight back to the queue: its execution ends, and its attempt 2 goes once the place frees', async () => {
  const recv = await bed.receivers.start({ delayMs: 8000 });
  const topic = unique('t');
  const alerts = unique('alerts');
  const q = queueApi(bed.call);
  await q.create({ name: alerts, topic_filter: `${alerts}/#` });
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, timeout: 20, max_in_flight: 1, on_success: { topic: `${alerts}/ok`, payload: 'ok: {{.payload}}' } });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  // The one in-flight place: a delivery whose request stays open 8 s.
  expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'slow' })).status).toBe(201);
  await recv.waitFor(1, 20_000);
  const message = newMessage(topic, 'held');
  const run = await startRetry({ id, name: w.name }, message);
  await until(async () => bed.local.workflow.running === 0, 5000, 'the retry execution ended');
  expect(run.transitions()).toBe(2);
  expect(recv.requests).toHaveLength(1);
  const rec = await until(async () => { const r = await readDelivery(run.key); return r && r.outcome !== 'retrying' && r; }, 30_000, 'the held delivery ended');
  expect(rec).toMatchObject({ outcome: 'success', attempts: 2 });
  expect(recv.requests).toHaveLength(2);
  // Its hook runs where the attempt ended (the delivery function), once; the slow delivery's too.
  const hooks: string[] = [];
  await until(async () => { hooks.push(...(await q.consume(alerts, { max_messages: 10 })).map((m: { payload: string }) => m.payload)); return hooks.length >= 2; }, 15_000, 'the on_success hooks');
  await new Promise((r) => setTimeout(r, 1000));
  hooks.push(...(await q.consume(alerts, { max_messages: 10 })).map((m: { payload: string }) => m.payload));
  expect(hooks.sort()).toEqual(['ok: held', 'ok: slow']);
  await until(async () => { const s = (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data; return s.success_count === 2 && s.next_retry === null; }, 10_000, 'both counted, no retry pending');
});

it('ends the delivery of an execution whose SendMessage failed past its retries: failed, counted once, on_failure run', async () => {
  const topic = unique('t');
  const alerts = unique('alerts');
  const q = queueApi(bed.call);
  await q.create({ name: alerts, topic_filter: `${alerts}/#` });
  const recv = await bed.receivers.start({});
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1, on_failure: { topic: `${alerts}/failed`, payload: 'failed: {{.error}}' } });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  // The same ASL on a queue that does not exist: each SendMessage fails (fauxqs answers as SQS
  // does), the Queue state's retries run out (10 ms apart here), and the execution fails.
  const broken = new LocalRetryWorkflow(runAction, () => undefined, { queueUrl: `${bed.local.queueUrl}-missing`, retryIntervalMs: 10 });
  setRetryWorkflow(broken);
  // The stack counts failed deliveries by this log line (lib/constructs/webhook-delivery.ts).
  const message = newMessage(topic, 'never queued');
  const failedLines = () => [...warn.mock.calls, ...error.mock.calls].filter(([m, meta]) => m === DELIVERY_FAILED_LOG && (meta as { message_id?: string })?.message_id === message.message_id).length;
  const warn = jest.spyOn(logger, 'warn');
  const error = jest.spyOn(logger, 'error');
  try {
    const key = { namespace: bed.ns.name, webhookId: id, messageId: message.message_id };
    expect(await recordRetrying(key, { nextRetry: Date.now(), error: 'HTTP 500', now: Date.now(), queued: 1 })).toBe(true);
    const state: RetryState = { job: { namespace: bed.ns.name, webhook_id: id, webhook_name: w.name, message, retry: { attempts: 1, last_error: 'HTTP 500' } }, attempts: 1, wait_seconds: 0, last_error: 'HTTP 500', outcome: 'retry' };
    expect(await broken.start(executionName(id, message.message_id), state)).toBe('started');
    const [hook] = await until(async () => { const m = await q.consume(alerts, { max_messages: 10 }); return m.length > 0 && m; }, 30_000, 'the on_failure hook');
    expect(hook.payload).toMatch(/^failed: retry workflow failed .* after: HTTP 500$/);
    const rec = await until(async () => { const r = await readDelivery(key); return r?.ended && r; }, 10_000, 'the delivery record marked ended');
    expect(rec).toMatchObject({ outcome: 'failed', ended: true });
    expect(recv.requests).toHaveLength(0);
    // Wait, Queue and its 7 retries, each billed.
    expect(broken.transitions).toBe(9);
    await until(async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.failure_count === 1, 10_000, 'counted once');
    expect(failedLines()).toBe(1);
  } finally {
    warn.mockRestore();
    error.mockRestore();
    await broken.stop();
    setRetryWorkflow(bed.local.workflow);
  }
});
