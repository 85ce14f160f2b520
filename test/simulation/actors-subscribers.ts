/**
 * Subscription readers (docs/streams-and-subscriptions.md "Subscriptions"): several subscriber ids
 * of the run, each consumed by several requests at once with the same id. Every message each
 * consume returned is recorded per subscriber for ./checkers-subscribers.ts; at the end each
 * subscriber reads to the end (`drainSubscribers`).
 */
import { markerOf } from './ledger';
import type { World } from './world';

export interface SubscriberSeen {
  /** Subscriber id → what each of its consumes returned: markers and the step. */
  got: Map<string, { markers: string[]; step: number }[]>;
}

export const newSubscriberSeen = (): SubscriberSeen => ({ got: new Map() });

async function consume(w: World, seen: SubscriberSeen, id: string, max: number, step: number): Promise<number> {
  const a = await w.ledger.call('subscriber', 'POST', `/subscriptions/${w.names.subscription}/messages/consume`, { subscriber_id: id, max_messages: max, timeout_seconds: 0 });
  if (a.status !== 200) return -1;
  const markers = (a.body!.data.messages as { payload: string }[]).map((m) => markerOf(m.payload) ?? '?');
  seen.got.set(id, [...(seen.got.get(id) ?? []), { markers, step }]);
  return markers.length;
}

export async function actSubscribers(w: World, seen: SubscriberSeen, a: { subscribers: number; concurrent: number; rounds: number }, step: number, random: () => number): Promise<void> {
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const plans = Array.from({ length: a.subscribers }, () => Array.from({ length: a.rounds }, () => Array.from({ length: a.concurrent }, () => int(1, 100))));
  await Promise.all(
    plans.map(async (rounds, s) => {
      for (const maxes of rounds) await Promise.all(maxes.map((max) => consume(w, seen, `${w.names.root}-sub${s}`, max, step)));
    }),
  );
}

/** Each subscriber of the run reads until a consume returns nothing (retrying refusals a few times). */
export async function drainSubscribers(w: World, seen: SubscriberSeen, step: number): Promise<void> {
  await Promise.all(
    [...seen.got.keys()].map(async (id) => {
      for (let pages = 0, refused = 0; pages < 500 && refused < 20; pages++) {
        const n = await consume(w, seen, id, 100, step);
        if (n === 0) return;
        if (n < 0) {
          refused++;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }),
  );
}
