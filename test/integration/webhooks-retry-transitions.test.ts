/**
 * What Step Functions bills per retried delivery, on the local runner of the stack's ASL (real
 * waits, its SQS Task a real SendMessage on fauxqs): the workflow only waits out the backoff and
 * puts the retry job on the delivery queue, so a retry costs its Wait and its Queue state, 2
 * transitions, and a delivery retried twice 4 (issue 34's target: at most 6).
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/storage/webhooks';
import { readDelivery } from '../../lambda/storage/webhook-deliveries';

jest.setTimeout(90_000);

const bed = webhookTestbed('whtrans');

it('bills 2 transitions per retry: a delivery failing all of its 3 attempts costs 4 (at most 6)', async () => {
  const recv = await bed.receivers.start({ failFirst: 100 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, failure_threshold: 1000, disable_after: 86400 });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  const before = bed.local.workflow.transitions;
  const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'retried twice' });
  expect(published.status).toBe(201);
  const key = { namespace: bed.ns.name, webhookId: id, messageId: published.body.data.message_id };
  const rec = await until(async () => { const r = await readDelivery(key); return r && r.outcome !== 'retrying' && r; }, 60_000, 'the delivery ended');
  expect(rec).toMatchObject({ outcome: 'failed', attempts: 3 });
  expect(recv.requests).toHaveLength(3);
  await until(async () => bed.local.workflow.running === 0, 10_000, 'the executions ended');
  const transitions = bed.local.workflow.transitions - before;
  expect(transitions).toBeLessThanOrEqual(6);
  expect(transitions).toBe(4);
});
