/**
 * Review of "a failure counted in the status (`failure_count`) is found by a bulk replay made at
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
import { getWebhook } from '../../lambda/storage/webhooks';
import { readDelivery } from '../../lambda/storage/webhook-deliveries';
import { enqueueJobs } from '../../lambda/adapters/delivery-queue';
import { sleep } from '../../lambda/domain/clock';
import type { DeliveryJob } from '../../lambda/domain/delivery';

jest.setTimeout(90_000);

// The job handed back comes again after 60 s: longer than this test looks.
const bed = webhookTestbed('whrc', { visibilitySeconds: 60 });

const retainedPut = (c: RecordedCall) => /^Put(Item)?Command$/.test(c.command) && JSON.stringify(c.input.Item ?? {}).includes('"#RETAINED"');
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
