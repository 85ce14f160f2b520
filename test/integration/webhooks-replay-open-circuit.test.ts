/**
 * Two bulk replays at once into a webhook whose circuit is open (its endpoint failed, then
 * recovered): one replay takes the probe and succeeds, and every delivery parked behind the
 * circuit (the other replays, and first attempts parked before) goes at once, not when the
 * webhook's probe ticket comes back after its gap (up to a minute, docs/webhooks.md "Endpoint
 * health"). The circuit and the parked deliveries are set up with the storage functions, so the
 * ticket's delay is known; the replays are delivered by the local delivery to a real receiver.
 */
import { openCircuitWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { putAttempt, putRetained } from '../../lambda/webhooks/storage/delivery-log';
import { parkedJobs } from '../../lambda/webhooks/storage/webhook-parked';
import { circuitOpen } from '../../lambda/webhooks/rules/endpoint-health';
import { park } from '../../lambda/webhooks/parking';
import { replayFailedSince } from '../../lambda/webhooks/replay';
import type { PublishedMessage } from '../../lambda/core/rules/message';

jest.setTimeout(90_000);

const bed = webhookTestbed('whroc');

const message = (id: string, at: number): PublishedMessage => ({ message_id: id, topic: 'never/published', payload: `p-${id}`, content_type: 'text/plain', properties: {}, published_at: at, size: 4 });

const idsOf = (bodies: Buffer[]) => bodies.map((b) => JSON.parse(b.toString('utf8')).message_id as string).sort();

it('delivers every replay and every parked delivery once the probe succeeds, not when the probe ticket comes back', async () => {
  const recv = await bed.receivers.start();
  // The circuit open (CIRCUIT_TRIP_ATTEMPTS failed attempts and one more), its probe free now.
  const { w, stored, open, now } = await openCircuitWebhook(bed, recv.url);
  expect(circuitOpen(open.health)).toBe(true);
  // First attempts parked behind it; their ticket is due back in 60 s (a gap after failed probes).
  const parked = ['P1', 'P2', 'P3'];
  for (const id of parked) await park({ namespace: bed.ns.name, webhook_id: stored.id, webhook_name: w.name, message: message(id, now) }, open, Date.now() + 60_000);
  expect((await parkedJobs(bed.ns.name, stored.id, 10)).jobs).toHaveLength(3);
  // Five deliveries that ended in failure while the endpoint was down.
  const failed = ['R1', 'R2', 'R3', 'R4', 'R5'];
  for (const [i, id] of failed.entries()) {
    const at = now - 20_000 + i * 1000;
    await putAttempt(bed.ns.name, stored.id, { message_id: id, attempt: 1, attempted_at: at, duration_ms: 10, status_code: 500, outcome: 'failed', error: 'HTTP 500', final: true, replay: false }, unique('e'));
    await putRetained(bed.ns.name, stored.id, message(id, at), at + 10);
  }
  await afterIndexLag();
  // The endpoint is back (the receiver answers 200): two bulk replays at once.
  const [a, b] = await Promise.all([0, 1].map(() => replayFailedSince(bed.ns.name, w.name, now - 60_000, Date.now())));
  expect(a.queued + b.queued).toBe(5);
  const queuedAt = Date.now();
  // Well before the ticket's 60 s: the first success closes the circuit and releases the rest.
  await recv.waitFor(8, 20_000);
  console.log(`replays and parked deliveries all received ${recv.requests.at(-1)!.at - queuedAt} ms after the replays were queued`);
  // Long enough for a second copy of any of them to arrive.
  await new Promise((r) => setTimeout(r, 3000));
  expect(idsOf(recv.requests.map((r) => r.body))).toEqual([...parked, ...failed].sort());
  expect((await parkedJobs(bed.ns.name, stored.id, 10)).jobs).toHaveLength(0);
});

it('delivers the probe ticket\'s own parked delivery once when its success releases the others', async () => {
  const recv = await bed.receivers.start();
  const { w, stored, open, now } = await openCircuitWebhook(bed, recv.url);
  // The records of these deliveries are written 3 s late (slow storage): a copy of the probe's job
  // handed on meanwhile would find none, and POST again.
  const slow = slowDynamoAnswers({ when: (c) => /^Put(Item)?Command$/.test(c.command) && c.input.Item?.sk === '#DELIVERY' && String(c.input.Item?.pk).startsWith(`NS#${bed.ns.name}#WEBHOOK#${stored.id}#`), ms: 3000, timing: 'before' });
  slow.arm();
  try {
    // Parked with the ticket due in 1 s: it probes the oldest, which succeeds and closes the circuit.
    const parked = ['Q1', 'Q2', 'Q3', 'Q4'];
    for (const id of parked) await park({ namespace: bed.ns.name, webhook_id: stored.id, webhook_name: w.name, message: message(id, now) }, open, Date.now() + 1000);
    await recv.waitFor(4, 20_000);
    // Long enough for a second copy of any of them to arrive.
    await new Promise((r) => setTimeout(r, 6000));
    expect(slow.hits.length).toBeGreaterThan(0);
    expect(idsOf(recv.requests.map((r) => r.body))).toEqual(parked);
  } finally {
    slow.stop();
  }
});

it('delivers two bulk replays that all park behind a probe held at the time: the ticket\'s probe releases them', async () => {
  const recv = await bed.receivers.start();
  const { w, stored, now } = await openCircuitWebhook(bed, recv.url, 4000);
  const failed = ['S1', 'S2', 'S3', 'S4', 'S5'];
  for (const [i, id] of failed.entries()) {
    const at = now - 20_000 + i * 1000;
    await putAttempt(bed.ns.name, stored.id, { message_id: id, attempt: 1, attempted_at: at, duration_ms: 10, status_code: 500, outcome: 'failed', error: 'HTTP 500', final: true, replay: false }, unique('e'));
    await putRetained(bed.ns.name, stored.id, message(id, at), at + 10);
  }
  await afterIndexLag();
  const [a, b] = await Promise.all([0, 1].map(() => replayFailedSince(bed.ns.name, w.name, now - 60_000, Date.now())));
  expect(a.queued + b.queued).toBe(5);
  await recv.waitFor(5, 20_000);
  await new Promise((r) => setTimeout(r, 3000));
  expect(idsOf(recv.requests.map((r) => r.body))).toEqual(failed);
  expect((await parkedJobs(bed.ns.name, stored.id, 10)).jobs).toHaveLength(0);
});
