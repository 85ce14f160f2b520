/**
 * Promises checked: "a
 * failure counted in a webhook's status is one a bulk replay made at once finds; none counted
 * twice, none lost; a job that comes back after a failed keep makes no second POST"
 * (docs/webhooks.md, docs/design/0022), through SQS's own rounds (lambda/webhooks/delivery-batch.ts:
 * batchItemFailures and a 5 s visibility, lambda/webhooks/storage/delivery-queue.ts `visibleAgainAfter`).
 *
 * 1. A partial batch: one publish reaches two webhooks, so one batch holds a job whose retained copy
 *    is refused (reported failed, visibility 5 s) and one that succeeds (deleted): the success is
 *    POSTed once, the failure counted once and POSTed once.
 * 2. The visibility change itself fails (every attempt of the handler's ChangeMessageVisibilityBatch,
 *    injected in SQS): the job comes back after the queue's visibility timeout instead, and is
 *    still counted once with no second POST.
 * 3. The retry workflow path (a failure with retries left): the last retry's retained copy is refused,
 *    the Attempt Task throws (lambda/handlers/webhook-attempt.ts) and its Retry runs it again: it
 *    reads the record, keeps the copy and counts the failure once, with no third POST.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault } from '../fixtures/dynamo-calls';
import { retainedPut } from '../fixtures/unkept-failure';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { sleep } from '../../lambda/core/rules/clock';
import { FaultInjector } from './injector';

jest.setTimeout(120_000);

// A job whose visibility is not changed comes back after 15 s.
const bed = webhookTestbed('r12keep', { visibilitySeconds: 15 });
const injector = new FaultInjector(1212);
beforeAll(() => injector.attach(sqsClient(), 'sqs'));
afterEach(() => injector.clearOneShots());

const unavailable = { name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } };
const status = async (name: string) => (await bed.call('GET', `/webhooks/${name}/status`)).body?.data;

it('a batch where one job fails the keep and another succeeds: the success is POSTed once, the failure counted once with no second POST', async () => {
  const failing = await bed.receivers.start({ failFirst: 1 });
  const fine = await bed.receivers.start();
  const topic = unique('t');
  const wf = await createWebhook(bed.call, { url: failing.url, topic_filter: topic, retry_count: 0 });
  const ws = await createWebhook(bed.call, { url: fine.url, topic_filter: topic, retry_count: 0 });
  const since = new Date(Date.now() - 1000).toISOString();
  const fault = injectDynamoFault({ when: retainedPut, mode: 'before', times: 6, ...unavailable });
  fault.arm();
  try {
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'mixed' })).status).toBe(201);
    await until(async () => (await status(wf.name))?.failure_count >= 1, 40_000, 'the failure counted');
  } finally {
    fault.stop();
  }
  expect(fault.hits).toHaveLength(6);
  // The rerun (5 s later) and any copy have had time to POST again: they must not.
  await sleep(6000);
  const f = await status(wf.name);
  const s = await status(ws.name);
  expect({ failures: f.failure_count, successes: s.success_count, finePosts: fine.requests.length, failingPosts: failing.requests.length }).toEqual({ failures: 1, successes: 1, finePosts: 1, failingPosts: 1 });
  // And a bulk replay made now finds it.
  expect((await bed.call('POST', `/webhooks/${wf.name}/replay`, { since, status: 'failed' })).body?.data?.queued).toBe(1);
});

it('a job whose visibility change fails comes back after the queue visibility and is counted once, with no second POST', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
  const fault = injectDynamoFault({ when: retainedPut, mode: 'before', times: 6, ...unavailable });
  // Only the handler's change (5 s); the event source's own renewals use the queue's 15 s.
  injector.failNext({
    service: 'sqs', command: 'ChangeMessageVisibilityBatchCommand', kind: { code: 'InternalError', status: 500 }, timing: 'before', attempts: Infinity,
    matches: (input) => ((input.Entries as { VisibilityTimeout?: number }[] | undefined) ?? []).some((e) => e.VisibilityTimeout === 5),
  });
  fault.arm();
  const t0 = Date.now();
  try {
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'unchanged' })).status).toBe(201);
    await until(async () => (await status(w.name))?.failure_count >= 1, 60_000, 'the failure counted');
  } finally {
    fault.stop();
  }
  const tookMs = Date.now() - t0;
  expect(injector.unused).toBe(0);
  await sleep(6000);
  expect({ failures: (await status(w.name)).failure_count, posts: recv.requests.length }).toEqual({ failures: 1, posts: 1 });
  // Came back after the queue's 15 s, not the 5 s the failed change asked for.
  expect(tookMs).toBeGreaterThan(14_000);
});

it('a failure ended by the retry workflow whose retained copy is refused is counted once when the Task runs again, with no extra POST', async () => {
  const recv = await bed.receivers.start({ failFirst: 2 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1 });
  const since = new Date(Date.now() - 1000).toISOString();
  const fault = injectDynamoFault({ when: retainedPut, mode: 'before', times: 6, ...unavailable });
  fault.arm();
  try {
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'retried' })).status).toBe(201);
    await until(async () => (await status(w.name))?.failure_count >= 1, 60_000, 'the failure counted');
  } finally {
    fault.stop();
  }
  expect(fault.hits).toHaveLength(6);
  expect((await bed.call('POST', `/webhooks/${w.name}/replay`, { since, status: 'failed' })).body?.data?.queued).toBe(1);
  await sleep(6000);
  // Two POSTs of the delivery (attempt 1 and its retry) and the replay's third.
  expect({ failures: (await status(w.name)).failure_count, posts: recv.requests.length }).toEqual({ failures: 1, posts: 3 });
});
