/**
 * Subscription operations behind the HTTP handler: create, describe, list, delete, and consume by
 * subscriber id with long polling. Storage details live in ./storage/subscriptions.ts and
 * ./storage/subscription-log.ts.
 */
import { alreadyExists, notFound } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { lowestPending } from '../logs/rules/log-horizon';
import type { LogMessage } from '../logs/rules/log-chunks';
import { averageMessageBytes, goneTests, messageCount, READ_BUDGET } from '../logs/rules/retention';
import { ResponseBudget } from '../core/rules/response-budget';
import { lastSeenRefreshMs, type createSubscriptionSchema, type subscriptionConsumeSchema } from './rules';
import type * as z from 'zod/mini';
import { config } from '../core/config';
import { INTEGRATION_TIMEOUT_SECONDS } from '../core/rules/gateway-responses';
import { cutOffAtDeadline } from '../core/rules/dependency-errors';
import { listResources, newResourceFields, resourceSummary } from '../core/storage/resources';
import { createResource, deleteResource } from '../core/storage/resource-writes';
import { countSubscribers, getCursor, getSubscription, moveCursor, type SubscriptionBindingSettings, type SubscriptionItem } from './storage/subscriptions';
import { getHead, getHeads, markDeletedUpdate, newHead, type LogHead } from '../logs/storage/log-heads';
import type { MemberCount } from '../logs/storage/log-members';
import { readSubscription } from './storage/subscription-log';
import { consumeWatching, waitForNews } from '../logs/storage/log-waits';
import type { ArrivalWatch } from '../logs/storage/log-arrivals';
import { absentIn } from '../logs/storage/log-gaps';
import { settledForReaders } from '../logs/storage/log-reservations';

const MIB = 1024 ** 2;

const subscriptionNotFound = (name: string) => notFound('SUBSCRIPTION_NOT_FOUND', `Subscription ${name}`);

async function requireSubscription(ns: string, name: string): Promise<{ s: SubscriptionItem; head: LogHead }> {
  const s = await getSubscription(ns, name);
  const head = s && (await getHead({ namespace: ns, id: s.id }));
  if (!s || !head) throw subscriptionNotFound(name);
  return { s, head };
}

/** Fields of create responses and list items (SPEC.md "Subscription"). */
const summary = (s: SubscriptionItem, head: LogHead | undefined, subscribers: MemberCount) => ({
  ...resourceSummary({ ...s, message_count: head ? messageCount(head) : 0 }),
  subscriber_count: subscribers.count,
  // Only when the subscription has more cursor records than one count reads (lambda/logs/storage/log-members.ts `countMembers`).
  ...(subscribers.atLeast ? { subscriber_count_is_lower_bound: true } : {}),
});

const subscribersOf = (s: SubscriptionItem, now: number) => countSubscribers(s.namespace, s.id, now - s.message_ttl_seconds * 1000);

export async function createSubscription(ns: string, input: z.output<typeof createSubscriptionSchema>, now: number) {
  const item: SubscriptionItem = {
    ...newResourceFields('SUBSCRIPTION', ns, input.name, input.topic_filter, now),
    max_size_mb: input.max_size_mb,
    message_ttl_seconds: input.message_ttl_seconds,
  };
  const settings: SubscriptionBindingSettings = { message_ttl_seconds: item.message_ttl_seconds };
  const head = newHead({ namespace: ns, id: item.id, name: item.name, log_kind: 'SUBSCRIPTION', partition_count: 1 });
  if (!(await createResource(item, { ...settings }, [head]))) throw alreadyExists('SUBSCRIPTION_ALREADY_EXISTS', `Subscription ${input.name}`);
  return summary(item, undefined, { count: 0, atLeast: false });
}

export async function describeSubscription(ns: string, name: string, now: number) {
  const { s, head } = await requireSubscription(ns, name);
  return { ...summary(s, head, await subscribersOf(s, now)), max_size_mb: s.max_size_mb, message_ttl_seconds: s.message_ttl_seconds };
}

export async function listSubscriptions(ns: string, limit: number, offset: number, now: number) {
  // Strongly consistent: a list right after a create shows it (docs/aws-parity.md).
  const { items, total } = await listResources<SubscriptionItem>(ns, 'SUBSCRIPTION', limit, offset, undefined, { consistent: true });
  const [heads, counts] = await Promise.all([getHeads(ns, items.map((s) => s.id)), Promise.all(items.map((s) => subscribersOf(s, now)))]);
  return { items: items.map((s, i) => summary(s, heads.get(s.id), counts[i])), total };
}

/** Deletes at once; the same transaction marks the head deleted (see streams/operations.ts). */
export async function deleteSubscription(ns: string, name: string, now: number) {
  const gone = await deleteResource<SubscriptionItem>(ns, 'SUBSCRIPTION', name, now, (current) => [markDeletedUpdate({ namespace: ns, id: current.id }, now)]);
  if (!gone) throw subscriptionNotFound(name);
}

/** SPEC.md "Consumed subscription message". */
const consumed = (m: LogMessage) => ({
  message_id: m.message_id,
  payload: m.payload,
  content_type: m.content_type,
  properties: m.properties,
  publish_time: isoTime(m.published_at),
});

export interface SubscriptionConsumeOptions extends z.output<typeof subscriptionConsumeSchema> {
  deadlineMs?: number;
}

/**
 * Time kept after a consume's answer deadline for the answer itself, as the handler keeps before
 * the Lambda's end (lambda/handlers/subscriptions.ts).
 */
const ANSWER_RESERVE_MS = 1_500;

