/**
 * One probe at a time while a webhook's circuit is open (docs/webhooks.md "Endpoint health"). The
 * probe's hold on the circuit (timeout + gap) is taken at the gate, before the reads that precede
 * the POST (the record again, a stored message's load): a read that answers late would move the
 * POST past most of its hold, the hold would lapse while the request is still open, and the next
 * delivery would take the probe beside it. The gate does not send a probe whose request could
 * outlast its hold (lambda/webhooks/endpoint-limits.ts).
 */
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { openCircuit, probeEnded } from '../../lambda/webhooks/storage/webhook-health';
import { CIRCUIT_TRIP_ATTEMPTS } from '../../lambda/webhooks/rules/endpoint-health';

jest.setTimeout(90_000);

const bed = webhookTestbed('wprobelate');

it('never has two requests open to an endpoint whose circuit is open, when the probe\'s message load answers late', async () => {
  // The endpoint hangs: each request ends at the webhook's timeout (3 s).
  let release!: () => void;
  const hang = new Promise<void>((r) => (release = r));
  const recv = await bed.receivers.start({ holdUntil: hang });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0, timeout: 3, failure_threshold: 10_000, disable_after: 3600 });
  const stored = (await getWebhook(bed.ns.name, w.name))!;
  const now = Date.now();
  expect(await openCircuit(stored, now - 5_000, 'HTTP 500')).toBe(true);
  for (let i = 0; i < CIRCUIT_TRIP_ATTEMPTS - 1; i++) await probeEnded(stored, now - 1000);
  // The first load of a stored (large) message answers 3.5 s late; later ones at once.
  const slow = slowDynamoAnswers({ when: (c) => /^Get(Item)?Command$/.test(c.command) && String(c.input.Key?.pk ?? '').startsWith(`NS#${bed.ns.name}#WHMSG#`), ms: (i) => (i === 0 ? 3500 : 0) });
  slow.arm();
  try {
    const big = 'x'.repeat(220_000);
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: big })).status).toBe(201);
    // Traffic for 10 s (2 a second): each arrival after the first probe's hold lapsed may take the probe.
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 500));
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: big })).status).toBe(201);
    }
    await new Promise((r) => setTimeout(r, 4000));
    // Probes still went (the late one's hold lapsed, then the next took the probe), one at a time.
    expect(recv.requests.length).toBeGreaterThanOrEqual(2);
    expect(recv.maxConcurrent()).toBe(1);
  } finally {
    slow.stop();
    release();
  }
});
