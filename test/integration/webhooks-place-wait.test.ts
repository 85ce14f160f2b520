/**
 * A delivery that finds every in-flight place of its webhook taken waits for one in DynamoDB,
 * oldest first, and the place an attempt gives back is handed to the oldest waiting delivery
 * (lambda/webhooks/place-wait.ts): each waits on SQS once, never in a loop. Before, a job with no
 * place went back to the queue for 1 to 3 s and tried again: 81 receives for 20 deliveries, up to
 * 12 for one. And a waiting delivery whose hand-off never comes (its container ended midway) is
 * handed on by the webhook's place check.
 */
import { startReceiver, until, type Receiver } from '../fixtures/receiver';
import { countReceives } from '../fixtures/delivery-receives';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces, takeInFlight } from '../../lambda/webhooks/storage/webhook-limits';
import { injectDynamoFault, recordDynamoCalls } from '../fixtures/dynamo-calls';

jest.setTimeout(180_000);

const bed = webhookTestbed('wplace');
const status = async (name: string) => (await bed.call('GET', `/webhooks/${name}/status`)).body.data;

/** The requests answered so far (the copies this file used counted a request once its answer went out). */
const answered = (rx: Receiver) => rx.requests.filter((r) => r.answeredAt !== undefined);

it('hands each freed place to a waiting delivery: max_in_flight 1, a 1 s receiver, 20 messages at 2 a second, at most 2 SQS receives each', async () => {
  const rx = await startReceiver({ delayMs: 1000 });
  const counter = countReceives();
  const calls = recordDynamoCalls();
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 10, max_in_flight: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await bed.call('POST', `/topics/${topic}/messages`, { payload: `m${i}` });
      expect(r.status).toBe(201);
      ids.push(r.body.data.message_id);
      await new Promise((res) => setTimeout(res, 500));
    }
    await until(async () => (await status(w.name)).success_count >= ids.length, 120_000, 'every delivery succeeded');
    // A hand-off sends its job at once; a job sent delayed was put back: by the gate before (1 to
    // 3 s, again and again), or by the namespace's share (a mechanism of its own, rare here: one
    // delivery in flight at a time), whose extra receive is not counted against the waiting.
    const delayed = ids.reduce((n, id) => n + (counter.delayed.get(id) ?? 0), 0);
    const counts = ids.map((id) => (counter.receives.get(id) ?? 0) - (counter.delayed.get(id) ?? 0));
    const total = ids.reduce((n, id) => n + (counter.receives.get(id) ?? 0), 0);
    console.log(`max_in_flight 1, 1 s receiver, 20 messages at 2/s: ${total} SQS receives (${delayed} after a delayed send), max ${Math.max(...counts)} per delivery besides those, most open at once ${rx.maxConcurrent()}, ${answered(rx).length} requests`);
    expect(rx.maxConcurrent()).toBe(1);
    expect(answered(rx).length).toBe(ids.length);
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
    // A handed delivery runs in the batch that gave the place back: received once, its arrival
    // (twice when that batch lacked the time; before, every one went through the queue: 38).
    expect(total).toBeLessThan(1.5 * ids.length);
    expect(delayed).toBeLessThan(ids.length / 4);
    // A handed place the gate met is settled there: the batch writes no give-back of its own
    // (before, one refused conditional write, billed, per handed delivery: 19 here).
    const giveBacks = calls.calls.filter((c) => c.input.ConditionExpression === 'attribute_exists(leases.#l)').length;
    console.log(`give-back writes after the gate: ${giveBacks}`);
    expect(giveBacks).toBe(0);
    // A hand-off reads only the webhook's limits, eventually consistently (half the read units),
    // with no secret opened; before, each hand-off made a strong read of the whole item.
    const reads = calls.getsOf(`WEBHOOK#${w.name}`);
    const limitReads = reads.filter((c) => c.input.ProjectionExpression && !c.input.ConsistentRead).length;
    const strong = reads.filter((c) => c.input.ConsistentRead).length;
    console.log(`webhook reads: ${strong} strong (batches, the test's status polls), ${limitReads} of the limits alone (hand-offs)`);
    expect(limitReads).toBeGreaterThanOrEqual(ids.length / 2);
    // Nothing left waiting, and the count of waiting deliveries back at 0.
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    expect(await oldestWaiting(bed.ns.name, stored.id, 5)).toEqual([]);
    expect((await readPlaces(bed.ns.name, stored.id)).waiting).toBe(0);
  } finally {
    calls.stop();
    counter.stop();
    await rx.close();
  }
});

it('hands on a place whose attempt never gives it back: the waiting delivery goes once the lease lapses, by the place check', async () => {
  const rx = await startReceiver();
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 1, max_in_flight: 1 });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    // The only place, held by an attempt whose container ended: a lease that lapses in 3 s, never given back.
    expect(await takeInFlight(bed.ns.name, stored.id, 1, ['lost'], Date.now() + 3_000)).toEqual(['lost']);
    const r = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'late' });
    expect(r.status).toBe(201);
    await until(async () => (await readPlaces(bed.ns.name, stored.id)).waiting === 1, 30_000, 'the delivery waits for a place');
    // Nothing ends an attempt: the place check (back after a lease's longest life) hands the place on.
    await until(async () => (await status(w.name)).success_count === 1, 150_000, 'the waiting delivery was sent');
    expect(answered(rx).length).toBe(1);
    expect((await readPlaces(bed.ns.name, stored.id)).waiting).toBe(0);
  } finally {
    await rx.close();
  }
});

it('holds no place for a take whose write was applied and whose answer was lost: the next deliveries go at once', async () => {
  const rx = await startReceiver();
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 20, max_in_flight: 1 });
  const stored = (await getWebhook(bed.ns.name, w.name))!;
  // The first take of the only place: applied, its answer lost. Taken as another's, its lease held
  // the place until it lapsed (the timeout and 15 s: 35 s) while the deliveries waited.
  const fault = injectDynamoFault({ when: (c) => c.command === 'UpdateItemCommand' && String(c.input.Key?.pk).includes(`WHINFL#${stored.id}`) && /SET (leases|.*leases\.)/.test(String(c.input.UpdateExpression)), mode: 'after' });
  fault.arm();
  try {
    const started = Date.now();
    for (let i = 0; i < 3; i++) expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: `f${i}` })).status).toBe(201);
    await until(async () => (await status(w.name)).success_count === 3, 60_000, 'the three deliveries succeeded');
    expect(fault.hits).toHaveLength(1);
    // Delivered within seconds, not after the lapse of a lease nobody held.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(rx.maxConcurrent()).toBe(1);
  } finally {
    fault.stop();
    await rx.close();
  }
});
