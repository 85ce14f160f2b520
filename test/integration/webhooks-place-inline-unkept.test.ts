/**
 * A delivery handed an in-flight place runs in the batch that gave the place back
 * (lambda/webhooks/place-wait.ts InlineRuns), not through the queue. When it ends in failure and
 * its retained copy cannot be written (flush.ts answers it unkept), the batch cannot hand it back
 * to SQS as it does its own records: it is out of the waiting ones once its run ended. It is put
 * back on the queue (lambda/webhooks/delivery-batch.ts `requeueUnkept`), runs again, finds its
 * record (no second POST), keeps the copy and counts the failure once.
 */
import { startReceiver } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { failedUnkept, failureCounted, refuseRetainedCopy } from '../fixtures/unkept-failure';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';

jest.setTimeout(120_000);

const bed = webhookTestbed('wpinunkept');

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
    const fault = refuseRetainedCopy();
    let id: string;
    try {
      const second = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'handed' });
      expect(second.status).toBe(201);
      id = second.body.data.message_id;
      await rx.waitFor(2, 30_000);
      await failedUnkept({ namespace: bed.ns.name, webhookId: stored.id, messageId: id }, fault);
    } finally {
      fault.stop();
    }
    const seen = await failureCounted(bed, w.name, { namespace: bed.ns.name, webhookId: stored.id, messageId: id });
    expect({ ...seen, posts: rx.requests.length }).toEqual({ counted: true, failure_count: 1, uncountedNote: false, posts: 2 });
  } finally {
    await rx.close();
  }
});
