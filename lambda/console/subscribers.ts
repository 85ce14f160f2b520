/**
 * `GET /subscriptions/{name}/subscribers`: a subscription's subscriber cursors and how far behind each is (docs/console.md). A fixed number of calls per request: at most one Query page of
 * `limit` members, never a walk of the log.
 */
import { notFound } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { getSubscription } from '../subscriptions/storage/subscriptions';
import { getHead } from '../logs/storage/log-heads';
import { listSubscriberCursors } from '../logs/storage/log-members';

/** Subscribers of a subscription with their cursors and how many positions each is behind. */
export async function subscriptionSubscribers(ns: string, name: string, limit: number) {
  const s = await getSubscription(ns, name);
  const head = s && (await getHead({ namespace: ns, id: s.id }));
  if (!s || !head) throw notFound('SUBSCRIPTION_NOT_FOUND', `Subscription ${name}`);
  const { subscribers, more } = await listSubscriberCursors(ns, s.id, limit);
  return {
    name: s.name,
    earliest_position: head.earliest,
    next_position: head.next,
    subscribers: subscribers.map((c) => ({
      subscriber_id: c.subscriber,
      cursor: c.cursor,
      lag: Math.max(0, head.next - Math.max(c.cursor, head.earliest)),
      last_seen: isoTime(c.last_seen),
    })),
    more,
  };
}
