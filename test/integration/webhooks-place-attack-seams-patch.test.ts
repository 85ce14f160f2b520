/**
 * A PATCH of `max_in_flight` while places are handed on: leases a hand-off took under the old
 * limit are out on the delivery queue (widened here by confirmations reaching the table late),
 * and the limit goes 1 → 3 → 1 → none → 1. Never more requests open at once than the limit in
 * force (for 4 s after a change, the higher of the old and the new), every delivery POSTed once,
 * nothing left waiting and the waiting count back to 0.
 */
import { openAt, openNow, startReceiver, until, type ReceivedRequest } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { slowDynamoAnswers, type RecordedCall } from '../fixtures/dynamo-calls';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(300_000);

const bed = webhookTestbed('wpseampatch', { visibilitySeconds: 5 });

/** A request's payload token. */
const token = (r: ReceivedRequest) => /tok-[a-z0-9-]+/.exec(r.body.toString())?.[0] ?? '?';

/** The limit in force at `t`: the last change's, or for `graceMs` after a change the higher of it and the one before. */
function limitAt(changes: { at: number; max: number }[], t: number, graceMs = 4000): number {
  let i = -1;
  for (let k = 0; k < changes.length; k++) if (changes[k].at <= t) i = k;
  if (i < 0) return changes[0].max;
  const cur = changes[i].max;
  return i > 0 && t - changes[i].at < graceMs ? Math.max(cur, changes[i - 1].max) : cur;
}

/** The requests that started with more open (counting themselves) than the limit in force at their start. */
function overLimit(log: ReceivedRequest[], changes: { at: number; max: number }[]) {
  return log
    .map((r) => ({ r, open: openAt(log, r.at), limit: limitAt(changes, r.at) }))
    .filter((x) => x.open > x.limit)
    .map((x) => `${token(x.r)}@+${x.r.at - changes[0].at}ms open ${x.open} > ${x.limit}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const onInFlight = (id: string) => (c: RecordedCall) => String(c.input.Key?.pk ?? '').endsWith(`#WHINFL#${id}`);
const isConfirm = (c: RecordedCall) => /^Update/.test(c.command) && c.input.ConditionExpression === 'leases.#l > :now';

async function setMax(name: string, max: number | null, changes: { at: number; max: number }[]) {
  const at = Date.now();
  expect((await bed.call('PATCH', `/webhooks/${name}`, { max_in_flight: max })).status).toBe(200);
  changes.push({ at, max: max ?? Infinity });
}

async function publish(topic: string, tokens: string[]) {
  await Promise.all(tokens.map((t) => bed.call('POST', `/topics/${topic}/messages`, { payload: t }).then((r) => expect(r.status).toBe(201))));
}

it('max_in_flight 1 → 3 → 1 → none → 1 while handed leases are out on the queue (1.5 s receiver, confirmations 700 ms late): within the limit, each POSTed once, nothing left waiting', async () => {
  const rx = await startReceiver({ delayMs: 1500 });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 1 });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    const changes: { at: number; max: number }[] = [{ at: Date.now(), max: 1 }];
    // A handed job's confirmation reaches the table 700 ms late: its lease stays out meanwhile.
    const slow = slowDynamoAnswers({ when: (c) => isConfirm(c) && onInFlight(stored.id)(c), ms: 700, timing: 'before' });
    slow.arm();
    const first = Array.from({ length: 24 }, (_, i) => `tok-a-${i}`);
    await publish(topic, first);
    await until(async () => (await oldestWaiting(bed.ns.name, stored.id, 30)).length >= 15, 60_000, '15 waiting for a place');
    // Each change lands while a hand-off's lease is out: just after a request ended (a place given back).
    const afterARelease = async () => {
      const n = rx.requests.filter((r) => r.endedAt !== undefined).length;
      await until(async () => rx.requests.filter((r) => r.endedAt !== undefined).length > n, 10_000, 'a request ended').catch(() => undefined);
      await sleep(100);
    };
    await afterARelease();
    await setMax(w.name, 3, changes);
    await sleep(6000);
    await afterARelease();
    await setMax(w.name, 1, changes);
    await sleep(6000);
    await afterARelease();
    await setMax(w.name, null, changes);
    await sleep(1500);
    // Back to 1 while the deliveries let go by the removal may still be on their way.
    await setMax(w.name, 1, changes);
    const second = Array.from({ length: 8 }, (_, i) => `tok-b-${i}`);
    await publish(topic, second);
    const all = [...first, ...second];
    await until(async () => all.every((t) => rx.requests.some((r) => token(r) === t)), 180_000, 'every delivery POSTed').catch(() => undefined);
    await until(async () => (await oldestWaiting(bed.ns.name, stored.id, 5)).length === 0 && openNow(rx) === 0, 60_000, 'nothing waiting').catch(() => undefined);
    await sleep(2000);
    slow.stop();
    const per = new Map<string, number>();
    for (const t of rx.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
    const over = overLimit(rx.requests, changes);
    const left = (await oldestWaiting(bed.ns.name, stored.id, 50)).length;
    const places = await readPlaces(bed.ns.name, stored.id);
    const phases = changes.map((c, i) => {
      const to = changes[i + 1]?.at ?? Infinity;
      const inPhase = rx.requests.filter((r) => r.at >= c.at && r.at < to);
      const most = Math.max(0, ...inPhase.map((r) => openAt(rx.requests, r.at)));
      return `max ${c.max}: ${inPhase.length} started, most open ${most}`;
    });
    console.log(
      `PATCH 1→3→1→null→1 (${slow.hits.length} confirmations slowed): ${phases.join('; ')}; over the limit ${over.length} [${over.join(', ')}]; ` +
        `${new Set(rx.requests.map(token)).size}/${all.length} POSTed, twice ${[...per].filter(([, n]) => n > 1).map(([t]) => t).join(',') || 'none'}; left ${left}, count ${places.waiting}, live ${places.live}`,
    );
    expect(over).toEqual([]);
    expect([...per].filter(([, n]) => n > 1)).toEqual([]);
    expect(all.filter((t) => !per.has(t))).toEqual([]);
    expect(left).toBe(0);
    expect(places.waiting).toBe(0);
  } finally {
    await rx.close();
  }
});

