/**
 * Subscription logs (table `subscriptionLog`): one log key per subscription incarnation, shared by
 * all its subscribers (each reads from its own cursor, ./subscriptions.ts), so a publish costs the
 * same for 1 subscriber or 1,000. A publish call's messages go into one chunk (more only past the
 * item size limit), with the same reservation scheme as streams (../../logs/storage/log-reservations.ts).
 */
import { ttlSeconds } from '../../core/storage/keys';
import type { Binding } from '../../core/storage/resources';
import { putChunks, readLive, unstoredOf, type ChunkItem, type LiveEvent } from '../../logs/storage/log-chunks';
import { finishBlock, mayStillWrite, reserveBlock, tooLateError } from '../../logs/storage/log-reservations';
import type { PublishedMessage } from '../../core/rules/message';
import { blockLayout, encodeMessage, packChunks, storedBytes, type LogMessage } from '../../logs/rules/log-chunks';
import { announceArrival } from '../../logs/storage/log-arrivals';

export interface SubscriptionBindingSettings {
  message_ttl_seconds: number;
}

/** Chunks live this long past the TTL: readers filter by age anyway; this covers clock skew. */
const TTL_MARGIN_MS = 60_000;

async function appendToSubscription(ns: string, now: number, b: Binding, messages: PublishedMessage[]): Promise<void> {
  const s = b.settings as unknown as SubscriptionBindingSettings;
  const ref = { namespace: ns, id: b.id };
  const layout = blockLayout(messages.map((m) => m.size), messages.map(() => 0));
  const bytes = messages.reduce((n, m) => n + m.size, 0);
  const r = await reserveBlock(ref, { count: messages.length, bytes });
  if (!r) return; // deleted since the binding was read
  if (!mayStillWrite(r)) {
    // Stalled since it reserved: readers stop waiting for the block soon; write nothing, give it back.
    await finishBlock(ref, r, { n: messages.length, b: bytes });
    throw tooLateError();
  }
  const tuples = messages.map((m, i) => ({ i, t: encodeMessage(m, r.start + i, r.cum + layout.before[i], true) }));
  const chunks: ChunkItem[] = packChunks(tuples, (x) => storedBytes(x.t)).map((run) => ({
    log: b.id,
    last: run[run.length - 1].t[0],
    first: run[0].t[0],
    at: now,
    n: run.length,
    b: run.reduce((n, x) => n + messages[x.i].size, 0),
    ttl: ttlSeconds(now + s.message_ttl_seconds * 1000 + TTL_MARGIN_MS),
    m: run.map((x) => x.t),
  }));
  const { failed, error } = await putChunks('subscriptionLog', chunks);
  const lost = failed.map((i) => chunks[i]).reduce((acc, c) => ({ n: acc.n + c.n, b: acc.b + c.b }), { n: 0, b: 0 });
  const settled = await finishBlock(ref, r, lost, () => unstoredOf('subscriptionLog', failed.map((i) => chunks[i])));
  // Not known to be recorded (storage unreachable for the record's tries and the settle of its
  // outcome): a 503, though its block may be complete and read (docs/streams-and-subscriptions.md).
  if (!settled) throw error ?? tooLateError();
  // A write reported failed but found stored (its answers lost) does not fail the publish.
  if (error && settled.n !== 0) throw error;
  // Recorded complete, however late: no settle can have recorded it as a gap (../../logs/storage/log-reservations.ts
  // `finishBlock`), so readers read it.
  announceArrival(b.id);
}

/** The subscription sink of publish: appends the messages once per bound subscription. */
export async function appendToSubscriptions(ctx: { namespace: string; now: number }, bindings: Binding[], messages: PublishedMessage[]): Promise<void> {
  await Promise.all(bindings.map((b) => appendToSubscription(ctx.namespace, ctx.now, b, messages)));
}

/** Messages with `from <= seq < to`, in order, read lazily; as ../../streams/storage/stream-log.ts `readStream`. */
export function readSubscription(
  subId: string,
  o: { from: number; to: number; want: number; maxReadBytes: number; deadline: number; messageBytes?: number; abortSignal?: AbortSignal },
  gone: { exact(m: LogMessage): boolean; skip(m: LogMessage): boolean },
): AsyncGenerator<LiveEvent> {
  return readLive('subscriptionLog', [subId], { ...o, maxPageChunks: 100, consistent: true }, gone);
}
