/**
 * Reads of the logs for the checkers, through the API like any client (no storage access): a
 * stream from an offset with a group of the checker's own, a subscription with a subscriber id of
 * its own, a queue drained by consume and ack.
 */
import { retryable } from '../faults/api';
import { markerOf, type Ledger } from './ledger';

/** A checker's call, tried again on what the docs say to retry (5xx, 429, no answer), as a client would. */
async function checkerCall(ledger: Ledger, method: string, path: string, body?: unknown) {
  for (let attempt = 0; ; attempt++) {
    const a = await ledger.call('checker', method, path, body);
    if (!retryable(a) || attempt >= 20) return a;
    await new Promise((r) => setTimeout(r, Math.min(1000, 50 * 2 ** attempt)));
  }
}

export interface StreamReader {
  /** Markers in the order read (a marker read twice is there twice). */
  markers: string[];
  next: number;
}

/** Reads the stream from `r.next` to its readable end; adds what it read to `r`. */
export async function readStream(ledger: Ledger, stream: string, group: string, r: StreamReader): Promise<void> {
  for (let pages = 0; pages < 200; pages++) {
    const a = await checkerCall(ledger, 'POST', `/streams/${stream}/messages/consume`, { consumer_group: group, start_offset: r.next, max_messages: 1000, timeout_seconds: 0 });
    if (a.status !== 200) throw new Error(`checker read of stream ${stream}: ${a.status} ${a.code}`);
    const d = a.body!.data as { messages: { payload: string }[]; next_offset: number };
    r.markers.push(...d.messages.map((m) => markerOf(m.payload) ?? '?'));
    const moved = d.next_offset !== r.next;
    r.next = d.next_offset;
    if (!d.messages.length && !moved) return;
  }
}

/** Reads the subscription as `subscriber` until it has nothing more; returns the markers (and their ids into `ids`). */
export async function readSubscription(ledger: Ledger, subscription: string, subscriber: string, ids: string[] = []): Promise<string[]> {
  const out: string[] = [];
  for (let pages = 0; pages < 500; pages++) {
    const a = await checkerCall(ledger, 'POST', `/subscriptions/${subscription}/messages/consume`, { subscriber_id: subscriber, max_messages: 100, timeout_seconds: 0 });
    if (a.status !== 200) throw new Error(`checker read of subscription ${subscription}: ${a.status} ${a.code}`);
    const msgs = a.body!.data.messages as { payload: string; message_id: string }[];
    if (!msgs.length) return out;
    out.push(...msgs.map((m) => markerOf(m.payload) ?? '?'));
    ids.push(...msgs.map((m) => m.message_id));
  }
  return out;
}

/**
 * Drains a queue: `consumers` consumes at once (visibility `visibility`, up to 100 messages each)
 * until a consume finds nothing and `empty()` says so, or nothing came for `idleMs` (what is left
 * is hidden by an earlier receive or delayed), or `ms` passed; acks what it gets when `ack`.
 * Returns every receive as [marker, message id].
 */
export async function drainQueue(
  ledger: Ledger,
  queue: string,
  o: { ack: boolean; visibility: number; ms: number; empty: () => Promise<boolean>; consumers?: number; idleMs?: number },
): Promise<[string, string][]> {
  const got: [string, string][] = [];
  const until = Date.now() + o.ms;
  let lastGot = Date.now();
  let done = false;
  await Promise.all(
    Array.from({ length: o.consumers ?? 4 }, async () => {
      while (!done && Date.now() < until && Date.now() - lastGot < (o.idleMs ?? 15_000)) {
        const a = await ledger.call('drain', 'POST', `/queues/${queue}/messages/consume`, { max_messages: 100, timeout_seconds: 1, visibility_timeout_seconds: o.visibility });
        if (a.status !== 200) continue;
        const msgs = a.body!.data.messages as { message_id: string; payload: string; receipt_handle: string }[];
        got.push(...msgs.map((m) => [markerOf(m.payload) ?? '?', m.message_id] as [string, string]));
        if (msgs.length) lastGot = Date.now();
        for (let i = 0; o.ack && i < msgs.length; i += 100) {
          await ledger.call('drain', 'POST', `/queues/${queue}/messages/ack`, { entries: msgs.slice(i, i + 100).map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) });
        }
        if (!msgs.length && (await o.empty())) done = true;
      }
    }),
  );
  return got;
}
