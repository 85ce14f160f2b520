/**
 * `max_in_flight` lowered (8 → 1) on a webhook that also has a `rate_limit` of 1 a second, just as
 * 8 places are handed on. With both limits a delivery takes its place first and keeps it while it
 * waits on the queue for its rate slot (lambda/webhooks/endpoint-limits.ts, `placeLease`), and the
 * hand-off reads the limits eventually consistently (lambda/webhooks/place-wait.ts `limitsNow`).
 * The promise: the new limit from 4 s after the change. A request starting 4 s or more after the
 * PATCH must find no more requests open (itself counted) than 1. No DynamoDB slowness here.
 */
import { mostOpen, openAt, openNow, startReceiver, until, type ReceivedRequest } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(300_000);

const bed = webhookTestbed('wpa4rate', { visibilitySeconds: 5 });

/** A request's payload token. */
const token = (r: ReceivedRequest) => /tok-[a-z0-9-]+/.exec(r.body.toString())?.[0] ?? '?';
/** The most requests open at once among `reqs`. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function publish(topic: string, tokens: string[]) {
  await Promise.all(tokens.map((t) => bed.call('POST', `/topics/${topic}/messages`, { payload: t }).then((r) => expect(r.status).toBe(201))));
}

const MAX = 8;

it.each([
  // The hand-offs come after the change: read strongly they would hand on 1 place.
  ['the 8 open requests end 500 ms after the PATCH', 500],
  // The hand-offs come just before the change, under the old limit: their jobs keep their places
  // while they wait for their slots, 1 s apart.
  ['the 8 open requests end 400 ms before the PATCH', -400],
])('rate_limit 1, max_in_flight 8 → 1, %s: no request starting 4 s after the PATCH finds more than 1 open', async (_, endAfterMs) => {
  let letGo!: () => void;
  // The first 8 requests are held, then answer at once; later ones take 4 s.
  const rx = await startReceiver({ delayMs: (__, n) => (n <= MAX ? 0 : 4000), holdUntil: new Promise<void>((r) => (letGo = r)) });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 30, max_in_flight: MAX, rate_limit: 1 });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    const tokens = Array.from({ length: 22 }, (__, i) => `tok-${i}`);
    await publish(topic, tokens);
    await until(async () => rx.requests.length >= MAX && (await oldestWaiting(bed.ns.name, stored.id, 30)).length >= 6, 90_000, '8 open and 6 waiting').catch(async (e) => {
      console.log(`not 8 open and 6 waiting: ${rx.requests.length} POSTed, ${(await oldestWaiting(bed.ns.name, stored.id, 30)).length} waiting, ${JSON.stringify(await readPlaces(bed.ns.name, stored.id))}`);
      throw e;
    });
    await sleep(2500);
    if (endAfterMs < 0) {
      letGo();
      await sleep(-endAfterMs);
    }
    const patchAt = Date.now();
    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { max_in_flight: 1 })).status).toBe(200);
    const patched = Date.now();
    if (endAfterMs >= 0) {
      await sleep(Math.max(0, endAfterMs - (patched - patchAt)));
      letGo();
    }
    await until(async () => tokens.every((t) => rx.requests.some((r) => token(r) === t)), 200_000, 'every delivery POSTed').catch(() => undefined);
    await until(async () => (await oldestWaiting(bed.ns.name, stored.id, 5)).length === 0 && openNow(rx) === 0, 60_000, 'nothing waiting').catch(() => undefined);
    const endedAt = rx.requests.slice(0, MAX).map((r) => r.endedAt ?? Infinity);
    const late = rx.requests.filter((r) => r.at >= patched + 4000);
    const over = late.filter((r) => openAt(rx.requests, r.at) > 1).map((r) => `${token(r)}@+${r.at - patched}ms open ${openAt(rx.requests, r.at)}`);
    const starts = rx.requests.slice(MAX).map((r) => `${token(r)}@+${r.at - patched}ms(open ${openAt(rx.requests, r.at)})`);
    const per = new Map<string, number>();
    for (const t of rx.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
    const left = (await oldestWaiting(bed.ns.name, stored.id, 50)).length;
    const places = await readPlaces(bed.ns.name, stored.id);
    console.log(
      `rate 1, 8 → 1 (${_}), PATCH answered in ${patched - patchAt} ms, the 8 open ended at +${Math.min(...endedAt) - patched}..+${Math.max(...endedAt) - patched} ms: ` +
        `starts after the first 8 [${starts.join(', ')}]; starting 4 s or more after the PATCH with more than 1 open: ${over.length} [${over.join(', ')}]; ` +
        `most open at once of the requests started after the PATCH ${mostOpen(rx.requests.filter((r) => r.at >= patched))}; ` +
        `${new Set(rx.requests.map(token)).size}/${tokens.length} POSTed, twice ${[...per].filter(([, n]) => n > 1).length}; left ${left}, count ${places.waiting}, live ${places.live}`,
    );
    expect(over).toEqual([]);
    expect([...per].filter(([, n]) => n > 1)).toEqual([]);
    expect(tokens.filter((t) => !per.has(t))).toEqual([]);
    expect(left).toBe(0);
    expect(places.waiting).toBe(0);
  } finally {
    letGo();
    await rx.close();
  }
});
