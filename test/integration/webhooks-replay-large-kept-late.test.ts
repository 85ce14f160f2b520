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
 *
 * The same holds for a delivery a failed retry execution ends (GiveUp, the rule on failed
 * executions): a read of its stored message that keeps failing there fails the run before
 * anything is recorded or released, and the run made again keeps the copy and counts it once.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault } from '../fixtures/dynamo-calls';
import { retainedPut } from '../fixtures/unkept-failure';
import { INLINE_JOB_LIMIT_BYTES } from '../../lambda/webhooks/rules/delivery-jobs';
import { loadWebhookMessage } from '../../lambda/webhooks/storage/webhook-messages';
import { setRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import { runAction } from '../../lambda/handlers/webhook-attempt';
import { LocalRetryWorkflow } from '../../local/stepfunctions';

jest.setTimeout(90_000);

const bed = webhookTestbed('r12stored', { visibilitySeconds: 60 });

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

it('a large message given up by a failed retry execution whose read keeps failing there is counted once and found by a bulk replay', async () => {
  let posted = false;
  const recv = await bed.receivers.start({ status: 500, onRequest: () => (posted = true) });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1, timeout: 5 });
  // A retry workflow whose SendMessage always fails: the execution fails and GiveUp ends the delivery.
  const broken = new LocalRetryWorkflow(runAction, () => undefined, { queueUrl: `${bed.local.queueUrl}-missing`, retryIntervalMs: 10 });
  setRetryWorkflow(broken);
  // Once the attempt was POSTed, GiveUp's reads of the stored message are throttled 7 times: past
  // the 6 tries of one run, so the run fails and the runner makes it again.
  const pk = `NS#${bed.ns.name}#WHMSG#`;
  const fault = injectDynamoFault({ when: (c) => posted && /^Get(Item)?Command$/.test(c.command) && String(c.input.Key?.pk ?? '').startsWith(pk), mode: 'before', times: 7, name: 'ProvisionedThroughputExceededException' });
  fault.arm();
  try {
    const since = new Date(Date.now() - 1000).toISOString();
    const res = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'x'.repeat(INLINE_JOB_LIMIT_BYTES + 1024) });
    expect(res.status).toBe(201);
    await until(async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.failure_count >= 1, 30_000, 'the given-up delivery counted');
    const queued = (await bed.call('POST', `/webhooks/${w.name}/replay`, { since, status: 'failed' })).body.data.queued;
    const counted = (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.failure_count;
    expect({ queued, counted, reads: fault.hits.length }).toEqual({ queued: 1, counted: 1, reads: 7 });
  } finally {
    fault.stop();
    await broken.stop();
    setRetryWorkflow(bed.local.workflow);
  }
});
