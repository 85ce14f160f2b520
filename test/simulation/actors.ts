/**
 * The actors: what each action of a step (./plan.ts) sends, all through the ledger. What they saw
 * (receives, acks, cancels, schedules created) goes into `Seen`, which the checkers read with the
 * ledger.
 */
import { markerOf } from './ledger';
import type { Action } from './plan';
import type { World } from './world';
import { actWebhooks, newWebhookSeen, type WebhookSeen } from './actors-webhooks';
import { actFifo, newFifoSeen, type FifoSeen } from './actors-fifo';
import { actStreamGroups, lateChunkRule, newStreamGroupSeen, type LateChunk, type StreamGroupSeen } from './actors-streams';
import { actSubscribers, newSubscriberSeen, type SubscriberSeen } from './actors-subscribers';
import { actRedrive, newRedriveSeen, type RedriveSeen } from './actors-redrive';
import { actYoungQueue, newYoungSeen, type YoungSeen } from './actors-young';

interface Receive {
  marker: string;
  id: string;
  /** When the consume that returned it was sent. */
  sentAt: number;
  step: number;
}

export interface Seen {
  /** Markers answered 201 for the stream's topic, by step (the read-your-writes check reads them). */
  streamByStep: Map<number, string[]>;
  workReceives: Receive[];
  /** Work-queue markers whose ack answered acknowledged, with the answer's time. */
  workAcked: Map<string, number>;
  /** Idempotency-Key pairs sent at once: both 201 must name one message. */
  idempotent: { key: string; ids: string[]; step: number }[];
  /** Held message ids (delay beyond 900 s) answered 201, and those whose cancel answered 200. */
  held: Map<string, number>;
  cancelled: Set<string>;
  /** Held message ids whose cancel answered 5xx: cancelled or not, its room maybe not given back (a client retries it). */
  cancelUnsure: Set<string>;
  /** Schedules answered 201: name, first run time (ms), step. */
  schedules: { name: string; startAt: number; step: number }[];
  poison: string[];
  hooks: WebhookSeen;
  fifo: FifoSeen;
  streamGroups: StreamGroupSeen;
  /** Chunk puts held past the settle time (./actors-streams.ts `lateChunkRule`). */
  lateChunks: LateChunk[];
  subscribers: SubscriberSeen;
  redrive: RedriveSeen;
  young: YoungSeen;
}

