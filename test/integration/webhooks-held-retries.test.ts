/**
 * A retry held back by the webhook's limits does not loop in its Step Functions execution without
 * bound (a Standard execution fails at 25,000 history events, leaving the delivery `retrying`):
 * after MAX_HELD_ROUNDS rounds it ends as failed, counted, with its on_failure hook and a copy kept
 * for replay. The execution starts one round short of the bound, on the local workflow (the
 * stack's ASL), while the webhook's one in-flight place is held by a slow request. And an
 * execution that fails all the same (a Task failing past its retries where no Catch applies) is
 * caught outside it: the delivery still ends, with its on_failure hook.
 */
import { until } from '../fixtures/receiver';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/storage/webhooks';
import { readDelivery } from '../../lambda/storage/webhook-deliveries';
import { executionName, retryWorkflow } from '../../lambda/adapters/retry-workflow';
import { MAX_HELD_ROUNDS, type RetryState } from '../../lambda/domain/delivery';
import type { PublishedMessage } from '../../lambda/domain/message';

jest.setTimeout(90_000);

const bed = webhookTestbed('whheld');

it('ends a retry held back by max_in_flight for MAX_HELD_ROUNDS rounds as failed, with on_failure and a replay copy', async () => {
  const recv = await bed.receivers.start({ delayMs: 15_000 });
  const topic = unique('t');
  const alerts = unique('alerts');
  const q = queueApi(bed.call);
  await q.create({ name: alerts, topic_filter: `${alerts}/#` });
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 3, timeout: 20, max_in_flight: 1, on_failure: { topic: `${alerts}/failed`, payload: 'failed: {{.error}}' } });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  // The one in-flight place: a delivery whose request stays open 15 s.
  expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'slow' })).status).toBe(201);
  await recv.waitFor(1, 20_000);
  const message: PublishedMessage = { message_id: unique('held'), topic, payload: 'held', content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 4 };
  const state: RetryState = {
    job: { namespace: bed.ns.name, webhook_id: id, webhook_name: w.name, message },
    attempts: 1,
    wait_seconds: 0,
    last_error: 'HTTP 500',
    outcome: 'retry',
    held: MAX_HELD_ROUNDS - 1,
  };
  expect(await retryWorkflow().start(executionName(id, message.message_id), state)).toBe('started');
  const key = { namespace: bed.ns.name, webhookId: id, messageId: message.message_id };
  const rec = await until(async () => { const r = await readDelivery(key); return r && r.outcome !== 'retrying' && r; }, 10_000, 'the held delivery ended');
  expect(rec).toMatchObject({ outcome: 'failed' });
  expect(rec.error).toMatch(/held back by the webhook's max_in_flight/);
  // Ended before the slow request freed the place: never POSTed.
  expect(recv.requests).toHaveLength(1);
  const [hook] = await until(async () => { const m = await q.consume(alerts, { max_messages: 10 }); return m.length > 0 && m; }, 15_000, 'the on_failure hook');
  expect(hook.payload).toMatch(/^failed: held back/);
  expect((await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.failure_count).toBe(1);
  expect((await bed.call('POST', `/webhooks/${w.name}/deliveries/${message.message_id}/replay`)).status).toBe(200);
});

it('runs the on_failure hook of a delivery whose execution failed (Finish failing past its retries, uncaught in the ASL)', async () => {
  const topic = unique('t');
  const alerts = unique('alerts');
  const q = queueApi(bed.call);
  await q.create({ name: alerts, topic_filter: `${alerts}/#` });
  let arm = () => undefined as void;
  // Attempt 1 (the delivery function) and attempt 2 (the workflow's Attempt) fail; from the second
  // request on, the record reads of Finish and its three Task retries fail, and the execution with them.
  const recv = await bed.receivers.start({ failFirst: 100, onRequest: (_r, n) => n === 2 && arm() });
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1, on_failure: { topic: `${alerts}/failed`, payload: 'failed: {{.error}}' } });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  const readsRecord = (c: RecordedCall) => /^Get(Item)?Command$/.test(c.command) && JSON.stringify(c.input.Key ?? {}).includes(`${id}#DLV#`);
  const f = injectDynamoFault({ when: readsRecord, mode: 'before', times: 4, name: 'ValidationException' });
  arm = () => f.arm();
  try {
    const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'doomed' });
    expect(published.status).toBe(201);
    const [hook] = await until(async () => { const m = await q.consume(alerts, { max_messages: 10 }); return m.length > 0 && m; }, 60_000, 'the on_failure hook');
    expect(hook.payload).toBe('failed: HTTP 500');
    expect(f.hits).toHaveLength(4);
    // The hook's message is published before the record is marked ended (the mark follows the
    // publish), so a consumer can see the hook a moment before the mark: wait for it.
    const key = { namespace: bed.ns.name, webhookId: id, messageId: published.body.data.message_id };
    const rec = await until(async () => { const r = await readDelivery(key); return r?.ended && r; }, 10_000, 'the delivery record marked ended');
    expect(rec).toMatchObject({ outcome: 'failed', ended: true });
    expect(recv.requests).toHaveLength(2);
  } finally {
    f.stop();
  }
});

