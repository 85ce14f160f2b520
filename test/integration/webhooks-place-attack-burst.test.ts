/**
 * `max_in_flight` under bursts: many deliveries of one webhook published at once, a receiver that
 * answers at random speeds. At most N requests open at once, every delivery POSTed once, nothing
 * left waiting and the waiting count back at 0; and no delivery waits for the place check (15 s)
 * while the endpoint sits idle (a hand-off that never came).
 */
import { startReceiver, until, type Receiver } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(240_000);

const bed = webhookTestbed('wpburst');
const status = async (name: string) => (await bed.call('GET', `/webhooks/${name}/status`)).body.data;

interface Req {
  token: string;
  start: number;
  end: number;
}

/** The requests answered so far, as payload token, start and end (the copy this file used noted a request once answered). */
const answered = (rx: Receiver): Req[] =>
  rx.requests.filter((r) => r.answeredAt !== undefined).map((r) => ({ token: /tok-\d+-\d+/.exec(r.body.toString())?.[0] ?? '?', start: r.at, end: r.answeredAt! }));

/** Publishes `n` messages at once (tokens tok-<round>-<i>); returns each token's publish time. */
async function burst(topic: string, round: number, n: number, published: Map<string, number>) {
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const token = `tok-${round}-${i}`;
      const t = Date.now();
      const r = await bed.call('POST', `/topics/${topic}/messages`, { payload: token });
      expect(r.status).toBe(201);
      published.set(token, t);
    }),
  );
}

/**
 * The longest stretch (ms) during which some delivery was published and not yet POSTed while no
 * request was open at the receiver: a place free, a delivery waiting, nobody handing it on.
 */
function longestIdleWithBacklog(published: Map<string, number>, log: Req[]): number {
  const firstPost = new Map<string, number>();
  for (const r of log) firstPost.set(r.token, Math.min(firstPost.get(r.token) ?? Infinity, r.start));
  const events: [number, number][] = [];
  for (const r of log) events.push([r.start, 1], [r.end, -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  // Periods when no request was open.
  const idle: [number, number][] = [];
  let open = 0;
  let from = -Infinity;
  for (const [t, d] of events) {
    if (open === 0 && d === 1 && from !== -Infinity) idle.push([from, t]);
    open += d;
    if (open === 0) from = t;
  }
  let worst = 0;
  for (const [a, b] of idle) {
    // Backlog during [a, b]: published before b and first POSTed after a.
    const waiting = [...published].filter(([tok, p]) => p < b && (firstPost.get(tok) ?? Infinity) > a);
    if (!waiting.length) continue;
    const s = Math.max(a, Math.min(...waiting.map(([, p]) => p)));
    worst = Math.max(worst, b - s);
  }
  return worst;
}

async function judge(name: string, label: string, max: number, published: Map<string, number>, rx: Receiver) {
  await until(async () => (await status(name)).success_count >= published.size, 200_000, `every delivery of ${label} succeeded`);
  await new Promise((r) => setTimeout(r, 2000));
  const log = answered(rx);
  const per = new Map<string, number>();
  for (const r of log) per.set(r.token, (per.get(r.token) ?? 0) + 1);
  const latency = [...published].map(([tok, p]) => Math.min(...log.filter((r) => r.token === tok).map((r) => r.start)) - p);
  const stored = (await getWebhook(bed.ns.name, name))!;
  const left = await oldestWaiting(bed.ns.name, stored.id, 10);
  const places = await readPlaces(bed.ns.name, stored.id);
  const idle = longestIdleWithBacklog(published, log);
  const twice = [...per].filter(([, n]) => n > 1);
  console.log(
    `${label}: ${published.size} published, ${log.length} requests, most open ${rx.maxConcurrent()} (max ${max}), POSTed twice ${twice.length} ${JSON.stringify(twice.slice(0, 5))}, ` +
      `latency max ${Math.max(...latency)} ms, ≥10 s: ${latency.filter((l) => l >= 10_000).length}, longest idle with backlog ${idle} ms, left waiting ${left.length}, count ${places.waiting}, live ${places.live}, check ${places.checkAt ?? '-'}`,
  );
  expect(rx.maxConcurrent()).toBeLessThanOrEqual(max);
  expect([...published.keys()].filter((t) => !per.has(t))).toEqual([]);
  expect(twice).toEqual([]);
  expect(left).toEqual([]);
  expect(places.waiting).toBe(0);
  expect(idle).toBeLessThan(10_000);
}

it('max_in_flight 2, 80 published at once, receiver 0 to 300 ms: at most 2 open, each POSTed once, nothing left waiting', async () => {
  const rx = await startReceiver({ delayMs: () => Math.random() * 300 });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 2 });
    const published = new Map<string, number>();
    await burst(topic, 0, 80, published);
    await judge(w.name, 'max 2 burst 80', 2, published, rx);
  } finally {
    await rx.close();
  }
});

it('max_in_flight 1, receiver 0 ms, 8 rounds of 10 at once: no delivery waits for the place check with the endpoint idle', async () => {
  const rx = await startReceiver();
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 1 });
    const published = new Map<string, number>();
    for (let round = 0; round < 8; round++) {
      await burst(topic, round, 10, published);
      await until(async () => answered(rx).length >= published.size, 60_000, `round ${round} POSTed`).catch(() => undefined);
    }
    await judge(w.name, 'max 1 rounds of 10, 0 ms', 1, published, rx);
  } finally {
    await rx.close();
  }
});

it('max_in_flight 3, 100 published at once, receiver 0 to 100 ms: at most 3 open, each POSTed once, nothing left waiting', async () => {
  const rx = await startReceiver({ delayMs: () => Math.random() * 100 });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 3 });
    const published = new Map<string, number>();
    await burst(topic, 0, 100, published);
    await judge(w.name, 'max 3 burst 100', 3, published, rx);
  } finally {
    await rx.close();
  }
});
