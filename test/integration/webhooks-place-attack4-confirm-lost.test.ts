/**
 * The lease move of a handed job (lambda/webhooks/storage/webhook-limits.ts `confirmLease`) applied
 * but its answer lost (the caller sees an error), while a second SQS copy of that handed job is on
 * the queue. The delivery must be POSTed once, never more than `max_in_flight` open at once, the
 * deliveries behind it must go in bounded time (the moved lease, which no one holds, lapses at
 * worst), and nothing may be left waiting with the count back at 0.
 */
import type { MiddlewareStack } from '@smithy/types';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { startReceiver, until, type ReceivedRequest } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(300_000);

const bed = webhookTestbed('wpa4conf', { visibilitySeconds: 5 });

/** A request's payload token. */
const token = (r: ReceivedRequest) => /tok-[a-z0-9-]+/.exec(r.body.toString())?.[0] ?? '?';
const onInFlight = (id: string) => (c: RecordedCall) => String(c.input.Key?.pk ?? '').endsWith(`#WHINFL#${id}`);
const isConfirm = (c: RecordedCall) => /^Update/.test(c.command) && c.input.ConditionExpression === 'leases.#l > :now';

function mostOpen(reqs: Pick<ReceivedRequest, 'at' | 'answeredAt'>[]): number {
  const ev = reqs.flatMap((r) => [[r.at, 1], [r.answeredAt ?? Infinity, -1]] as [number, number][]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let n = 0;
  let most = 0;
  for (const [, d] of ev) most = Math.max(most, (n += d));
  return most;
}

/** A second copy of every job of `webhookId` a hand-off sends carrying `place_lease` (at most `times`), `delaySeconds` after it. */
function copyHanded(webhookId: string, delaySeconds: number, times: number) {
  const name = `copy-handed-${Math.random()}`;
  const copied: { token: string; lease: string }[] = [];
  (sqsClient().middlewareStack as unknown as MiddlewareStack<object, object>).add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (copied.length >= times || (context as { commandName?: string }).commandName !== 'SendMessageBatchCommand') return out;
      const input = (args as { input: { QueueUrl?: string; Entries?: { Id?: string; MessageBody?: string; MessageGroupId?: string }[] } }).input;
      const es = (input.Entries ?? []).filter((x) => {
        const j = JSON.parse(x.MessageBody ?? '{}') as { webhook_id?: string; place_lease?: string };
        return j.webhook_id === webhookId && typeof j.place_lease === 'string';
      });
      for (const e of es.slice(0, times - copied.length)) {
        const j = JSON.parse(e.MessageBody!) as { place_lease: string };
        copied.push({ token: /tok-[a-z0-9-]+/.exec(e.MessageBody!)?.[0] ?? '?', lease: j.place_lease });
        await sqsClient().send(
          new SendMessageBatchCommand({ QueueUrl: input.QueueUrl, Entries: [{ Id: 'copy', MessageBody: e.MessageBody, ...(e.MessageGroupId ? { MessageGroupId: e.MessageGroupId } : {}), ...(delaySeconds ? { DelaySeconds: delaySeconds } : {}) }] }),
        );
      }
      return out;
    },
    { step: 'initialize', name },
  );
  return { copied, stop: () => (sqsClient().middlewareStack as unknown as MiddlewareStack<object, object>).remove(name) };
}

it.each([
  ['max_in_flight 1, the copy at once', 1, 0],
  ['max_in_flight 2, the copy 1 s later', 2, 1],
])('%s: the first 3 lease moves applied with their answers lost: each POSTed once, within the limit, the rest in bounded time, nothing left waiting', async (_, max, delaySeconds) => {
  const rx = await startReceiver({ delayMs: 800 });
  try {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: max });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    const copy = copyHanded(stored.id, delaySeconds, 3);
    const lost = injectDynamoFault({ when: (c) => isConfirm(c) && onInFlight(stored.id)(c), mode: 'after', times: 3, name: 'TimeoutError' });
    lost.arm();
    try {
      const from = Date.now();
      const tokens = Array.from({ length: 12 }, (_, i) => `tok-${i}`);
      await Promise.all(tokens.map((t) => bed.call('POST', `/topics/${topic}/messages`, { payload: t }).then((r) => expect(r.status).toBe(201))));
      const all = await until(async () => tokens.every((t) => rx.requests.some((r) => token(r) === t)) && Date.now(), 180_000, 'every delivery POSTed').catch(() => Infinity);
      await until(async () => (await oldestWaiting(bed.ns.name, stored.id, 5)).length === 0 && rx.requests.every((r) => r.answeredAt !== undefined), 60_000, 'nothing waiting').catch(() => undefined);
      await new Promise((r) => setTimeout(r, 5000));
      const per = new Map<string, number>();
      for (const t of rx.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
      // The longest gap between one request's end and the next one's start while deliveries were left.
      const sorted = [...rx.requests].sort((a, b) => a.at - b.at);
      let gap = 0;
      for (let i = 1; i < sorted.length; i++) gap = Math.max(gap, sorted[i].at - Math.max(...sorted.slice(0, i).map((r) => r.answeredAt ?? Infinity)));
      const left = (await oldestWaiting(bed.ns.name, stored.id, 50)).length;
      const places = await readPlaces(bed.ns.name, stored.id);
      console.log(
        `${_}: ${lost.hits.length} lease moves lost (${lost.hits.map((h) => h.refusedWith ?? 'applied').join(',')}), copied ${copy.copied.map((c) => c.token).join(',')}; every delivery POSTed ${all - from} ms after the publishes; ` +
          `most open ${mostOpen(rx.requests)} (limit ${max}); POSTed twice ${[...per].filter(([, n]) => n > 1).map(([t, n]) => `${t}x${n}`).join(',') || 'none'}; longest idle gap ${gap} ms; left ${left}, count ${places.waiting}, live ${places.live}`,
      );
      expect(lost.hits.length).toBeGreaterThan(0);
      expect([...per].filter(([, n]) => n > 1)).toEqual([]);
      expect(tokens.filter((t) => !per.has(t))).toEqual([]);
      expect(mostOpen(rx.requests)).toBeLessThanOrEqual(max);
      expect(all - from).toBeLessThan(150_000);
      expect(left).toBe(0);
      expect(places.waiting).toBe(0);
    } finally {
      lost.stop();
      copy.stop();
    }
  } finally {
    await rx.close();
  }
});
