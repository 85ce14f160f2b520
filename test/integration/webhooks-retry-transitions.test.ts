/**
 * What Step Functions bills per retried delivery, on the local runner of the stack's ASL (real
 * waits, its SQS Task a real SendMessage on fauxqs): the workflow only waits out the backoff and
 * puts the retry job on the delivery queue, so a retry costs its Wait and its Queue state, 2
 * transitions, and a delivery retried twice 4 (docs/performance.md: at most 6). And the job it puts
 * there is the job it was given: a JSON body the delivery function reads (quotes, backslashes and
 * newlines of a payload escaped, the ASCII JSON the starter made of it), in its namespace's group.
 */
import { randomUUID } from 'node:crypto';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import type { RetryState } from '../../lambda/webhooks/rules/delivery';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalRetryWorkflow } from '../../local/stepfunctions';

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

/** A payload every JSON publisher sends: quotes, a backslash, a newline, a tab, non-ASCII. */
const JSON_PAYLOAD = '{"order":"A-1","note":"say \\"hi\\"\\\\n","lines":["a\\tb"],"é":"\\u00e9"}\n';

it('puts the retry job on the queue as it was given, a JSON body in the namespace\'s message group', async () => {
  const q = await ensureDeliveryQueues(`retry-send-${randomUUID()}`);
  const workflow = new LocalRetryWorkflow(async () => undefined, () => undefined, { queueUrl: q.url });
  const job = {
    namespace: 'ns-a', webhook_id: 'w1', webhook_name: 'w',
    message: { message_id: 'M1', topic: 't', payload: JSON_PAYLOAD, content_type: 'application/json', properties: { k: 'a "b" \\ c' }, published_at: 1, size: JSON_PAYLOAD.length },
    retry: { attempts: 1, last_error: 'HTTP 500: "down"' },
  };
  const state: RetryState = { job, attempts: 1, wait_seconds: 0, last_error: 'HTTP 500', outcome: 'retry' };
  try {
    expect(await workflow.start('send-as-given', state)).toBe('started');
    const got = await until(async () => {
      const out = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: q.url, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['MessageGroupId'] }));
      return out.Messages?.[0];
    }, 20_000, 'the retry job on the queue');
    expect(JSON.parse(got.Body!)).toEqual(job);
    expect(got.Attributes?.MessageGroupId).toBe('ns-a');
  } finally {
    await workflow.stop();
  }
});

it('attempts a retry of a JSON payload (its record already says retrying) and ends it, the same body each time', async () => {
  const recv = await bed.receivers.start({ failFirst: 100 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, failure_threshold: 1000, disable_after: 86400 });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: JSON_PAYLOAD, content_type: 'application/json' });
  expect(published.status).toBe(201);
  const key = { namespace: bed.ns.name, webhookId: id, messageId: published.body.data.message_id };
  const rec = await until(async () => { const r = await readDelivery(key); return r && r.outcome !== 'retrying' && r; }, 60_000, 'the delivery ended');
  expect(rec).toMatchObject({ outcome: 'failed', attempts: 3 });
  expect(recv.requests).toHaveLength(3);
  expect(recv.requests[0].body.toString('utf8')).toContain('A-1');
  for (const r of recv.requests) expect(r.body.toString('utf8')).toBe(recv.requests[0].body.toString('utf8'));
});
