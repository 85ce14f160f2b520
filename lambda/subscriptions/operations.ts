/**
 * Subscription operations behind the HTTP handler: create, describe, list, delete, and consume by
 * subscriber id with long polling. Storage details live in ../storage/subscriptions.ts and
 * ../storage/subscription-log.ts.
 */
import { alreadyExists, notFound } from '../domain/errors';
import { isoTime } from '../domain/envelope';
import { stableHorizon } from '../domain/log-horizon';
import { lastSeenRefreshMs, type createSubscriptionSchema, type subscriptionConsumeSchema } from '../domain/subscriptions';
import type * as z from 'zod/mini';
import { config } from '../config';
import { createResource, deleteResource, listResources, newResourceFields, resourceSummary } from '../storage/resources';
import { countSubscribers, getCursor, getSubscription, moveCursor, type SubscriptionBindingSettings, type SubscriptionItem } from '../storage/subscriptions';
import { readSubscriptionLog, type SubscriptionLogItem } from '../storage/subscription-log';
import { LONG_POLL_INTERVAL_MS, waitForArrival } from '../publishing/arrivals';

const subscriptionNotFound = (name: string) => notFound('SUBSCRIPTION_NOT_FOUND', `Subscription ${name}`);

async function requireSubscription(ns: string, name: string): Promise<SubscriptionItem> {
  const s = await getSubscription(ns, name);
  if (!s) throw subscriptionNotFound(name);
  return s;
}

/** Fields of create responses and list items (SPEC.md "Subscription"). */
const summary = (s: SubscriptionItem, subscriberCount: number) => ({ ...resourceSummary(s), subscriber_count: subscriberCount });

const subscribersOf = (s: SubscriptionItem, now: number) => countSubscribers(s.namespace, s.id, now - s.message_ttl_seconds * 1000);

export async function createSubscription(ns: string, input: z.output<typeof createSubscriptionSchema>, now: number) {
  const item: SubscriptionItem = {
    ...newResourceFields('SUBSCRIPTION', ns, input.name, input.topic_filter, now),
    max_size_mb: input.max_size_mb,
    message_ttl_seconds: input.message_ttl_seconds,
    next_seq: 0,
    earliest_seq: 0,
    message_count: 0,
    bytes: 0,
    pending: {},
  };
  const settings: SubscriptionBindingSettings = { message_ttl_seconds: item.message_ttl_seconds };
  if (!(await createResource(item, { ...settings }))) throw alreadyExists('SUBSCRIPTION_ALREADY_EXISTS', `Subscription ${input.name}`);
  return summary(item, 0);
}

export async function describeSubscription(ns: string, name: string, now: number) {
  const s = await requireSubscription(ns, name);
  return { ...summary(s, await subscribersOf(s, now)), max_size_mb: s.max_size_mb, message_ttl_seconds: s.message_ttl_seconds };
}

export async function listSubscriptions(ns: string, limit: number, offset: number, now: number) {
  const { items, total } = await listResources<SubscriptionItem>(ns, 'SUBSCRIPTION', limit, offset);
  const counts = await Promise.all(items.map((s) => subscribersOf(s, now)));
  return { items: items.map((s, i) => summary(s, counts[i])), total };
}

export async function deleteSubscription(ns: string, name: string, now: number) {
  if (!(await deleteResource(ns, 'SUBSCRIPTION', name, now))) throw subscriptionNotFound(name);
}

/** SPEC.md "Consumed subscription message". */
const consumed = (m: SubscriptionLogItem) => ({
  message_id: m.message_id,
  payload: m.payload,
  content_type: m.content_type,
  properties: m.properties ?? {},
  publish_time: isoTime(m.published_at),
});

export interface SubscriptionConsumeOptions extends z.output<typeof subscriptionConsumeSchema> {
  deadlineMs?: number;
}

/**
 * One attempt: reads after the subscriber's cursor and moves the cursor past what it returns with
 * a conditional write. Returns undefined when another consume with the same id moved it first.
 */
async function takeBatch(s: SubscriptionItem, subscriber: string, max: number, now: number): Promise<SubscriptionLogItem[] | undefined> {
  const cur = await getCursor(s.namespace, s.id, subscriber);
  const from = Math.max(cur?.cursor ?? s.earliest_seq, s.earliest_seq);
  const ttlMs = s.message_ttl_seconds * 1000;
  const read = await readSubscriptionLog(s.id, from, stableHorizon(s.pending, s.next_seq, now), max);
  // Expired messages (not yet swept) are never returned; the cursor moves past them too.
  const fresh = read.filter((m) => m.published_at + ttlMs > now);
  const next = read.length ? read[read.length - 1].seq + 1 : from;
  const seenRecently = cur !== undefined && now - cur.last_seen < lastSeenRefreshMs(s.message_ttl_seconds);
  if (next === cur?.cursor && seenRecently) return fresh;
  return (await moveCursor(s.namespace, s.id, subscriber, cur?.cursor, next, now, ttlMs)) ? fresh : undefined;
}

/**
 * Returns up to `max_messages` messages after the subscriber's cursor and advances it atomically,
 * waiting up to `timeout_seconds` for the first (long polling). A new subscriber starts at the
 * oldest retained message.
 */
export async function consumeSubscription(ns: string, name: string, opts: SubscriptionConsumeOptions) {
  let s = await requireSubscription(ns, name);
  const started = Date.now();
  const waitSeconds = Math.min(opts.timeout_seconds, config().maxLongPollSeconds);
  const deadline = Math.min(started + waitSeconds * 1000, opts.deadlineMs ?? Infinity);
  for (;;) {
    const got = await takeBatch(s, opts.subscriber_id, opts.max_messages, Date.now());
    const left = deadline - Date.now();
    if ((got && got.length > 0) || left <= 0) return (got ?? []).map(consumed);
    // Lost a race to a consume with the same id: read again at once; else wait for an arrival.
    if (got) await waitForArrival(s.id, Math.min(LONG_POLL_INTERVAL_MS, left));
    const again = await getSubscription(ns, name);
    if (!again || again.id !== s.id) return [];
    s = again;
  }
}