export const newSeen = (): Seen => ({ streamByStep: new Map(), workReceives: [], workAcked: new Map(), idempotent: [], held: new Map(), cancelled: new Set(), cancelUnsure: new Set(), schedules: [], poison: [], hooks: newWebhookSeen(), fifo: newFifoSeen(), streamGroups: newStreamGroupSeen(), lateChunks: [], subscribers: newSubscriberSeen(), redrive: newRedriveSeen(), young: newYoungSeen() });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function act(w: World, seen: Seen, a: Action, step: number, random: () => number): Promise<void> {
  const { ledger, names } = w;
  const r = names.root;
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  switch (a.kind) {
    case 'stream-burst': {
      const requests = Array.from({ length: a.n }, (_, i) => {
        const size = random() < a.batchShare ? int(2, 5) : 1;
        const markers = Array.from({ length: size }, (_, j) => `s${step}.${i}.${j}.${int(0, 1e6)}`);
        const extra = random() < 0.3 ? { partition_key: `k${int(0, 7)}` } : {};
        return { markers, extra };
      });
      const done: string[] = [];
      const slow = { service: 'dynamodb' as const, ms: [0, a.slowMs] as [number, number], share: a.slowShare, phase: a.slowAfter ? ('after' as const) : ('before' as const) };
      // The late chunk's rule first: the injector applies the first rule that matches a call.
      const late = a.lateChunk ? lateChunkRule(w, step, seen.lateChunks) : undefined;
      if (late) w.injector.addLatency(late);
      w.injector.addLatency(slow);
      await Promise.all(
        requests.map(async (q) => {
          const ans = await ledger.publish('stream-publisher', `${r}/s/x`, q.markers, q.extra);
          if (ans.status === 201) done.push(...q.markers);
        }),
      );
      w.injector.removeLatency(slow);
      if (late) w.injector.removeLatency(late);
      seen.streamByStep.set(step, [...(seen.streamByStep.get(step) ?? []), ...done]);
      return;
    }
    case 'queue-publish': {
      await Promise.all(
        Array.from({ length: a.n }, async (_, i) => {
          const m = `w${step}.${i}.${int(0, 1e6)}`;
          const p = random();
          if (p < 0.5) return ledger.publish('queue-publisher', `${r}/w/a`, [m]);
          if (p < 0.7) return ledger.publish('queue-publisher', `${r}/w/a`, Array.from({ length: int(2, 10) }, (_, j) => `${m}.${j}`));
          if (p < 0.85) {
            // One key sent twice at once (a client that retried before the first answer came).
            const key = `k-${m}`;
            const both = await Promise.all([0, 1].map(() => ledger.publish('idempotent-publisher', `${r}/w/a`, [m], {}, { 'Idempotency-Key': key })));
            seen.idempotent.push({ key, ids: both.filter((x) => x.status === 201).map((x) => x.body!.data.message_id as string), step });
            return;
          }
          return random() < 0.5
            ? ledger.publish('queue-publisher', `${r}/w/a`, [m], { delay_seconds: int(1, 4) })
            : ledger.publish('queue-publisher', `${r}/w/a`, [m], { deliver_at: new Date(Date.now() + int(1000, 4000)).toISOString() });
        }),
      );
      return;
    }
    case 'queue-consume': {
      // Every other step, half the work queue's receives are answered 0.5 to 3 s late, after SQS
      // applied them: the consumer gets its handles late in their visibility (1 to 10 s) and acks
      // them near its end, where an ack must first hold the message (lambda/queues/ack.ts) or
      // answer 200 for a delete SQS may ignore, and the message comes back after its ack
      // (checkers.ts, "received after its ack"). No draw from the step's random: histories stay.
      const workUrl = step % 2 === 0 ? await w.sqsUrl(names.work) : undefined;
      const slowReceive = workUrl
        ? { service: 'sqs' as const, command: 'ReceiveMessageCommand', ms: [500, 3000] as [number, number], share: 0.5, phase: 'after' as const, matches: (i: Record<string, unknown>) => i.QueueUrl === workUrl }
        : undefined;
      if (slowReceive) w.injector.addLatency(slowReceive);
      try {
        await consumeWork(w, seen, a, step, random);
      } finally {
        if (slowReceive) w.injector.removeLatency(slowReceive);
      }
      return;
    }
    case 'held': {
      const ids: string[] = [];
      await Promise.all(
        Array.from({ length: a.n }, async (_, i) => {
          const m = `h${step}.${i}.${int(0, 1e6)}`;
          const extra = random() < 0.7 ? { delay_seconds: int(1000, 7200) } : { deliver_at: new Date(Date.now() + int(1000, 7200) * 1000).toISOString() };
          const ans = await ledger.publish('held-publisher', `${r}/h/x`, [m], extra);
          if (ans.status === 201) {
            seen.held.set(ans.body!.data.message_id, step);
            ids.push(ans.body!.data.message_id);
          }
          // And an ordinary message beside it, consumed and acked below.
          await ledger.publish('held-publisher', `${r}/h/x`, [`${m}.now`]);
        }),
      );
      // And a batch due in the same minute: one pack (lambda/schedules/storage/held-packs.ts), its messages
      // cancelled one by one below like the others. No draw from the seed's random: plans stay.
      const pack = await ledger.publish('held-publisher', `${r}/h/x`, [0, 1, 2].map((k) => `h${step}.pack.${k}`), { delay_seconds: 3600 });
      if (pack.status === 201) {
        for (const id of pack.body!.data.message_ids as string[]) {
          seen.held.set(id, step);
          ids.push(id);
        }
      }
      const candidates = [...seen.held.keys()].filter((id) => !seen.cancelled.has(id));
      await Promise.all(
        Array.from({ length: Math.min(a.cancels, candidates.length) }, async () => {
          const id = candidates.splice(int(0, candidates.length - 1), 1)[0];
          const ans = await ledger.call('canceller', 'DELETE', `/messages/${id}/delivery`);
          if (ans.status === 200) seen.cancelled.add(id);
          if (ans.status >= 500) seen.cancelUnsure.add(id);
        }),
      );
      const got = await ledger.call('held-consumer', 'POST', `/queues/${names.held}/messages/consume`, { max_messages: 10, timeout_seconds: 1, visibility_timeout_seconds: 30 });
      if (got.status === 200) {
        const msgs = got.body!.data.messages as { message_id: string; receipt_handle: string }[];
        if (msgs.length) await ledger.call('held-consumer', 'POST', `/queues/${names.held}/messages/ack`, { entries: msgs.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) });
      }
      return;
    }
    case 'poison': {
      const markers = Array.from({ length: a.n }, (_, i) => `p${step}.${i}.${int(0, 1e6)}`);
      const ans = await ledger.publish('poison-publisher', `${r}/p/x`, markers);
      if (ans.status === 201) seen.poison.push(...markers);
      // Consumers that never ack, with a visibility (1 s) shorter than the dead-letter send: the
      // settle of an exhausted message then meets a message SQS has handed out again.
      const deadUrl = await w.sqsUrl(names.dead);
      const slow = { service: 'sqs' as const, command: 'SendMessageBatchCommand', ms: a.dlqDelayMs, matches: (i: Record<string, unknown>) => i.QueueUrl === deadUrl };
      w.injector.addLatency(slow);
      const until = Date.now() + 5000;
      await Promise.all(
        Array.from({ length: a.consumers }, async () => {
          while (Date.now() < until) {
            const got = await ledger.call('poison-consumer', 'POST', `/queues/${names.poison}/messages/consume`, { max_messages: 10, timeout_seconds: 1, visibility_timeout_seconds: 1 });
            if (got.status !== 200) await sleep(200);
          }
        }),
      );
      w.injector.removeLatency(slow);
      return;
    }
    case 'fifo':
      return actFifo(w, seen.fifo, a, step, random);
    case 'stream-groups':
      return actStreamGroups(w, seen.streamGroups, a, step, random);
    case 'subscribers':
      return actSubscribers(w, seen.subscribers, a, step, random);
    case 'redrive':
      return actRedrive(w, seen.redrive, a, step);
    case 'young-queue':
      return actYoungQueue(w, seen.young, a, step);
    case 'webhook-publish':
    case 'dead-endpoint':
    case 'replay':
    case 'rate-change':
      return actWebhooks(w, seen, a, step, random);
    case 'schedules': {
      // All due at one second, 12 s from now; one run each (end_at before the second).
      const startAt = Math.ceil(Date.now() / 1000) * 1000 + 12_000;
      await Promise.all(
        Array.from({ length: a.n }, async (_, i) => {
          const name = `${r}-sc${step}-${i}`;
          const ans = await ledger.call('scheduler-admin', 'POST', '/schedules', {
            name,
            every: 60,
            topic: `${r}/t/x`,
            payload: '{"m":"{{.schedule}}@{{.scheduled_time}}"}',
            start_at: new Date(startAt).toISOString(),
            end_at: new Date(startAt + 30_000).toISOString(),
          });
          // Its first run is the start, unless the create answered after it (a slow create under
          // the burst): then the next one, after end_at, so no run is due.
          if (ans.status === 201 && ans.body!.data.next_run_at === new Date(startAt).toISOString()) seen.schedules.push({ name, startAt, step });
        }),
      );
      return;
    }
  }
}

