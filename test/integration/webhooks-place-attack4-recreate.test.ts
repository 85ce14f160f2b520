/**
 * A webhook deleted and created again with the same name (a new incarnation, a new id) while the
 * old one's deliveries wait for an in-flight place. A hand-off reads the limits by the webhook's
 * name, eventually consistently (lambda/webhooks/place-wait.ts `limitsNow`): for about a second it
 * may see the old incarnation (or none) where the new one is. The old incarnation's waiting
 * deliveries must all end (dropped: their webhook is gone) without a POST, the new one's must each
 * be POSTed once within its own `max_in_flight`, and both waiting partitions and counts must empty.
 */
import { startReceiver, until, type ReceivedRequest } from '../fixtures/receiver';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(300_000);

const bed = webhookTestbed('wpa4recreate', { visibilitySeconds: 5 });

/** A request's payload token. */
const token = (r: ReceivedRequest) => /tok-[a-z0-9-]+/.exec(r.body.toString())?.[0] ?? '?';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The most requests open at once among `reqs` (one never answered stays open). */
function mostOpen(reqs: Pick<ReceivedRequest, 'at' | 'answeredAt'>[]): number {
  const ev = reqs.flatMap((r) => [[r.at, 1], [r.answeredAt ?? Infinity, -1]] as [number, number][]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let n = 0;
  let most = 0;
  for (const [, d] of ev) most = Math.max(most, (n += d));
  return most;
}

async function publish(topic: string, tokens: string[]) {
  await Promise.all(tokens.map((t) => bed.call('POST', `/topics/${topic}/messages`, { payload: t }).then((r) => expect(r.status).toBe(201))));
}

async function create(name: string, fields: Record<string, unknown>) {
  const r = await bed.call('POST', '/webhooks', { name, ...fields });
  expect(r.status).toBe(201);
  return (await getWebhook(bed.ns.name, name))!;
}

it.each([
  ['max_in_flight 1 again', 1, 0],
  ['max_in_flight 2, the old one 1', 2, 0],
  ['max_in_flight 1, recreated 300 ms after the delete', 1, 300],
])('re-created with the same name (%s) while 8 of the old one wait: old waiting dropped unPOSTed, new each POSTed once within its limit, nothing left waiting', async (_, newMax, gapMs) => {
  let letGo!: () => void;
  const rx = await startReceiver({ delayMs: 700, holdUntil: new Promise<void>((r) => (letGo = r)) });
  try {
    const topic = unique('t');
    const name = unique('wh');
    const fields = { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5 };
    const a = await create(name, { ...fields, max_in_flight: 1 });
    const olds = Array.from({ length: 10 }, (_, i) => `tok-a-${i}`);
    await publish(topic, olds);
    await until(async () => (await oldestWaiting(bed.ns.name, a.id, 20)).length >= 8, 60_000, '8 of the old one waiting');
    const deletedAt = Date.now();
    expect((await bed.call('DELETE', `/webhooks/${name}`)).status).toBeLessThan(300);
    await sleep(gapMs);
    const b = await create(name, { ...fields, max_in_flight: newMax });
    expect(b.id).not.toBe(a.id);
    // The old one's open request ends now, its place handed on while the new item is under a second old.
    letGo();
    const news = Array.from({ length: 12 }, (_, i) => `tok-b-${i}`);
    await publish(topic, news);
    const from = Date.now();
    await until(async () => news.every((t) => rx.requests.some((r) => token(r) === t)), 150_000, 'every delivery of the new one POSTed').catch(() => undefined);
    const drained = await until(
      async () => (await oldestWaiting(bed.ns.name, a.id, 5)).length === 0 && (await oldestWaiting(bed.ns.name, b.id, 5)).length === 0 && rx.requests.every((r) => r.answeredAt !== undefined) && Date.now(),
      120_000,
      'both waiting partitions empty',
    ).catch(() => Infinity);
    await sleep(3000);
    const per = new Map<string, number>();
    for (const t of rx.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
    const oldAfter = rx.requests.filter((r) => token(r).startsWith('tok-a') && r.at > deletedAt + 200).map((r) => `${token(r)}@+${r.at - deletedAt}ms`);
    const newReqs = rx.requests.filter((r) => token(r).startsWith('tok-b'));
    const [leftA, leftB, pa, pb] = await Promise.all([oldestWaiting(bed.ns.name, a.id, 50), oldestWaiting(bed.ns.name, b.id, 50), readPlaces(bed.ns.name, a.id), readPlaces(bed.ns.name, b.id)]);
    const s = (await bed.call('GET', `/webhooks/${name}/status`)).body.data;
    console.log(
      `recreated (${_}): old POSTs after the DELETE ${oldAfter.length} [${oldAfter.join(', ')}]; new ${new Set(newReqs.map(token)).size}/${news.length} POSTed, most open of the new ${mostOpen(newReqs)} (limit ${newMax}), of all ${mostOpen(rx.requests)}; ` +
        `POSTed twice ${[...per].filter(([, n]) => n > 1).map(([t, n]) => `${t}x${n}`).join(',') || 'none'}; drained ${drained - from} ms after the new publishes; ` +
        `old: left ${leftA.length}, count ${pa.waiting}, live ${pa.live}, check ${pa.checkAt ?? '-'}; new: left ${leftB.length}, count ${pb.waiting}, live ${pb.live}, check ${pb.checkAt ?? '-'}; status success ${s.success_count} failure ${s.failure_count}`,
    );
    expect(oldAfter).toEqual([]);
    expect(news.filter((t) => !per.has(t))).toEqual([]);
    expect([...per].filter(([, n]) => n > 1)).toEqual([]);
    expect(mostOpen(newReqs)).toBeLessThanOrEqual(newMax);
    expect(drained - from).toBeLessThan(90_000);
    expect(leftA.length).toBe(0);
    expect(leftB.length).toBe(0);
    expect(pa.waiting).toBe(0);
    expect(pb.waiting).toBe(0);
  } finally {
    letGo();
    await rx.close();
  }
});
