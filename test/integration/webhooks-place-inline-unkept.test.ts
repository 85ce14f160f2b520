/**
 * A delivery handed an in-flight place runs in the batch that gave the place back
 * (lambda/webhooks/place-wait.ts InlineRuns), not through the queue. When it ends in failure and
 * its retained copy cannot be written (flush.ts answers it unkept), the batch cannot hand it back
 * to SQS as it does its own records: it is out of the waiting ones once its run ended. It is put
 * back on the queue (lambda/webhooks/delivery-batch.ts `requeueUnkept`), runs again, finds its
 * record (no second POST), keeps the copy and counts the failure once.
 */
import { startReceiver, until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';

jest.setTimeout(120_000);

const bed = webhookTestbed('wpinunkept');

const retainedPut = (c: RecordedCall) => /^Put(Item)?Command$/.test(c.command) && JSON.stringify(c.input.Item ?? {}).includes('"#RETAINED"');

it('a handed delivery run in the batch that fails and whose retained copy is not written is counted once, POSTed once', async () => {
  // The first request holds the only place for 3 s and succeeds; the second, handed that place, fails.
  const rx = await startReceiver({ delayMs: (_, n) => (n === 1 ? 3000 : 0), status: (_, n) => (n === 1 ? 200 : 500) });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 1 });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    const first = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'busy' });
    expect(first.status).toBe(201);
    await rx.waitFor(1, 20_000);
    // webhooks/delivery-log.ts LOG_RETRIES: 6 tries of the retained copy, all refused.
    const fault = injectDynamoFault({ when: retainedPut, mode: 'before', times: 6, name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } });
    fault.arm();
    let id: string;
    try {
      const second = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'handed' });
      expect(second.status).toBe(201);
      id = second.body.data.message_id;
      await rx.waitFor(2, 30_000);
      await until(async () => (await readDelivery({ namespace: bed.ns.name, webhookId: stored.id, messageId: id }))?.outcome === 'failed', 20_000, 'the delivery recorded failed');
      await until(async () => fault.hits.length >= 6, 20_000, 'the retained copy refused 6 times');
    } finally {
      fault.stop();
    }
    const failures = async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count ?? 0;
    const counted = await until(async () => (await failures()) >= 1, 40_000, 'the failure counted').then(() => true, () => false);
    const rec = await readDelivery({ namespace: bed.ns.name, webhookId: stored.id, messageId: id });
    expect({ counted, failure_count: await failures(), uncountedNote: rec?.uncounted !== undefined, posts: rx.requests.length }).toEqual({ counted: true, failure_count: 1, uncountedNote: false, posts: 2 });
  } finally {
    await rx.close();
  }
});
