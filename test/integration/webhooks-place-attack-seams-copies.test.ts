/**
 * Two SQS copies of one job handed an in-flight place (`place_lease`): SQS standard queues deliver
 * a message at least once, and a send whose answer was lost and was sent again stores it twice.
 * Both copies come to the gate with the same lease. The endpoint must get one POST for that
 * delivery, never more than `max_in_flight` open at once, the place must not be leaked (later
 * deliveries not held for a lease's lapse) and the waiting count must come back to 0.
 */
import type { MiddlewareStack } from '@smithy/types';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { mostOpen, startReceiver, until, type Receiver, type ReceivedRequest } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { oldestWaiting } from '../../lambda/webhooks/storage/webhook-waiting';
import { readPlaces } from '../../lambda/webhooks/storage/webhook-limits';

jest.setTimeout(240_000);

const bed = webhookTestbed('wpseamcopy', { visibilitySeconds: 5 });

/** A request's payload token. */
const token = (r: ReceivedRequest) => /tok-[a-z0-9-]+/.exec(r.body.toString())?.[0] ?? '?';
/** When the first request carrying `t` arrived. */
const firstPost = (rx: Receiver, t: string) => rx.requests.find((r) => token(r) === t)?.at;

/**
 * Sends a second copy of the first job of `webhookId` that a hand-off sends carrying
 * `place_lease`, `delaySeconds` after the first (0: at once), to the same queue with the same
 * message group: as SQS would deliver a message twice. Notes the copied job's token and lease.
 */
function copyFirstHanded(webhookId: string, delaySeconds: number) {
  const name = `copy-handed-${Math.random()}`;
  const copied: { token: string; lease: string; at: number }[] = [];
  let armed = true;
  (sqsClient().middlewareStack as unknown as MiddlewareStack<object, object>).add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (!armed || (context as { commandName?: string }).commandName !== 'SendMessageBatchCommand') return out;
      const input = (args as { input: { QueueUrl?: string; Entries?: { Id?: string; MessageBody?: string; MessageGroupId?: string }[] } }).input;
      const e = (input.Entries ?? []).find((x) => {
        const j = JSON.parse(x.MessageBody ?? '{}') as { webhook_id?: string; place_lease?: string };
        return j.webhook_id === webhookId && typeof j.place_lease === 'string';
      });
      if (!e) return out;
      armed = false;
      const j = JSON.parse(e.MessageBody!) as { place_lease: string };
      copied.push({ token: /tok-[a-z0-9-]+/.exec(e.MessageBody!)?.[0] ?? '?', lease: j.place_lease, at: Date.now() });
      await sqsClient().send(
        new SendMessageBatchCommand({ QueueUrl: input.QueueUrl, Entries: [{ Id: 'copy', MessageBody: e.MessageBody, ...(e.MessageGroupId ? { MessageGroupId: e.MessageGroupId } : {}), ...(delaySeconds ? { DelaySeconds: delaySeconds } : {}) }] }),
      );
      return out;
    },
    { step: 'initialize', name },
  );
  return { copied, stop: () => (sqsClient().middlewareStack as unknown as MiddlewareStack<object, object>).remove(name) };
}

async function publish(topic: string, token: string): Promise<number> {
  const t = Date.now();
  const r = await bed.call('POST', `/topics/${topic}/messages`, { payload: token });
  expect(r.status).toBe(201);
  return t;
}

/** A busy request (`tok-busy-<i>`, 2 s) and a delivery published just after it that waits for its place: ms from its publish to its POST. */
async function pair(topic: string, rx: Receiver, i: number): Promise<number> {
  await publish(topic, `tok-busy-${i}`);
  await until(async () => firstPost(rx, `tok-busy-${i}`), 30_000, `busy ${i} POSTed`);
  const p = await publish(topic, `tok-next-${i}`);
  const at = await until(async () => firstPost(rx, `tok-next-${i}`), 150_000, `next ${i} POSTed`).catch(() => Infinity);
  return at - p;
}

describe.each([
  ['1 s after the first (its POST open)', 1],
  ['at once', 0],
])('a handed job copied %s', (_, delaySeconds) => {
  it('one POST for it, at most 1 open, the place not leaked, the waiting count back to 0', async () => {
    const rx = await startReceiver({ delayMs: (r) => (token(r).startsWith('tok-next') ? 0 : 2000) });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: rx.url, topic_filter: topic, retry_count: 0, timeout: 5, max_in_flight: 1 });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    const copy = copyFirstHanded(stored.id, delaySeconds);
    try {
      const tokens = Array.from({ length: 5 }, (_, i) => `tok-w${delaySeconds}-${i}`);
      await Promise.all(tokens.map((t) => publish(topic, t)));
      await until(async () => tokens.every((t) => firstPost(rx, t)), 60_000, 'every delivery POSTed').catch(() => undefined);
      await until(async () => copy.copied.length > 0, 10_000, 'a handed job copied').catch(() => undefined);
      // Settled: the copy's run over, nothing open.
      await until(async () => rx.requests.every((r) => r.endedAt !== undefined) && (await oldestWaiting(bed.ns.name, stored.id, 5)).length === 0, 30_000, 'settled').catch(() => undefined);
      await new Promise((r) => setTimeout(r, 3000));
      const mid = await readPlaces(bed.ns.name, stored.id);
      // Later deliveries: each waiting one handed its place when the busy one ends (about 2 s), not after a lapse.
      const later: number[] = [];
      for (let i = 0; i < 3; i++) later.push(await pair(topic, rx, i));
      const per = new Map<string, number>();
      for (const t of rx.requests.map(token)) per.set(t, (per.get(t) ?? 0) + 1);
      const left = (await oldestWaiting(bed.ns.name, stored.id, 10)).length;
      const end = await readPlaces(bed.ns.name, stored.id);
      const c = copy.copied[0];
      console.log(
        `copy ${delaySeconds ? `${delaySeconds} s later` : 'at once'}: copied ${c ? `${c.token} (lease ${c.lease.slice(0, 8)})` : 'nothing'}; POSTs of it ${c ? per.get(c.token) ?? 0 : '-'}; ` +
          `POSTed twice ${[...per].filter(([, n]) => n > 1).map(([t, n]) => `${t}x${n}`).join(',') || 'none'}; most open ${mostOpen(rx.requests)}; ` +
          `after settling live ${mid.live}, count ${mid.waiting}; later waiting deliveries POSTed ${later.join(', ')} ms after publish; left ${left}, count ${end.waiting}, live ${end.live}`,
      );
      expect(copy.copied.length).toBe(1);
      expect(per.get(c.token)).toBe(1);
      expect([...per].filter(([, n]) => n > 1)).toEqual([]);
      expect(mostOpen(rx.requests)).toBe(1);
      expect(mid.live).toBe(0);
      expect(mid.waiting).toBe(0);
      expect(Math.max(...later)).toBeLessThan(8000);
      expect(left).toBe(0);
      expect(end.waiting).toBe(0);
    } finally {
      copy.stop();
      await rx.close();
    }
  });
});