/**
 * One attempt: reads after the subscriber's cursor and moves the cursor past what it returns (and
 * past expired messages before them, which are never returned) with a conditional write; never
 * past a message it read but did not return (`max_messages`, or the response size limit). Returns
 * undefined when another consume with the same id moved the cursor first. Its reads and the
 * cursor move's tries end by `deadline` (the consume's answer deadline): the cursor's read and the
 * chunks' pages are cut off by `signal` (which fires at it) with the SDK's retries inside them.
 */
async function takeBatch(s: SubscriptionItem, head: LogHead, subscriber: string, max: number, now: number, deadline: number, signal: AbortSignal): Promise<ReturnType<typeof consumed>[] | undefined> {
  const cur = await getCursor(s.namespace, s.id, subscriber, signal);
  const from = Math.max(cur?.cursor ?? head.earliest, head.earliest);
  // Every block without a record holds the reader back; the caller settled the dead ones.
  const to = lowestPending(head.pending, head.next);
  const ttlMs = s.message_ttl_seconds * 1000;
  const out: ReturnType<typeof consumed>[] = [];
  let next = from;
  if (from < to) {
    const budget = new ResponseBudget();
    // Expired (published_at + ttl <= now) or beyond max_size_mb: never returned, a range of them skipped by position.
    // Positions inside whole gaps are absent whatever their chunks hold (lambda/logs/rules/log-gaps.ts).
    const absent = await absentIn({ namespace: s.namespace, id: s.id }, head, from, to);
    const gone = goneTests(head, { cutoff: now - ttlMs + 1, maxBytes: s.max_size_mb * MIB }, absent);
    const read = { from, to, want: max, maxReadBytes: READ_BUDGET.bytes, deadline: Math.min(now + READ_BUDGET.ms, deadline), messageBytes: averageMessageBytes(head), abortSignal: signal };
    for await (const e of readSubscription(s.id, read, gone)) {
      if (e.m === undefined) {
        // Passed over gone messages: the cursor moves past them (not past one read but not returned).
        if (out.length === 0) next = e.passed;
        continue;
      }
      const c = consumed(e.m);
      if (!budget.take(c)) break;
      out.push(c);
      next = e.m.position + 1;
      if (out.length >= max) break;
    }
    // A read that returned nothing passes the absent positions it stands on (a trailing gap too).
    if (out.length === 0) next = Math.min(absent.after(next), to);
  }
  const seenRecently = cur !== undefined && now - cur.last_seen < lastSeenRefreshMs(s.message_ttl_seconds);
  if (next === cur?.cursor && seenRecently) return out;
  return (await moveCursor(s.namespace, s.id, subscriber, cur?.cursor, next, now, ttlMs, deadline)) ? out : undefined;
}

/**
 * Returns up to `max_messages` messages after the subscriber's cursor and advances it atomically,
 * waiting up to `timeout_seconds` for the first (long polling). A new subscriber starts at the
 * oldest retained message.
 */
export async function consumeSubscription(ns: string, name: string, opts: SubscriptionConsumeOptions) {
  const s = await getSubscription(ns, name);
  if (!s) throw subscriptionNotFound(name);
  return consumeWatching({ namespace: ns, id: s.id }, () => subscriptionNotFound(name), (head, arrivals) => consumeFrom(ns, s, head, opts, arrivals));
}

/** {@link consumeSubscription} once the subscription is found, with its arrivals watched from before the head's read. */
async function consumeFrom(ns: string, s: SubscriptionItem, found: LogHead, opts: SubscriptionConsumeOptions, arrivals: ArrivalWatch) {
  let head = found;
  const started = Date.now();
  const waitSeconds = Math.min(opts.timeout_seconds, config().maxLongPollSeconds);
  // The answer is due before the Lambda ends (`deadlineMs`) and before API Gateway's integration
  // timeout, which the local runtime's Lambda context does not bound.
  const answerBy = Math.min(opts.deadlineMs ?? Infinity, started + INTEGRATION_TIMEOUT_SECONDS * 1000 - ANSWER_RESERVE_MS);
  const deadline = Math.min(started + waitSeconds * 1000, answerBy);
  // Ends the reads of the head and of a batch at `answerBy`, the SDK's retries inside a call
  // included (its backoff for a throttle reaches seconds); a read cut off so moved nothing: 503,
  // the next consume reads the same messages. The cursor move bounds its own tries by `answerBy`
  // (storage/subscriptions.ts).
  const signal = AbortSignal.timeout(Math.max(1, answerBy - started));
  try {
    for (;;) {
      // Dead blocks settled before they are passed (lambda/logs/storage/log-reservations.ts `settledForReaders`).
      head = await settledForReaders({ namespace: ns, id: s.id }, head, Date.now(), signal);
      const got = await takeBatch(s, head, opts.subscriber_id, opts.max_messages, Date.now(), answerBy, signal);
      if ((got && got.length > 0) || deadline - Date.now() <= 0) return got ?? [];
      // Lost a race to a consume with the same id: read again at once; else wait for something new
      // (the cursor is read again only then: it shares the head's partition key).
      if (got) {
        const news = await waitForNews({ namespace: ns, id: s.id }, head, started, deadline, arrivals, signal);
        if (news === 'timeout') return got;
        if (news === 'gone') return [];
      }
      const again = await getHead({ namespace: ns, id: s.id }, signal);
      if (!again) return [];
      head = again;
    }
  } catch (e) {
    throw signal.aborted && (e as Error)?.name !== 'TimeoutError' ? cutOffAtDeadline('A read of the consume', e) : e;
  }
}
