/**
 * Checks "a failure counted in the status (`failure_count`) is found by a bulk replay made at
 * once" (docs/webhooks.md, docs/design/0022): the run writes its log pages before its counters,
 * but it writes the counters whatever became of the pages and of the retained copy. When those
 * writes fail past their retries (a DynamoDB throttle or outage of a few seconds), the job is
 * failed to run again later (SQS visibility), yet the status counts the failure now: a client that
 * reads `failure_count` and replays at once queues nothing. Faults are injected on the shared
 * DynamoDB client in front of DynamoDB Local; the delivery runs on the local engines.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { retainedPut } from '../fixtures/unkept-failure';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { DELIVERY_MAX_RECEIVE_COUNT, enqueueJobs } from '../../lambda/webhooks/storage/delivery-queue';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { DeleteMessageCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { sleep } from '../../lambda/core/rules/clock';
import type { DeliveryJob } from '../../lambda/webhooks/rules/delivery';
import { keyOf } from '../../lambda/webhooks/delivery-key';

jest.setTimeout(90_000);

// The job handed back comes again after 60 s: longer than this test looks.
const bed = webhookTestbed('whrc', { visibilitySeconds: 60 });

const logPages = (c: RecordedCall) => /^BatchWrite(Item)?Command$/.test(c.command) && /"P#\d/.test(JSON.stringify(c.input.RequestItems ?? {}));

it.each([
  // storage/delivery-log.ts flushLog: 4 rounds of BatchWriteItem.
  ['its log page could not be written in its 4 rounds', logPages, 4],
  // webhooks/delivery-log.ts LOG_RETRIES: 6 tries.
  ['its retained copy could not be written in its 6 tries', retainedPut, 6],
])('a failure the status counts is replayed at once when %s', async (_, when, times) => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
  const since = new Date(Date.now() - 1000).toISOString();
  const fault = injectDynamoFault({ when, mode: 'before', times, name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } });
  fault.arm();
  let queued: number;
  try {
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'counted' })).status).toBe(201);
    await until(async () => ((await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count ?? 0) >= 1, 30_000, 'the status counts the failure');
    const res = await bed.call('POST', `/webhooks/${w.name}/replay`, { since, status: 'failed' });
    expect(res.status).toBe(200);
    queued = res.body.data.queued;
  } finally {
    fault.stop();
  }
  expect(fault.hits).toHaveLength(times);
  expect(queued).toBe(1);
  // Counted once: the run that kept it counted it, not the first run too, nor a later one.
  await sleep(6000);
  expect((await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count).toBe(1);
});

// The rounds are SQS's own (a 5 s visibility, then the redrive policy): a failure whose page is
// never written is received DELIVERY_MAX_RECEIVE_COUNT times, then waits in the DLQ uncounted,
// its note on its record; sent back to the delivery queue (the console's "Start DLQ redrive"),
// it is kept and counted once, without a second POST.
it('a failure never kept waits in the DLQ after the queue\'s receives, uncounted, and is counted once when redriven', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
  const since = new Date(Date.now() - 1000).toISOString();
  const fault = injectDynamoFault({ when: logPages, mode: 'before', times: 1000, name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } });
  fault.arm();
  let dead: Message | undefined;
  try {
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'dead' })).status).toBe(201);
    await until(async () => {
      const out = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: bed.local.deadLetterQueueUrl, WaitTimeSeconds: 1, MaxNumberOfMessages: 1 }));
      dead = out.Messages?.[0];
      return dead;
    }, 120_000, 'the job in the DLQ');
  } finally {
    fault.stop();
  }
  // 4 rounds of BatchWriteItem a receive (storage/delivery-log.ts flushLog).
  expect(fault.hits).toHaveLength(4 * DELIVERY_MAX_RECEIVE_COUNT);
  const job = JSON.parse(dead!.Body!) as DeliveryJob;
  const key = keyOf(job);
  expect((await readDelivery(key))?.uncounted).toBeDefined();
  expect((await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count ?? 0).toBe(0);
  await enqueueJobs([job]);
  await sqsClient().send(new DeleteMessageCommand({ QueueUrl: bed.local.deadLetterQueueUrl, ReceiptHandle: dead!.ReceiptHandle }));
  await until(async () => ((await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count ?? 0) >= 1, 30_000, 'the redriven job counts the failure');
  // POSTed once: the receives and the redrive read the record, they did not deliver again.
  expect(recv.requests).toHaveLength(1);
  expect((await bed.call('POST', `/webhooks/${w.name}/replay`, { since, status: 'failed' })).body?.data?.queued).toBe(1);
  await sleep(6000);
  expect((await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count).toBe(1);
  expect((await readDelivery(key))?.uncounted).toBeUndefined();
}, 180_000);

// Held: a replay that fails again is counted again, and a bulk replay made at once queues it again.
it('a replay that failed again and is counted again is replayed again at once', async () => {
  const recv = await bed.receivers.start({ failFirst: 2 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
  const since = new Date(Date.now() - 1000).toISOString();
  const failures = async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count ?? 0;
  const replay = async () => (await bed.call('POST', `/webhooks/${w.name}/replay`, { since, status: 'failed' })).body?.data?.queued;
  expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'twice' })).status).toBe(201);
  await until(async () => (await failures()) >= 1, 30_000, 'the first failure counted');
  expect(await replay()).toBe(1);
  await until(async () => (await failures()) >= 2, 30_000, "the replay's failure counted");
  expect(await replay()).toBe(1);
  await recv.waitFor(3, 20_000);
});

// SQS hands one job to two invocations at once (at-least-once delivery,
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues-at-least-once-delivery.html):
// the failure is one delivery, counted once, and replayed once.
it('a first delivery job received twice at once counts its failure once, as many as a bulk replay queues', async () => {
  const recv = await bed.receivers.start({ failFirst: 2 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
  const webhookId = (await getWebhook(bed.ns.name, w.name))!.id;
  const since = new Date(Date.now() - 1000).toISOString();
  const id = unique('M');
  const job: DeliveryJob = {
    namespace: bed.ns.name, webhook_id: webhookId, webhook_name: w.name,
    message: { message_id: id, topic, payload: 'dup', content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 3 },
  };
  await enqueueJobs([job, job]);
  await until(async () => (await readDelivery({ namespace: bed.ns.name, webhookId, messageId: id }))?.outcome === 'failed', 20_000, 'the delivery recorded failed');
  await sleep(3000); // both copies done
  const failures = (await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count;
  const queued = (await bed.call('POST', `/webhooks/${w.name}/replay`, { since, status: 'failed' })).body?.data?.queued;
  expect({ failures, queued }).toEqual({ failures: 1, queued: 1 });
});
