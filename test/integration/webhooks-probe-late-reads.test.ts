/**
 * One probe at a time while a webhook's circuit is open, and never none (docs/webhooks.md
 * "Endpoint health"). The probe's hold on the circuit (timeout + gap) is taken at the gate, before
 * the reads that precede the POST (the record again, a stored message's load) and a rate slot's
 * wait: a read that answers late would move the POST past most of its hold, the hold would lapse
 * while the request is still open, and the next delivery would take the probe beside it. The gate
 * renews the hold of a probe whose request could outlast it, and sends it; it refuses the probe
 * only when the hold is no longer its own (lambda/webhooks/endpoint-limits.ts). A refusal without
 * renewal stalled the circuit (the second and third cases).
 */
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { openCircuit, probeEnded } from '../../lambda/webhooks/storage/webhook-health';
import { CIRCUIT_TRIP_ATTEMPTS } from '../../lambda/webhooks/rules/endpoint-health';
import { reserveRateSlots } from '../../lambda/webhooks/storage/webhook-limits';
import { noteReadMs, readLeadMs } from '../../lambda/webhooks/rate-slot';
import { until } from '../fixtures/receiver';

jest.setTimeout(90_000);

/** A webhook whose circuit just tripped (gap step 0: a 1 s gap), its last probe's hold over. */
async function tripped(fields: Record<string, unknown>, url: string) {
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url, topic_filter: topic, retry_count: 0, timeout: 3, failure_threshold: 10_000, disable_after: 3600, ...fields });
  const stored = (await getWebhook(bed.ns.name, w.name))!;
  const now = Date.now();
  expect(await openCircuit(stored, now - 5_000, 'HTTP 500')).toBe(true);
  for (let i = 0; i < CIRCUIT_TRIP_ATTEMPTS - 1; i++) await probeEnded(stored, now - 1000);
  return { w, stored, topic };
}

/** The stored message loads (Get of WHMSG items) of the testbed's namespace. */
const messageLoads = () => (c: { command: string; input: { Key?: Record<string, unknown> } }) => /^Get(Item)?Command$/.test(c.command) && String(c.input.Key?.pk ?? '').startsWith(`NS#${bed.ns.name}#WHMSG#`);

const bed = webhookTestbed('wprobelate');

it('never has two requests open to an endpoint whose circuit is open, when the probe\'s message load answers late', async () => {
  // The endpoint hangs: each request ends at the webhook's timeout (3 s).
  let release!: () => void;
  const hang = new Promise<void>((r) => (release = r));
  const recv = await bed.receivers.start({ holdUntil: hang });
  const { topic } = await tripped({}, recv.url);
  // The first load of a stored (large) message answers 3.5 s late; later ones at once.
  const slow = slowDynamoAnswers({ when: messageLoads(), ms: (i) => (i === 0 ? 3500 : 0) });
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

it('a recovered endpoint gets its probe although the oldest parked delivery\'s message loads 1.2 s late every time', async () => {
  const recv = await bed.receivers.start({});
  const { w, topic } = await tripped({}, recv.url);
  // Every load answers 1.2 s late (a throttled table, the SDK's backoff): more than the 1 s gap.
  const slow = slowDynamoAnswers({ when: messageLoads(), ms: 1200 });
  slow.arm();
  try {
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'x'.repeat(220_000) })).status).toBe(201);
    // Refused at every ticket, the endpoint got no request in 40 s; renewed, the first probe goes.
    await until(async () => recv.requests.length >= 1, 30_000, 'a probe reached the endpoint');
    await until(async () => (await getWebhook(bed.ns.name, w.name))!.health === undefined, 10_000, 'its success closed the circuit');
  } finally {
    slow.stop();
  }
});

it('a rate-limited webhook whose endpoint recovered gets its probe at its slot while the container\'s read lead is 2 s', async () => {
  const recv = await bed.receivers.start({});
  const { stored, topic } = await tripped({ rate_limit: 1 }, recv.url);
  // The container's read lead (the second slowest of its last read rounds) at 2 s, as steady slow
  // storage keeps it: the probe's hold is taken with the reads, 2 s before its slot, and the wait
  // for the slot lies between the take and the POST.
  const slowRounds = setInterval(() => [1, 2].forEach(() => noteReadMs(2000)), 200);
  [1, 2].forEach(() => noteReadMs(2000));
  expect(readLeadMs()).toBeGreaterThanOrEqual(2000);
  try {
    const start = Date.now();
    // Two slots ahead taken (earlier traffic at the rate): the first probe's slot is 2 s ahead.
    await reserveRateSlots(bed.ns.name, stored.id, 1, 2, stored.updated_at);
    for (let i = 0; i < 20 && !recv.requests.length; i++) {
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: `m${i}` })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 500));
    }
    await until(async () => recv.requests.length >= 1, 10_000, 'a probe reached the endpoint');
    // At its slot (about 2 s), not after a refused probe's whole hold (4 s) or more (the first
    // request came 5.8 s in here, 10.6 s with steady traffic, when the gate refused instead of
    // renewing; 2.3 s renewed).
    expect(recv.requests[0].at - start).toBeLessThan(4500);
  } finally {
    clearInterval(slowRounds);
  }
});
