/**
 * Fairness between namespaces from the delivery queue's fair queue (MessageGroupId per namespace,
 * emulated locally by local/fair-queue.ts): beside another namespace's backlog to a 5 s receiver,
 * a 0 ms webhook's p99 publish-to-request stays within twice its p99 alone (the target).
 * The fast webhook is offered the same steady load (one publish every 200 ms) in both phases;
 * the slow namespace's backlog is published just before, so it is queued ahead of every fast job.
 *
 * With the deployment's per-namespace share (lambda/webhooks/share.ts). FAIR_TEST_SHARE=1000 sets
 * it out of reach (above the local event source's 80 jobs in flight) to measure the fair queue
 * alone, which does not hold the target: docs/performance.md "Fair queue beside a slow namespace".
 */
if (process.env.FAIR_TEST_SHARE) process.env.MSG_WEBHOOK_NAMESPACE_SHARE = process.env.FAIR_TEST_SHARE;
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { client } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { createWebhook } from '../fixtures/webhooks';
import type { Receiver } from '../fixtures/receiver';

jest.setTimeout(150_000);

const bed = webhookTestbed('fairslow');
const FAST_N = 40;
const EVERY_MS = 200;
const SLOW_N = 200;

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.99) - 1];
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.5) - 1];

/** Publish-to-request of each of the receiver's requests from index `from` (the publish time rides in the payload). */
const latencies = (r: Receiver, from: number) =>
  r.requests.slice(from).map((q) => q.at - (JSON.parse(JSON.parse(q.body.toString()).payload) as { t: number }).t);

describe('fair queue between namespaces', () => {
  it("keeps a 0 ms webhook's p99 within twice its p99 alone beside another namespace's 5 s receiver", async () => {
    const fastNs = await createTestNamespace('fairfast');
    const fastCall = client(bed.server.baseUrl, fastNs.key);
    const fast = await bed.receivers.start();
    const slow = await bed.receivers.start({ delayMs: 5000 });
    await createWebhook(fastCall, { url: fast.url, topic_filter: 'f/#', retry_count: 0 });
    await createWebhook(bed.call, { url: slow.url, topic_filter: 's/#', retry_count: 0, timeout: 30 });

    const offerFast = async () => {
      for (let i = 0; i < FAST_N; i++) {
        const t = Date.now();
        const res = await fastCall('POST', '/topics/f/x/messages', { payload: JSON.stringify({ t }) });
        expect(res.status).toBe(201);
        await new Promise((r) => setTimeout(r, Math.max(0, t + EVERY_MS - Date.now())));
      }
    };

    await offerFast();
    await fast.waitFor(FAST_N, 30_000);
    const alone = latencies(fast, 0);

    for (let i = 0; i < SLOW_N; i += 10) {
      const res = await bed.call('POST', '/topics/s/x/messages/batch', { messages: Array.from({ length: 10 }, (_, j) => ({ payload: JSON.stringify({ t: Date.now(), j: i + j }) })) });
      expect(res.status).toBe(201);
    }
    await offerFast();
    await fast.waitFor(2 * FAST_N, 60_000);
    const beside = latencies(fast, FAST_N);
    const figures = { aloneP50: p50(alone), aloneP99: p99(alone), besideP50: p50(beside), besideP99: p99(beside), slowDeliveredMeanwhile: slow.requests.length };
    console.log(`fair neighbour: ${JSON.stringify(figures)}`);
    expect(figures.slowDeliveredMeanwhile).toBeGreaterThan(0);
    expect(figures.besideP99).toBeLessThanOrEqual(2 * figures.aloneP99);
  });
});
