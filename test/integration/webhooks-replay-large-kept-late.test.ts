/**
 * Checks "a failure counted in the status (`failure_count`) is found by a
 * bulk replay made at once" (docs/webhooks.md, bulk replay; docs/design/0022).
 *
 * Scenario: a message too large to travel in its job (over INLINE_JOB_LIMIT_BYTES, 200 KiB) is
 * stored apart and its job refers to it. Its delivery fails (retry_count 0) and its retained copy
 * is refused in its 6 tries (a DynamoDB blip of a few seconds). The record of the failure ends
 * the delivery and so releases the stored message; the job comes back 5 s later (batchItemFailures,
 * 5 s visibility), keepAgain cannot load the message ("nothing left to keep") and counts the
 * failure without a copy (webhooks/delivery-log.ts). The status counts it; a bulk replay made at
 * once finds nothing to queue, and the single replay answers 404.
 *
 * Expected: counted and queued by the bulk replay (1 and 1). Observed: counted, queued 0.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { INLINE_JOB_LIMIT_BYTES } from '../../lambda/webhooks/rules/delivery-jobs';
import { loadWebhookMessage } from '../../lambda/webhooks/storage/webhook-messages';

jest.setTimeout(90_000);

const bed = webhookTestbed('r12stored', { visibilitySeconds: 60 });

const retainedPut = (c: RecordedCall) => /^Put(Item)?Command$/.test(c.command) && JSON.stringify(c.input.Item ?? {}).includes('"#RETAINED"');

it('a large message whose failure was kept late is found by a bulk replay made once it is counted', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
  const since = new Date(Date.now() - 1000).toISOString();
  const fault = injectDynamoFault({ when: retainedPut, mode: 'before', times: 6, name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } });
  fault.arm();
  let queued: number | undefined;
  let storedLeft: boolean | undefined;
  try {
    const res = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'x'.repeat(INLINE_JOB_LIMIT_BYTES + 1024) });
    expect(res.status).toBe(201);
    await until(async () => ((await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count ?? 0) >= 1, 30_000, 'the status counts the failure');
    // Held while its copy was not kept, the stored message is released by the run that kept it (no leak).
    storedLeft = await loadWebhookMessage(bed.ns.name, res.body.data.message_id).then(() => true, () => false);
    queued = (await bed.call('POST', `/webhooks/${w.name}/replay`, { since, status: 'failed' })).body?.data?.queued;
  } finally {
    fault.stop();
  }
  expect(fault.hits).toHaveLength(6);
  expect({ posts: recv.requests.length, queued, storedLeft }).toEqual({ posts: 1, queued: 1, storedLeft: false });
});
