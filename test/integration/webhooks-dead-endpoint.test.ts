/**
 * A dead endpoint under steady traffic is disabled when its thresholds say, whatever the traffic:
 * while the circuit is open deliveries wait for the one probe and few ever end in failure, so
 * health is judged at the gate from the failing run's start (docs/webhooks.md "Endpoint health").
 * The two cases (each its own receiver, topic and webhook) run at once: the second waits out
 * `disable_after`'s minute whatever the first does.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(180_000);

const bed = webhookTestbed('wdead');
const view = async (name: string) => (await bed.call('GET', `/webhooks/${name}`)).body.data;

/** Publishes 2 messages a second to `topic` until `stop` says so; resolves with the count published. */
function steadyTraffic(topic: string) {
  let stopped = false;
  let published = 0;
  const done = (async () => {
    while (!stopped) {
      const r = await bed.call('POST', `/topics/${topic}/messages`, { payload: `m${published}` });
      if (r.status === 201) published++;
      await new Promise((res) => setTimeout(res, 500));
    }
    return published;
  })();
  return { stop: () => ((stopped = true), done) };
}

describe('a dead endpoint under steady traffic (2 messages/s)', () => {
  it.concurrent('is disabled by failure_threshold: failed attempts since the run began, judged at the gate', async () => {
    const recv = await bed.receivers.start({ status: 500 });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, timeout: 2, failure_threshold: 3 });
    const traffic = steadyTraffic(topic);
    const started = Date.now();
    try {
      // 3 deliveries of 1 + retry_count attempts: 9 failed attempts in a row (the circuit opens at
      // 5, then one probe per gap of 1, 2, 4, 8 s): about 20 s; before, never within 120 s.
      const v = await until(async () => { const x = await view(w.name); return x.status === 'disabled' && x; }, 75_000, 'disabled by health');
      expect(v.disabled_reason).toBe('health');
      console.log(`dead endpoint at 2/s (retry_count 2, failure_threshold 3): disabled after ${Date.now() - started} ms, ${recv.requests.length} requests`);
      // No more than the threshold's attempts (and the in-flight first attempts when the circuit opened).
      expect(recv.requests.length).toBeLessThanOrEqual(3 * 3 + 4);
    } finally {
      await traffic.stop();
    }
    // Deliveries waiting then, and arriving after, end as failed (replayable) without a request.
    const made = recv.requests.length;
    await until(async () => { const s = (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data; return s.failure_count > 0 && s; }, 30_000, 'failed deliveries counted');
    expect(recv.requests.length).toBe(made);
  });

  it.concurrent('is disabled by disable_after, seconds since the run began, though no delivery reached its last attempt', async () => {
    const recv = await bed.receivers.start({ status: 500 });
    const topic = unique('t');
    // failure_threshold out of reach: only disable_after (its least, 60 s) can disable it.
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 10, retry_delay: 1, timeout: 2, failure_threshold: 10_000, disable_after: 60 });
    const traffic = steadyTraffic(topic);
    try {
      const v = await until(async () => { const x = await view(w.name); return x.status === 'disabled' && x; }, 110_000, 'disabled by health');
      expect(v.disabled_reason).toBe('health');
      const firstRequest = recv.requests[0].at;
      const after = Date.parse(v.disabled_at) - firstRequest;
      console.log(`dead endpoint at 2/s (disable_after 60): disabled ${after} ms after the first failed request`);
      expect(after).toBeGreaterThanOrEqual(60_000);
      expect(after).toBeLessThan(80_000);
    } finally {
      await traffic.stop();
    }
  });
});
