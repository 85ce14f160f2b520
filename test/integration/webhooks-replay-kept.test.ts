/**
 * A delivery that ends in failure keeps what a bulk replay needs: its final entry in the delivery
 * log's pages (how the replay finds it) and its retained copy (what the replay sends). A write of
 * either that failed was logged and dropped, and the message was never replayed (the simulation's
 * `replay-never-delivered`). Now each is retried like the record, and a retained copy still not
 * written fails the job after its record: SQS hands it back, the record says the delivery ended
 * (no second POST), and the copy is written then. Faults are injected on the shared DynamoDB
 * client, in front of DynamoDB Local; the delivery runs on the local engines.
 */
import { until } from '../fixtures/receiver';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault, slowDynamoAnswers, type RecordedCall } from '../fixtures/dynamo-calls';
import { retainedPut } from '../fixtures/unkept-failure';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { getRetained } from '../../lambda/webhooks/storage/delivery-log';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { replayFailedSince } from '../../lambda/webhooks/replay';
import { enqueueJobs } from '../../lambda/webhooks/storage/delivery-queue';
import type { DeliveryJob } from '../../lambda/webhooks/rules/delivery';

jest.setTimeout(90_000);

// A failed job comes back after 10 s (the stack's visibility is 6 minutes), longer than a job
// whose writes are retried takes (about 3 s each): shorter, another copy would run beside it.
const bed = webhookTestbed('whrk', { visibilitySeconds: 10 });

// Matched on the request as the SDK sends it (the document client's names, marshalled or not).
const logPages = (c: RecordedCall) => /^BatchWrite(Item)?Command$/.test(c.command) && /"P#\d/.test(JSON.stringify(c.input.RequestItems ?? {}));

it.each([
  ['its retained copy failed once', retainedPut, 1],
  ['its log page failed once', logPages, 1],
  ['its retained copy failed beyond the retries', retainedPut, 8],
])('replays a failed delivery when the write of %s', async (_, when, times) => {
  // Answers 500 to the delivery, then 200 to its replay.
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
  const webhookId = (await getWebhook(bed.ns.name, w.name))!.id;
  const since = Date.now() - 1000;
  const fault = injectDynamoFault({ when, mode: 'before', times, name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } });
  fault.arm();
  try {
    const res = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'kept' });
    expect(res.status).toBe(201);
    const messageId = res.body.data.message_id as string;
    await recv.waitFor(1, 20_000);
    await until(async () => (await readDelivery({ namespace: bed.ns.name, webhookId, messageId }))?.outcome === 'failed', 20_000, 'the delivery recorded failed');
    await until(async () => fault.hits.length >= times, 30_000, `the fault met ${times} times`);
    await until(async () => (await getRetained(bed.ns.name, webhookId, messageId)) !== undefined, 30_000, 'the failed message kept for replay');
  } finally {
    fault.stop();
  }
  // The record said the delivery ended: the job handed back did not POST again.
  expect(recv.requests).toHaveLength(1);
  await afterIndexLag();
  let queued = 0;
  await until(async () => {
    queued += (await replayFailedSince(bed.ns.name, w.name, since, Date.now(), 10)).queued;
    return queued > 0;
  }, 20_000, 'the bulk replay found the failure');
  await recv.waitFor(2, 20_000);
  expect(recv.requests.map((r) => r.body.toString('utf8')).every((b) => b.includes('kept'))).toBe(true);
  // The entry the job run again wrote a second time is listed once. The list reads its pages
  // eventually consistently (docs/webhooks.md: an entry shows a moment after its attempt), so it
  // is read until the entry shows, then checked.
  const list = await until(async () => {
    const l = await bed.call('GET', `/webhooks/${w.name}/deliveries?status=failed`);
    return l.status !== 200 || (l.body.data.deliveries as { replay: boolean }[]).some((d) => !d.replay) ? l : undefined;
  }, 10_000, 'the failed delivery listed');
  expect(list.status).toBe(200);
  expect((list.body.data.deliveries as { replay: boolean }[]).filter((d) => !d.replay)).toHaveLength(1);
});

// A client that sees a failure counted in the status and replays at once finds it: the run writes
// the log's pages (where the bulk replay looks) before the counters (what the status shows), and
// the replay reads the pages strongly consistently. The page write lands 2 s late, as under load;
// the replay follows the count by well under the local DynamoDB's 1 s eventual-consistency lag.
it('replays a failure as soon as the status counts it', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
  const since = new Date(Date.now() - 1000).toISOString();
  const slow = slowDynamoAnswers({ when: logPages, ms: 2000, timing: 'before' });
  slow.arm();
  try {
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'counted' })).status).toBe(201);
    await until(async () => ((await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count ?? 0) >= 1, 30_000, 'the status counts the failure');
    const res = await bed.call('POST', `/webhooks/${w.name}/replay`, { since, status: 'failed' });
    expect(res.status).toBe(200);
    expect(res.body.data.queued).toBe(1);
  } finally {
    slow.stop();
  }
  await recv.waitFor(2, 20_000);
  expect(recv.requests[1].body.toString('utf8')).toContain('counted');
});

// A replay claims its POST (lambda/webhooks/replay-claim.ts) for longer than an invocation lasts.
// A run that failed after its claim and before its POST gives the claim back, so the job SQS hands
// out again delivers at once rather than after the claim lapsed (90 s).
it('delivers a replay whose run failed between its claim and its POST when the job comes back', async () => {
  const recv = await bed.receivers.start();
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0 });
  const webhookId = (await getWebhook(bed.ns.name, w.name))!.id;
  const id = unique('M');
  const job: DeliveryJob = {
    namespace: bed.ns.name, webhook_id: webhookId, webhook_name: w.name, replay_id: unique('R'),
    message: { message_id: id, topic: 'never/published', payload: 'again', content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 5 },
  };
  // The read of the replay's record after its claim fails past its retries: the run throws.
  const readsRecord = (c: RecordedCall) => /^Get(Item)?Command$/.test(c.command) && JSON.stringify(c.input.Key ?? {}).includes(`#DLV#${id}#REPLAY#`);
  const fault = injectDynamoFault({ when: readsRecord, mode: 'before', times: 4, name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } });
  fault.arm();
  try {
    await enqueueJobs([job]);
    // Visible again after 10 s; a claim kept would hold it 90 s.
    await recv.waitFor(1, 40_000);
  } finally {
    fault.stop();
  }
  expect(fault.hits).toHaveLength(4);
  await new Promise((r) => setTimeout(r, 1000));
  expect(recv.requests).toHaveLength(1);
});
