/**
 * Cancelling a held message: `DELETE /messages/{message_id}/delivery`.
 * Only a message held for a delay beyond 900 s that no tick has claimed yet can be cancelled;
 * its room in each target queue is given back (`message_count` drops by one) before the cancel
 * answers; a cancel whose giving back failed answers 503, and its retry gives back the rest.
 */
import { ApiError, notFound } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { byExpiryBucket, releaseQueueBuckets, releaseQueueRoom, type QueueBindingSettings } from '../queues/storage/queues';
import { releaseHeld } from '../limits/storage/held-quota';
import { withRetries } from '../core/rules/dependency-errors';
import type { DelayedItem } from './storage/scheduler';
import { cancelDelayed, endCancelRelease, takeCancelRelease, RELEASE_LEASE_MS } from './storage/scheduler-cancel';

export interface CancelAnswer {
  message_id: string;
  status: 'cancelled';
  cancelled_at: string;
  deliver_at: string;
}

export async function cancelDelivery(ns: string, messageId: string, now: number): Promise<CancelAnswer> {
  if (!/^[0-9A-Za-z]{1,64}$/.test(messageId)) throw unknownMessage(messageId);
  const r = await cancelDelayed(ns, messageId, now);
  if (r.outcome === 'unknown') throw unknownMessage(messageId);
  if (r.outcome === 'cancelled') {
    const { item } = r;
    await giveBackRoom(ns, messageId, item, now + RELEASE_LEASE_MS, now);
    return { message_id: messageId, status: 'cancelled', cancelled_at: isoTime(now), deliver_at: isoTime(item.due_at) };
  }
  const { item } = r;
  // A repeated cancel (a client retrying a lost or failed answer) answers as the first did, once
  // the room in the message's queues is given back: it finishes what a failed cancel left.
  if (item.state === 'cancelled') {
    if (item.release_until !== undefined) {
      const taken = await takeCancelRelease(ns, messageId, now);
      if (taken === 'busy') throw releaseUnfinished();
      if (taken !== 'done') await giveBackRoom(ns, messageId, taken.item, taken.lease, now);
    }
    return { message_id: messageId, status: 'cancelled', cancelled_at: isoTime(item.done_at ?? now), deliver_at: isoTime(item.due_at) };
  }
  throw new ApiError(
    409,
    'ALREADY_DELIVERED',
    `Message ${messageId} was already handed over for delivery${item.done_at ? ` at ${isoTime(item.done_at)}` : ''} (a message is handed to its queues and webhooks up to 14 minutes before its time); it can no longer be cancelled. Consumers can drop it by its message_id.`,
    { message_id: messageId, state: item.state === 'handing' ? 'handing_over' : item.state },
  );
}

/**
 * Gives back the message's room in each of its queues not given back yet, then ends the cancel's
 * hold; when a queue's counters refused, records the ones done and answers 503 (the cancel itself
 * stands: its retry gives back the rest).
 */
async function giveBackRoom(ns: string, messageId: string, item: DelayedItem, lease: number, now: number): Promise<void> {
  const bytes = item.size ?? 0;
  // The queues' room, and the namespace's held quota (as one more thing to give back once).
  const parts = [
    ...(item.targets ?? []).filter((t) => t.kind === 'QUEUE').flatMap((t) => queueParts(ns, item, t, now)),
    { id: HELD_QUOTA, give: () => releaseHeld(ns, 1, bytes, { once: true }) },
  ].filter((p) => !item.released?.has(p.id));
  const results = await Promise.allSettled(parts.map((p) => p.give()));
  const done = parts.filter((_, i) => results[i].status === 'fulfilled').map((p) => p.id);
  const finished = done.length === parts.length;
  // The record of what was given back is tried again (3 calls beyond the SDK's attempts; a repeat
  // meets its own write's condition): without it, a retry of the cancel once the hold has expired
  // would give every part back a second time.
  await withRetries(() => endCancelRelease(ns, messageId, lease, done, finished), { tries: 3, firstDelayMs: 100 });
  if (!finished) throw releaseUnfinished();
}

/**
 * A queue's parts of the give-back, each one write so that each is given back once however often
 * the cancel is retried: the totals (`message_count`, bytes, and the held amounts of a bucketed
 * item), then the expiry bucket the message was counted in at publish (by its TTL in that queue)
 * with its held part. Items held before buckets (no `bucketed`) give back the count only. A
 * retried cancel reads the item without `message` (the cancel removed it): its bucket comes from
 * `created_at`, the publish's time as `published_at` is.
 */
function queueParts(ns: string, item: DelayedItem, t: NonNullable<DelayedItem['targets']>[number], now: number): { id: string; give: () => Promise<void> }[] {
  const bytes = item.size ?? 0;
  if (!item.bucketed) return [{ id: t.id, give: () => releaseQueueRoom(ns, t.id, { count: 1, bytes }, now, true) }];
  const ttl = (t.settings as unknown as QueueBindingSettings).message_ttl_seconds;
  const publishedAt = item.message?.published_at ?? item.created_at;
  const buckets = byExpiryBucket([item], ttl, () => publishedAt, () => bytes, { held: true });
  return [
    { id: t.id, give: () => releaseQueueRoom(ns, t.id, { count: 1, bytes, heldCount: 1, heldBytes: bytes }, now, true) },
    { id: `${t.id}${BUCKET_PART}`, give: () => releaseQueueBuckets(ns, t.id, buckets) },
  ];
}

/** The suffix of a queue's bucket part among the things a cancel gives back. */
const BUCKET_PART = '#bucket';

/** The namespace's held quota among the things a cancel gives back (never a binding id, which is a ULID). */
const HELD_QUOTA = '#held';

const releaseUnfinished = () =>
  new ApiError(
    503,
    'SERVICE_UNAVAILABLE',
    'The message is cancelled and will not be delivered, but its room in its queues (message_count) is not given back yet: retry the cancel.',
    {},
    { 'Retry-After': '1' },
  );

function unknownMessage(id: string): ApiError {
  const e = notFound('MESSAGE_NOT_FOUND', `Message ${id}`);
  e.message = `No held message ${id} in this namespace: only messages published with a delay beyond 900 seconds (delay_seconds or deliver_at) can be cancelled, and a cancelled or delivered one is remembered for 7 days.`;
  return e;
}
