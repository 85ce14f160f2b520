/**
 * Ordered (FIFO) queue actors (docs/publishing-and-queues.md "Ordered queues"): publishers that
 * send each `partition_key`'s messages one after the other (so the order of their 201s is the
 * order the queue promises), and consumers with random visibilities that ack most of what they
 * get. Every receive is recorded with when its consume was sent and answered, and when its ack was
 * sent, for ./checkers-fifo.ts.
 */
import { markerOf, type Ledger } from './ledger';
import type { World } from './world';

export interface FifoReceive {
  marker: string;
  id: string;
  consumer: string;
  /** The consume that returned it: sent and answered (ms). */
  sentAt: number;
  answeredAt: number;
  visibility: number;
  /** When its ack was sent (undefined: never acked by this receive). */
  ackSentAt?: number;
  step: number;
}

export interface FifoSeen {
  receives: FifoReceive[];
}

export const newFifoSeen = (): FifoSeen => ({ receives: [] });

/** Markers are `f{step}.{group}.{seq}[.{item}]`; the group is the first two parts. */
export const fifoGroupOf = (marker: string) => marker.split('.').slice(0, 2).join('.');

/** One consume of the ordered queue; acks each message in order when `ack(random)` says so. */
async function fifoConsume(ledger: Ledger, queue: string, seen: FifoSeen, o: { consumer: string; max: number; visibility: number; step: number; ack: () => boolean }): Promise<number> {
  const sentAt = Date.now();
  const got = await ledger.call('fifo-consumer', 'POST', `/queues/${queue}/messages/consume`, { max_messages: o.max, timeout_seconds: 1, visibility_timeout_seconds: o.visibility, consumer_id: o.consumer });
  const answeredAt = Date.now();
  if (got.status !== 200) return 0;
  const msgs = got.body!.data.messages as { message_id: string; payload: string; receipt_handle: string }[];
  const rs = msgs.map((m) => ({ marker: markerOf(m.payload) ?? '?', id: m.message_id, consumer: o.consumer, sentAt, answeredAt, visibility: o.visibility, step: o.step }) as FifoReceive);
  seen.receives.push(...rs);
  for (let i = 0; i < msgs.length; i++) {
    if (!o.ack()) continue;
    rs[i].ackSentAt = Date.now();
    await ledger.call('fifo-consumer', 'POST', `/queues/${queue}/messages/${msgs[i].message_id}/ack`, { receipt_handle: msgs[i].receipt_handle });
  }
  return msgs.length;
}

export async function actFifo(w: World, seen: FifoSeen, a: { groups: number; n: number; consumers: number; rounds: number }, step: number, random: () => number): Promise<void> {
  const { ledger, names } = w;
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  // Drawn before anything runs, so the seed names the history whatever the engines do.
  const plans = Array.from({ length: a.groups }, () => Array.from({ length: a.n }, () => (random() < 0.3 ? int(2, 4) : 1)));
  const consumers = Array.from({ length: a.consumers }, () => Array.from({ length: a.rounds }, () => ({ max: int(1, 10), visibility: int(2, 6) })));
  const publishers = plans.map(async (sizes, g) => {
    for (let seq = 0; seq < sizes.length; seq++) {
      const base = `f${step}.${g}.${seq}`;
      const markers = sizes[seq] > 1 ? Array.from({ length: sizes[seq] }, (_, i) => `${base}.${i}`) : [base];
      await ledger.publish('fifo-publisher', `${names.root}/f/x`, markers, { partition_key: `f${step}-${g}` });
    }
  });
  const consuming = consumers.map(async (rounds, c) => {
    for (const r of rounds) await fifoConsume(ledger, names.fifo, seen, { consumer: `f${step}c${c}`, max: r.max, visibility: r.visibility, step, ack: () => random() < 0.85 });
  });
  await Promise.all([...publishers, ...consuming]);
}

/** The drain of the ordered queue: consumes and acks until SQS holds nothing or nothing came for 20 s. */
export async function drainFifo(w: World, seen: FifoSeen, step: number): Promise<void> {
  const until = Date.now() + 90_000;
  let lastGot = Date.now();
  let done = false;
  await Promise.all(
    [0, 1, 2].map(async (c) => {
      while (!done && Date.now() < until && Date.now() - lastGot < 20_000) {
        const n = await fifoConsume(w.ledger, w.names.fifo, seen, { consumer: `drain${c}`, max: 10, visibility: 5, step, ack: () => true });
        if (n) lastGot = Date.now();
        else if ((await w.sqsCount(w.names.fifo)) === 0) done = true;
      }
    }),
  );
}
