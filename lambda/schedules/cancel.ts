/**
 * Cancelling a held message (issue 20 item 2): `DELETE /messages/{message_id}/delivery`.
 * Only a message held for a delay beyond 900 s that no tick has claimed yet can be cancelled;
 * its room in each target queue is given back (`message_count` drops by one).
 */
import { ApiError, notFound } from '../domain/errors';
import { isoTime } from '../domain/envelope';
import { byExpiryBucket, releaseQueueRoom, type QueueBindingSettings } from '../storage/queues';
import { cancelDelayed } from '../storage/scheduler';

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
    await Promise.all(
      (item.targets ?? [])
        .filter((t) => t.kind === 'QUEUE')
        .map((t) => {
          // Out of the expiry bucket it was counted in at publish, and out of the held amounts.
          const ttl = (t.settings as unknown as QueueBindingSettings).message_ttl_seconds;
          const publishedAt = item.message?.published_at ?? item.created_at;
          const buckets = item.bucketed ? byExpiryBucket([item], ttl, () => publishedAt, (i) => i.size ?? 0, { held: true }) : undefined;
          return releaseQueueRoom(ns, t.id, { count: 1, bytes: item.size ?? 0, buckets }, now);
        }),
    );
    return { message_id: messageId, status: 'cancelled', cancelled_at: isoTime(now), deliver_at: isoTime(item.due_at) };
  }
  const { item } = r;
  // A repeated cancel (a client retrying a lost answer) answers as the first did.
  if (item.state === 'cancelled') return { message_id: messageId, status: 'cancelled', cancelled_at: isoTime(item.done_at ?? now), deliver_at: isoTime(item.due_at) };
  throw new ApiError(
    409,
    'ALREADY_DELIVERED',
    `Message ${messageId} was already handed over for delivery${item.done_at ? ` at ${isoTime(item.done_at)}` : ''} (a message is handed to its queues and webhooks up to 14 minutes before its time); it can no longer be cancelled. Consumers can drop it by its message_id.`,
    { message_id: messageId, state: item.state === 'handing' ? 'handing_over' : item.state },
  );
}

function unknownMessage(id: string): ApiError {
  const e = notFound('MESSAGE_NOT_FOUND', `Message ${id}`);
  e.message = `No held message ${id} in this namespace: only messages published with a delay beyond 900 seconds (delay_seconds or deliver_at) can be cancelled, and a cancelled or delivered one is remembered for 7 days.`;
  return e;
}
