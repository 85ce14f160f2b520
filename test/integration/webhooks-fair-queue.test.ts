/**
 * Fairness between namespaces from SQS fair queues (local/fair-queues.ts): every delivery job
 * carries its namespace as MessageGroupId, and the local event source hands quiet groups'
 * messages out before a noisy group's, as AWS documents. With the per-namespace share out of the
 * way (a share no namespace reaches), a namespace whose backlog holds every delivery batch with a
 * 5 s receiver does not make another namespace's 0 ms webhook wait for the whole backlog: its jobs
 * take the first batch that frees up.
 *
 * Timing-robust: not a latency bound on a loaded machine but an order. The delivery mapping's
 * maximum concurrency is 8 here (the stack's `webhookDeliveryConcurrency` set low), so the noisy
 * backlog of 200 jobs holds every batch: once the pollers reached 8, every one is held 5 s by the
 * noisy receiver, and the backlog takes three rounds. In arrival order the quiet jobs, published
 * during the first round, would come after all 200; handed out fairly they go in the second round,
 * before the noisy receiver has seen 161.
 */
import { resetConfig } from '../../lambda/core/config';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { createWebhook } from '../fixtures/webhooks';
import { createTestNamespace } from '../fixtures/namespace';
import { client } from '../fixtures/http';
import { until } from '../fixtures/receiver';

jest.setTimeout(120_000);

// No namespace reaches this share: the fairness seen here is the fair queue's alone.
process.env.MSG_WEBHOOK_NAMESPACE_SHARE = '100000';
resetConfig();
afterAll(() => {
  delete process.env.MSG_WEBHOOK_NAMESPACE_SHARE;
  resetConfig();
});

const bed = webhookTestbed('fairnoisy', { maxConcurrency: 8 });
const NOISY_N = 200;
const QUIET_N = 10;

describe('fair queue', () => {
  it("delivers a quiet namespace's 0 ms webhook in the first free batch, not after a noisy namespace's 5 s backlog", async () => {
    let noisyAtQuiet = -1;
    const noisy = await bed.receivers.start({ delayMs: 5000 });
    const quiet = await bed.receivers.start({
      onRequest: (_, n) => {
        if (n === QUIET_N) noisyAtQuiet = noisy.requests.length;
      },
    });
    const other = await createTestNamespace('fairquiet');
    const call2 = client(bed.server.baseUrl, other.key);
    await createWebhook(bed.call, { url: noisy.url, topic_filter: 'fair/noisy', retry_count: 0, timeout: 15 });
    await createWebhook(call2, { url: quiet.url, topic_filter: 'fair/quiet', retry_count: 0 });

    for (let i = 0; i < NOISY_N; i += 50) {
      const res = await bed.call('POST', '/topics/fair/noisy/messages/batch', { messages: Array.from({ length: 50 }, (_, j) => ({ payload: `{"i":${i + j}}` })) });
      expect(res.status).toBe(201);
    }
    // The first round holds every batch of the event source.
    await until(async () => noisy.requests.length >= 60, 30_000, 'the noisy backlog holding the delivery batches');
    const res = await call2('POST', '/topics/fair/quiet/messages/batch', { messages: Array.from({ length: QUIET_N }, (_, j) => ({ payload: `{"q":${j}}` })) });
    expect(res.status).toBe(201);

    await quiet.waitFor(QUIET_N, 40_000);
    expect(noisyAtQuiet).toBeGreaterThan(0);
    expect(noisyAtQuiet).toBeLessThanOrEqual(160);
    // Nothing of the noisy namespace is lost: it is only served after.
    await noisy.waitFor(NOISY_N, 60_000);
    await until(async () => bed.local.events.busy === 0, 30_000, 'the last noisy batches answered');
  });
});