it('max_in_flight 3 lowered to 1 just as 3 places are handed on (confirmations 1.5 s late): at most 3 open in the 4 s after, then at most 1', async () => {
  // The first 3 requests are held until 6 deliveries wait: on a loaded machine the publishes took
  // long enough for the backlog to drain as it formed (18 POSTed, none ever waiting).
  let letGo!: () => void;
  const rx = await startReceiver({ delayMs: 1500, holdUntil: new Promise<void>((r) => (letGo = r)) });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 3 });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    const changes: { at: number; max: number }[] = [{ at: Date.now(), max: 3 }];
    const slow = slowDynamoAnswers({ when: (c) => isConfirm(c) && onInFlight(stored.id)(c), ms: 1500, timing: 'before' });
    slow.arm();
    const tokens = Array.from({ length: 18 }, (_, i) => `tok-c-${i}`);
    await publish(topic, tokens);
    const waited = await until(async () => {
      const n = (await oldestWaiting(bed.ns.name, stored.id, 30)).length;
      return n >= 6 && n;
    }, 60_000, '6 waiting for a place').catch(async () => console.log(`not 6 waiting: ${rx.requests.length} POSTed, ${(await oldestWaiting(bed.ns.name, stored.id, 30)).length} waiting, ${JSON.stringify(await readPlaces(bed.ns.name, stored.id))}`));
    expect(waited).toBeGreaterThanOrEqual(6);
    letGo();
    // The first 3 end together: 3 hand-offs, their leases out for 1.5 s when the limit drops.
    await until(async () => rx.requests.filter((r) => r.endedAt !== undefined).length >= 3, 20_000, 'the first 3 ended');
    await sleep(200);
    await setMax(w.name, 1, changes);
    await until(async () => tokens.every((t) => rx.requests.some((r) => token(r) === t)), 180_000, 'every delivery POSTed').catch(() => undefined);
    await until(async () => (await oldestWaiting(bed.ns.name, stored.id, 5)).length === 0 && openNow(rx) === 0, 60_000, 'nothing waiting').catch(() => undefined);
    slow.stop();
    const per = new Map<string, number>();
    for (const t of rx.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
    const over = overLimit(rx.requests, changes);
    const after = rx.requests.filter((r) => r.at >= changes[1].at + 4000);
    const mostAfter = Math.max(0, ...after.map((r) => openAt(rx.requests, r.at)));
    const left = (await oldestWaiting(bed.ns.name, stored.id, 50)).length;
    const places = await readPlaces(bed.ns.name, stored.id);
    console.log(
      `3 → 1 at hand-off (${slow.hits.length} confirmations slowed), PATCHed at +${changes[1].at - changes[0].at} ms: over the limit ${over.length} [${over.join(', ')}]; most open 4 s after the change ${mostAfter}; ` +
        `${new Set(rx.requests.map(token)).size}/${tokens.length} POSTed, twice ${[...per].filter(([, n]) => n > 1).length}; left ${left}, count ${places.waiting}, live ${places.live}`,
    );
    expect(over).toEqual([]);
    expect([...per].filter(([, n]) => n > 1)).toEqual([]);
    expect(tokens.filter((t) => !per.has(t))).toEqual([]);
    expect(left).toBe(0);
    expect(places.waiting).toBe(0);
  } finally {
    await rx.close();
  }
});
