/**
 * Waiting for an in-flight place (`max_in_flight`) together with the other delivery limits: a
 * rate limit, retries of failed attempts, the open circuit. Every delivery delivered, at most N
 * open at once, nothing left waiting; a waiting delivery received from SQS a bounded number of times.
 */
import { startReceiver, until, type ReceivedRequest } from '../fixtures/receiver';
import { countReceives } from '../fixtures/delivery-receives';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces } from '../../lambda/webhooks/storage/webhook-limits';
import { recordDynamoCalls } from '../fixtures/dynamo-calls';

jest.setTimeout(240_000);

const bed = webhookTestbed('wpmixed', { visibilitySeconds: 5 });
const status = async (name: string) => (await bed.call('GET', `/webhooks/${name}/status`)).body.data;

/** A request's payload token. */
const token = (r: ReceivedRequest) => /tok-\d+/.exec(r.body.toString())?.[0] ?? '?';

async function publishAll(topic: string, n: number): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const r = await bed.call('POST', `/topics/${topic}/messages`, { payload: `tok-${i}` });
      expect(r.status).toBe(201);
      ids.set(`tok-${i}`, r.body.data.message_id);
    }),
  );
  return ids;
}

async function leftOver(name: string) {
  const stored = (await getWebhook(bed.ns.name, name))!;
  return { left: (await oldestWaiting(bed.ns.name, stored.id, 10)).length, places: await readPlaces(bed.ns.name, stored.id) };
}

it('rate_limit 2 and max_in_flight 1, 1 s receiver, 20 at once: each delivered once, at most 1 open, few receives each', async () => {
  const rx = await startReceiver({ delayMs: 1000 });
  const counter = countReceives();
  const calls = recordDynamoCalls();
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 1, rate_limit: 2 });
    const ids = await publishAll(topic, 20);
    await until(async () => (await status(w.name)).success_count >= 20, 150_000, 'every delivery succeeded');
    const counts = [...ids.values()].map((id) => counter.receives.get(id) ?? 0);
    const per = new Map<string, number>();
    for (const t of rx.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
    const { left, places } = await leftOver(w.name);
    console.log(`rate 2 + max 1: ${rx.requests.length} requests, most open ${rx.maxConcurrent()}, receives total ${counts.reduce((a, b) => a + b, 0)}, max ${Math.max(...counts)} per delivery (${JSON.stringify(counts)}), left ${left}, count ${places.waiting}`);
    expect(rx.maxConcurrent()).toBe(1);
    expect([...per].filter(([, n]) => n > 1)).toEqual([]);
    expect(left).toBe(0);
    expect(places.waiting).toBe(0);
    expect(Math.max(...counts)).toBeLessThanOrEqual(4);
    // Writes of the in-flight item: a lease the gate took or confirmed first (the place before the
    // slot) is the attempt's as it is, not confirmed again before the POST.
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    const placeWrites = calls.calls.filter((c) => /^Update/.test(c.command) && c.input.Key?.pk === `NS#${bed.ns.name}#WHINFL#${stored.id}`);
    const confirms = placeWrites.filter((c) => c.input.ConditionExpression === 'leases.#l > :now').length;
    console.log(`rate 2 + max 1: ${placeWrites.length} writes of the in-flight item, ${confirms} lease confirmations, for 20 deliveries`);
    // One per handed delivery (before: 39, a second one before each POST).
    expect(confirms).toBeLessThanOrEqual(20);
  } finally {
    calls.stop();
    counter.stop();
    await rx.close();
  }
});

it('retries waiting for a place: retry_count 1, max_in_flight 1, the first attempt of each fails: each POSTed twice, then succeeded', async () => {
  const seen = new Set<string>();
  // The first request of each token answers 500.
  const rx2 = await startReceiver({
    status: (r) => {
      const t = token(r);
      const code = seen.has(t) ? 200 : 500;
      seen.add(t);
      return code;
    },
    delayMs: 200,
  });
  try {
    const topic = unique('t');
    // A threshold high enough that the 500s do not open the circuit.
    const w = await createWebhook(bed.call, { url: rx2.url, topic_filter: topic, retry_count: 1, retry_delay: 1, timeout: 5, max_in_flight: 1, failure_threshold: 1000 });
    await publishAll(topic, 12);
    await until(async () => (await status(w.name)).success_count >= 12, 180_000, 'every delivery succeeded after its retry').catch(() => undefined);
    const s = await status(w.name);
    const per = new Map<string, number>();
    for (const t of rx2.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
    const { left, places } = await leftOver(w.name);
    console.log(`retry waiting: success ${s.success_count}, failure ${s.failure_count}, ${rx2.requests.length} requests, most open ${rx2.maxConcurrent()}, per token ${JSON.stringify([...per.values()])}, left ${left}, count ${places.waiting}`);
    expect(s.success_count).toBe(12);
    expect(rx2.maxConcurrent()).toBe(1);
    expect([...per.values()].every((n) => n === 2)).toBe(true);
    expect(left).toBe(0);
    expect(places.waiting).toBe(0);
  } finally {
    await rx2.close();
  }
});

it('the circuit opens (the first 6 requests fail) while deliveries wait: every delivery delivered in the end, at most 1 open, nothing left waiting', async () => {
  const rx = await startReceiver({ status: (_, n) => (n <= 6 ? 500 : 200), delayMs: 300 });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 1 });
    const ids = await publishAll(topic, 20);
    await until(async () => {
      const s = await status(w.name);
      return s.success_count + s.failure_count >= ids.size;
    }, 200_000, 'every delivery ended').catch(() => undefined);
    const s = await status(w.name);
    const per = new Map<string, number>();
    for (const t of rx.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
    const { left, places } = await leftOver(w.name);
    console.log(`circuit: success ${s.success_count}, failure ${s.failure_count}, ${rx.requests.length} requests, most open ${rx.maxConcurrent()}, POSTed twice ${[...per].filter(([, n]) => n > 1).length}, left ${left}, count ${places.waiting}, live ${places.live}`);
    expect(s.success_count + s.failure_count).toBe(20);
    expect(rx.maxConcurrent()).toBe(1);
    expect([...per].filter(([, n]) => n > 1)).toEqual([]);
    expect(left).toBe(0);
    expect(places.waiting).toBe(0);
  } finally {
    await rx.close();
  }
});
