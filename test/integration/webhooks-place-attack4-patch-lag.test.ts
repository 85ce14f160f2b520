/**
 * A PATCH lowering `max_in_flight` just before places are handed on: the hand-off reads the
 * webhook's limits eventually consistently (lambda/webhooks/place-wait.ts `limitsNow`), so for up
 * to a second after the PATCH it hands on as many places as the old limit allowed. The promise is
 * the new limit from 4 s after the change: a request that starts 4 s or more after the PATCH must
 * find no more requests open (itself counted) than the new limit.
 *
 * Confirmations of handed leases reach the table late here (a slow DynamoDB on the in-flight
 * item's lease moves, 3.5 s), which stretches the handed job's way from the hand-off to its POST.
 * With the limits read strongly (MSG_AWS_HARSH_EC_READS=0: DynamoDB Local answers every read with
 * the latest write) the same case hands on 1 place after the PATCH and passes; with the harsh
 * layer's 1 s lag (the default) the hand-offs 0.6 s after the PATCH hand on 3 places under the
 * old limit, whose requests start 4.2 to 4.7 s after the PATCH with 2 and 3 open.
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

const bed = webhookTestbed('wpa4lag', { visibilitySeconds: 5 });

/** A request's payload token. */
const token = (r: ReceivedRequest) => /tok-[a-z0-9-]+/.exec(r.body.toString())?.[0] ?? '?';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const onInFlight = (id: string) => (c: RecordedCall) => String(c.input.Key?.pk ?? '').endsWith(`#WHINFL#${id}`);
const isConfirm = (c: RecordedCall) => /^Update/.test(c.command) && c.input.ConditionExpression === 'leases.#l > :now';

async function publish(topic: string, tokens: string[]) {
  await Promise.all(tokens.map((t) => bed.call('POST', `/topics/${topic}/messages`, { payload: t }).then((r) => expect(r.status).toBe(201))));
}

it.each([
  ['confirmations', 3500, 600],
])('max_in_flight 3 → 1, %s %i ms late, the 3 open requests end %i ms after the PATCH: no request starting 4 s after the PATCH finds more than 1 open', async (what, slowMs, endAfterMs) => {
  let letGo!: () => void;
  // The first 3 requests are held until we let them go, then answer at once; later ones take 2 s.
  const rx = await startReceiver({ delayMs: (_, n) => (n <= 3 ? 0 : 2000), holdUntil: new Promise<void>((r) => (letGo = r)) });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 10, max_in_flight: 3 });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    const slow = slowDynamoAnswers({ when: (c) => isConfirm(c) && onInFlight(stored.id)(c), ms: slowMs, timing: 'before' });
    const tokens = Array.from({ length: 12 }, (_, i) => `tok-${i}`);
    await publish(topic, tokens);
    await until(async () => rx.requests.length >= 3 && (await oldestWaiting(bed.ns.name, stored.id, 20)).length >= 6, 60_000, '3 open and 6 waiting');
    // Settled: no hand-off under way before the PATCH (the waiting deliveries are all parked).
    await sleep(2500);
    slow.arm();
    const patchAt = Date.now();
    expect((await bed.call('PATCH', `/webhooks/${w.name}`, { max_in_flight: 1 })).status).toBe(200);
    // The PATCH's answer came back: from now the API shows 1.
    const patched = Date.now();
    await sleep(Math.max(0, endAfterMs - (patched - patchAt)));
    const endedAt = Date.now();
    letGo();
    await until(async () => tokens.every((t) => rx.requests.some((r) => token(r) === t)), 180_000, 'every delivery POSTed').catch(() => undefined);
    await until(async () => (await oldestWaiting(bed.ns.name, stored.id, 5)).length === 0 && openNow(rx) === 0, 60_000, 'nothing waiting').catch(() => undefined);
    slow.stop();
    const late = rx.requests.filter((r) => r.at >= patched + 4000);
    const over = late.filter((r) => openAt(rx.requests, r.at) > 1).map((r) => `${token(r)}@+${r.at - patched}ms open ${openAt(rx.requests, r.at)}`);
    const starts = rx.requests.slice(3).map((r) => `${token(r)}@+${r.at - patched}ms(open ${openAt(rx.requests, r.at)})`);
    const per = new Map<string, number>();
    for (const t of rx.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
    const left = (await oldestWaiting(bed.ns.name, stored.id, 50)).length;
    const places = await readPlaces(bed.ns.name, stored.id);
    console.log(
      `3 → 1, PATCH answered in ${patched - patchAt} ms, the 3 open ended at +${endedAt - patched} ms, ${slow.hits.length} calls (${what}) ${slowMs} ms late: ` +
        `starts after the first 3 [${starts.join(', ')}]; starting 4 s or more after the PATCH with more than 1 open: ${over.length} [${over.join(', ')}]; ` +
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
