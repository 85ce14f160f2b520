/**
 * Deliveries waiting for an in-flight place while their webhook changes: `max_in_flight` removed,
 * the webhook disabled, the webhook deleted. Every waiting delivery must end within a bounded
 * time (delivered, or dropped when the webhook is disabled or gone), leaving nothing waiting.
 */
import { startReceiver, until, type ReceivedRequest } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(240_000);

const bed = webhookTestbed('wpchange');

/** A request's payload token. */
const token = (r: ReceivedRequest) => /tok-\d+/.exec(r.body.toString())?.[0] ?? '?';

/**
 * A webhook with max_in_flight 1 and a slow receiver, `n` published at once, until `waitingAtLeast`
 * wait for a place. The receiver answers nothing until then: on a loaded machine the publishes took
 * long enough for the backlog to drain as it formed (8 never waiting at once).
 */
async function backlog(n: number, waitingAtLeast: number, receiverMs = 3000) {
  let letGo!: () => void;
  const rx = await startReceiver({ delayMs: receiverMs, holdUntil: new Promise<void>((r) => (letGo = r)) });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 1 });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    await Promise.all(Array.from({ length: n }, (_, i) => bed.call('POST', `/topics/${topic}/messages`, { payload: `tok-${i}` }).then((r) => expect(r.status).toBe(201))));
    await until(async () => (await oldestWaiting(bed.ns.name, stored.id, n)).length >= waitingAtLeast, 60_000, `${waitingAtLeast} waiting for a place`);
    return { rx, w, stored };
  } finally {
    letGo();
  }
}

/** Polls the waiting partition until empty (or `limitMs`); returns when it emptied (ms after `from`) and the counts seen every 10 s. */
async function drain(id: string, from: number, limitMs: number) {
  const seen: string[] = [];
  let next = from;
  for (;;) {
    const left = (await oldestWaiting(bed.ns.name, id, 100)).length;
    const t = Date.now() - from;
    if (Date.now() >= next) {
      seen.push(`${Math.round(t / 1000)}s:${left}`);
      next += 10_000;
    }
    if (left === 0) return { at: t, seen };
    if (t > limitMs) return { at: Infinity, seen };
    await new Promise((r) => setTimeout(r, 500));
  }
}

it('max_in_flight removed (PATCH null) while 30 deliveries wait: every one delivered soon, nothing left waiting', async () => {
  const { rx, w, stored } = await backlog(30, 25);
  try {
    const from = Date.now();
    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { max_in_flight: null })).status).toBe(200);
    const d = await drain(stored.id, from, 120_000);
    await until(async () => new Set(rx.requests.map(token)).size >= 30, 120_000, 'every delivery POSTed').catch(() => undefined);
    const places = await readPlaces(bed.ns.name, stored.id);
    console.log(`PATCH null: waiting partition empty after ${d.at} ms (${d.seen.join(' ')}), ${new Set(rx.requests.map(token)).size}/30 POSTed, ${rx.requests.length} requests, count ${places.waiting}, check ${places.checkAt ?? '-'}`);
    expect(d.at).toBeLessThan(60_000);
    expect(new Set(rx.requests.map(token)).size).toBe(30);
    expect(rx.requests.length).toBe(30);
  } finally {
    await rx.close();
  }
});

it('max_in_flight raised from 1 to 10 while 30 deliveries wait: every one delivered soon, at most 10 open', async () => {
  const { rx, w, stored } = await backlog(30, 25);
  try {
    const from = Date.now();
    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { max_in_flight: 10 })).status).toBe(200);
    const d = await drain(stored.id, from, 150_000);
    await until(async () => new Set(rx.requests.map(token)).size >= 30, 120_000, 'every delivery POSTed').catch(() => undefined);
    const places = await readPlaces(bed.ns.name, stored.id);
    console.log(`raised to 10: waiting partition empty after ${d.at} ms (${d.seen.join(' ')}), ${new Set(rx.requests.map(token)).size}/30 POSTed, most open ${rx.maxConcurrent()}, count ${places.waiting}`);
    expect(rx.maxConcurrent()).toBeLessThanOrEqual(10);
    expect(new Set(rx.requests.map(token)).size).toBe(30);
    expect(d.at).toBeLessThan(90_000);
  } finally {
    await rx.close();
  }
});

it('webhook disabled (PATCH enabled false) while 8 deliveries wait: every waiting delivery dropped soon, none POSTed', async () => {
  const { rx, w, stored } = await backlog(10, 8);
  try {
    const from = Date.now();
    const postedBefore = rx.requests.length;
    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { enabled: false })).status).toBe(200);
    const d = await drain(stored.id, from, 200_000);
    const places = await readPlaces(bed.ns.name, stored.id);
    console.log(`disabled: waiting partition empty after ${d.at} ms (${d.seen.join(' ')}), POSTs after the PATCH ${rx.requests.filter((r) => r.at > from + 500).length} (${postedBefore} before), count ${places.waiting}, live ${places.live}`);
    expect(d.at).toBeLessThan(60_000);
  } finally {
    await rx.close();
  }
});

it('webhook deleted while 8 deliveries wait: every waiting delivery dropped soon, none POSTed', async () => {
  const { rx, w, stored } = await backlog(10, 8);
  try {
    const from = Date.now();
    expect((await bed.call('DELETE', `/webhooks/${w.name}`)).status).toBeLessThan(300);
    const d = await drain(stored.id, from, 120_000);
    console.log(`deleted: waiting partition empty after ${d.at} ms (${d.seen.join(' ')}), POSTs after the DELETE ${rx.requests.filter((r) => r.at > from + 500).length}`);
    expect(d.at).toBeLessThan(60_000);
    expect(rx.requests.filter((r) => r.at > from + 500).length).toBe(0);
  } finally {
    await rx.close();
  }
});