/** The work queue's consumers of one `queue-consume` step: random visibility, then ack, batch ack, no ack, or release. */
async function consumeWork(w: World, seen: Seen, a: Extract<Action, { kind: 'queue-consume' }>, step: number, random: () => number): Promise<void> {
  const { ledger, names } = w;
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  await Promise.all(
    Array.from({ length: a.consumers }, async (_, c) => {
      for (let round = 0; round < a.rounds; round++) {
        const release = random() < 0.1;
        const sentAt = Date.now();
        const got = await ledger.call('queue-consumer', 'POST', `/queues/${names.work}/messages/consume`, {
          max_messages: int(1, 10),
          timeout_seconds: 1,
          visibility_timeout_seconds: release ? 0 : int(1, 10),
          consumer_id: `c${c}`,
        });
        if (got.status !== 200) continue;
        const msgs = got.body!.data.messages as { message_id: string; payload: string; receipt_handle: string }[];
        for (const m of msgs) seen.workReceives.push({ marker: markerOf(m.payload) ?? '?', id: m.message_id, sentAt, step });
        if (release || !msgs.length) continue;
        const how = random();
        if (how < 0.4) {
          await Promise.all(
            msgs.map(async (m) => {
              const ack = await ledger.call('queue-consumer', 'POST', `/queues/${names.work}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle });
              if (ack.status === 200) seen.workAcked.set(markerOf(m.payload) ?? '?', Date.now());
            }),
          );
        } else if (how < 0.7) {
          const ack = await ledger.call('queue-consumer', 'POST', `/queues/${names.work}/messages/ack`, { entries: msgs.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) });
          if (ack.status === 200) {
            const results = ack.body!.data.results as { message_id: string; acknowledged: boolean }[];
            for (const res of results) if (res.acknowledged) seen.workAcked.set(markerOf(msgs.find((m) => m.message_id === res.message_id)!.payload) ?? '?', Date.now());
          }
        }
        // Otherwise no ack: it comes back after its visibility.
      }
    }),
  );
}
