/**
 * What DynamoDB keeps of a queue (DESIGN.md section 6): the resource item (settings, the SQS
 * queue's name), its counters, and consumer records; the per-message records (acks, settles,
 * released receives) are in ./queue-message-records.ts. The messages themselves live in SQS
 * (lambda/queues/storage/service-queues.ts).
 *
 * Counting by expiry time. Every message's TTL is known at publish, so besides the queue's
 * running totals (the counters item, which enforces `max_size_mb` with one conditional update)
 * each message is also counted in the **expiry bucket** its TTL ends in (an item per bucket,
 * {@link expiryBucketEnd}). Every change adds the same amounts to the totals and to the bucket of
 * each message concerned, so at all times `totals = Σ existing buckets`. A bucket whose end has
 * passed holds exactly the messages of that bucket still counted although expired (published,
 * minus acked, dead-lettered, dropped or removed at receive); so the live count is
 * `totals − Σ ended buckets`, exact at every read however busy the queue is, late by less than one
 * bucket width (at most 60 s). Ended buckets are pruned (deleted and subtracted from the totals in
 * one transaction, conditional on their values) by the sweeper, and at once by a publish that
 * finds the queue full, which then tries again: a queue at its cap takes messages again as soon as
 * its counted messages have expired. A late change to a pruned bucket (an ack racing the prune)
 * recreates it with the negative amount, and its own prune puts that back: the invariant holds.
 *
 * Held messages (a delay beyond 900 s, lambda/schedules/delayed.ts) are counted like any other from
 * their publish, in the bucket of their TTL, and also, in the same updates, as **held**
 * (`held_count`/`held_bytes` on the totals, `hn`/`hb` on the bucket) until they are handed over to
 * SQS or cancelled. So they leave the count when their TTL ends whether handed over or not, and
 * the live held amount is `held totals − Σ ended buckets' held`, by the same arithmetic: what the
 * reconciliation adds to SQS's own count (lambda/queues/sweep.ts). It cannot correct them, so
 * the totals' writes that carry held amounts apply once (./queue-held.ts).
 *
 * Cost per call: a publish adds to the counters (one conditional UpdateItem per bound queue, and
 * one UpdateItem of its expiry bucket), an ack call writes one ack record per message plus one
 * counter update and one per expiry bucket of its messages (usually one), a consume writes nothing
 * (but a consumer record every 30 s per container and consumer). The counters item has its own
 * partition key per queue incarnation, so the busiest key of a queue takes one write per publish
 * call and one per ack call, whatever the batch size.
 */
import { DeleteCommand, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName, updateOnce } from '../../core/storage/client';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';
import type { ResourceItem } from '../../core/storage/resources';
import { addHeldOnce } from './queue-held';
import { addToBuckets, endedBuckets, heldOf, pruneExpiryBuckets, releaseQueueBuckets, type BucketAmounts } from './queue-buckets';
import type { QueueOrdering } from '../../core/rules/ordering';

// The expiry buckets (./queue-buckets.ts) and consumer records (./queue-consumers.ts), as their callers import them.
export { byExpiryBucket, expiryBucketEnd, expiryBucketWidthMs, pruneExpiryBuckets, releaseQueueBuckets, type BucketAmounts } from './queue-buckets';
export { countConsumers, recordConsumer } from './queue-consumers';

export interface QueueItem extends ResourceItem {
  kind: 'QUEUE';
  max_size_mb: number;
  message_ttl_seconds: number;
  max_retries: number;
  dead_letter_topic?: string;
  /** Name of the SQS queue that holds the messages (not its URL: a local engine's port changes). */
  sqs_queue: string;
  /** Extension: the SQS queue's DelaySeconds (absent on queues created before it: 0). */
  delay_seconds?: number;
  /** Extension: `fifo` for an SQS FIFO queue (absent on queues created before it: `none`). */
  ordering?: QueueOrdering;
}

export interface QueueCounters {
  /** Messages stored and not yet acked, expired, dead-lettered or dropped. */
  message_count: number;
  /** Payload bytes of those messages, against max_size_mb. */
  bytes: number;
  /** Of those, messages held by the service for a long delay (not in SQS yet). */
  held_count?: number;
  held_bytes?: number;
  /** Messages dropped (no dead-letter topic, the hop limit, or nothing bound to the topic). */
  dropped_count: number;
  dead_lettered_count: number;
  /** Messages found past their TTL at receive and removed. */
  expired_count: number;
  /** Epoch ms of the last change by a request (the sweeper reconciles only quiet queues). */
  changed_at: number;
  /** Epoch ms of the last reconciliation with SQS's own counts. */
  reconciled_at?: number;
  /** Epoch ms of the last prune of ended expiry buckets (a reconciliation applies only if none ran meanwhile). */
  pruned_at?: number;
}

/** Settings a publish needs, kept on the queue's binding so that deciding costs no read. */
export interface QueueBindingSettings {
  max_size_mb: number;
  message_ttl_seconds: number;
  max_retries: number;
  dead_letter_topic?: string;
  sqs_queue: string;
  /** An SQS FIFO queue: sends carry a message group and a deduplication id, and no per-message delay. */
  fifo?: true;
}

export const queueBindingSettings = (q: QueueItem): QueueBindingSettings => ({
  max_size_mb: q.max_size_mb,
  message_ttl_seconds: q.message_ttl_seconds,
  max_retries: q.max_retries,
  ...(q.dead_letter_topic ? { dead_letter_topic: q.dead_letter_topic } : {}),
  sqs_queue: q.sqs_queue,
  ...(q.ordering === 'fifo' ? { fifo: true as const } : {}),
});

const META = () => tableName('meta');
const ZERO = { message_count: 0, bytes: 0, dropped_count: 0, dead_lettered_count: 0, expired_count: 0 };

/** The counters item of a new queue incarnation (written in the create transaction). */
export const newQueueCounters = (ns: string, queueId: string, now: number) => ({ ...metaKeys.queueCounters(ns, queueId), ...ZERO, changed_at: now });

/** Strongly consistent: a queue created just before is found, a deleted one is not. */
export async function getQueue(ns: string, name: string): Promise<QueueItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.resource(ns, 'QUEUE', name), ConsistentRead: true }));
  return out.Item as QueueItem | undefined;
}

const counters = (item: Record<string, unknown> | undefined): QueueCounters => ({ ...ZERO, changed_at: 0, ...(item as Partial<QueueCounters>) });

/** A queue incarnation's counters, expired messages excluded (strongly consistent, so a count read after a 201 includes it). */
export async function getQueueCounters(
  ns: string,
  queueId: string,
  now = Date.now(),
): Promise<QueueCounters & { totals: { count: number; bytes: number }; held: { count: number; bytes: number } }> {
  // The totals, then the ended buckets: a prune (one transaction: a bucket out, the totals down)
  // committed between the two reads would otherwise be subtracted twice (buckets read before it,
  // totals after). Read in this order, a prune between them is caught by reading the totals again
  // (only when there are ended buckets, which the sweeper keeps rare): unchanged prune count, the
  // reads are of one state; changed, they are read again.
  const read = () => ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.queueCounters(ns, queueId), ConsistentRead: true }));
  let out = await read();
  let ended = await endedBuckets(ns, queueId, now);
  for (let attempt = 0; ended.length > 0 && attempt < 3; attempt++) {
    const again = await read();
    if (Number(again.Item?.prunes ?? 0) === Number(out.Item?.prunes ?? 0)) break;
    out = again;
    ended = await endedBuckets(ns, queueId, now);
  }
  const c = counters(out.Item);
  const totals = { count: c.message_count, bytes: c.bytes };
  const held = { count: Number(c.held_count ?? 0), bytes: Number(c.held_bytes ?? 0) };
  for (const e of ended) {
    c.message_count -= e.n;
    c.bytes -= e.b;
    held.count -= e.hn;
    held.bytes -= e.hb;
  }
  return { ...c, totals, held };
}

/** Counters of several queues of a namespace (in parallel), by queue id. */
export async function getManyQueueCounters(ns: string, queueIds: string[], now = Date.now()): Promise<Map<string, QueueCounters>> {
  const got = await Promise.all(queueIds.map((id) => getQueueCounters(ns, id, now)));
  return new Map(queueIds.map((id, i) => [id, got[i]]));
}

/**
 * Reserves room for messages: adds to the counters unless the bytes would exceed `maxBytes`, then
 * to the messages' expiry buckets (`buckets`, usually one: a publish's messages share their time). A queue found full prunes its ended buckets and tries
 * once more. 'gone' when the counters no longer exist (the queue was deleted and purged meanwhile).
 */
export async function reserveQueueRoom(
  ns: string,
  queueId: string,
  count: number,
  bytes: number,
  maxBytes: number,
  now: number,
  buckets?: BucketAmounts,
): Promise<'ok' | 'full' | 'gone'> {
  const held = heldOf(buckets);
  for (let attempt = 0; ; attempt++) {
    // Held messages' amounts are written once (./queue-held.ts).
    const room = held.count ? await addHeldOnce(ns, queueId, { count, bytes, heldCount: held.count, heldBytes: held.bytes }, now, maxBytes) : await reserveTotals(ns, queueId, count, bytes, maxBytes, now);
    if (room === 'full' && attempt === 0 && (await pruneExpiryBuckets(ns, queueId, now)) > 0) continue;
    if (room !== 'ok' || !buckets?.size) return room;
    try {
      await addToBuckets(ns, queueId, buckets);
    } catch (e) {
      // Totals without their bucket would break `totals = Σ buckets`: take them back.
      await releaseQueueRoom(ns, queueId, { count, bytes, heldCount: held.count, heldBytes: held.bytes }, now);
      throw e;
    }
    return 'ok';
  }
}

async function reserveTotals(ns: string, queueId: string, count: number, bytes: number, maxBytes: number, now: number): Promise<'ok' | 'full' | 'gone'> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.queueCounters(ns, queueId),
        UpdateExpression: 'ADD message_count :n, #b :b SET changed_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND #b <= :room',
        ExpressionAttributeNames: { '#b': 'bytes' },
        ExpressionAttributeValues: { ':n': count, ':b': bytes, ':room': maxBytes - bytes, ':now': now },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'ok';
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    return (e as { Item?: unknown }).Item ? 'full' : 'gone';
  }
}

export interface CounterRelease {
  /** Messages that left the queue. */
  count: number;
  bytes: number;
  dropped?: number;
  deadLettered?: number;
  expired?: number;
  /** The same messages by expiry bucket (absent: messages in no bucket, e.g. a reservation's give-back done by reserveQueueRoom); their held part leaves the held amounts. */
  buckets?: BucketAmounts;
  /** Held amounts to take out of the totals when `buckets` does not give them (a reservation's give-back). */
  heldCount?: number;
  heldBytes?: number;
}

/**
 * Takes messages out of the counters (acked, expired, dead-lettered, dropped, or a reservation
 * whose send failed) in one UpdateItem, and out of their expiry buckets (one UpdateItem per
 * bucket). A deleted queue's counters are left alone.
 */
export async function releaseQueueRoom(ns: string, queueId: string, r: CounterRelease, now: number, once = false): Promise<void> {
  const adds = ['message_count :n', '#b :b'];
  const values: Record<string, unknown> = { ':n': -r.count, ':b': -r.bytes, ':now': now };
  const held = r.buckets ? heldOf(r.buckets) : { count: r.heldCount ?? 0, bytes: r.heldBytes ?? 0 };
  for (const [field, v] of [['dropped_count', r.dropped], ['dead_lettered_count', r.deadLettered], ['expired_count', r.expired], ['held_count', -held.count], ['held_bytes', -held.bytes]] as const) {
    if (!v) continue;
    adds.push(`${field} :${field}`);
    values[`:${field}`] = v;
  }
  if (held.count && !r.dropped && !r.deadLettered && !r.expired) {
    // Held amounts are taken out once (./queue-held.ts), then the buckets as below.
    if ((await addHeldOnce(ns, queueId, { count: -r.count, bytes: -r.bytes, heldCount: -held.count, heldBytes: -held.bytes }, now)) === 'gone') return;
    if (r.buckets?.size) await releaseQueueBuckets(ns, queueId, r.buckets);
    return;
  }
  const update = {
    TableName: META(),
    Key: metaKeys.queueCounters(ns, queueId),
    UpdateExpression: `ADD ${adds.join(', ')} SET changed_at = :now`,
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#b': 'bytes' },
    ExpressionAttributeValues: values,
  };
  try {
    // `once`: not applied twice when its answer is lost and the SDK sends it again (./client.ts updateOnce).
    await (once ? updateOnce(update) : ddb().send(new UpdateCommand(update)));
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // the queue is gone: nothing to count
    return;
  }
  if (r.buckets?.size) await releaseQueueBuckets(ns, queueId, r.buckets);
}

/**
 * Marks the counters changed now without changing an amount (one UpdateItem): a handover does
 * it before its SQS send, so a reconciliation that read the held amounts before the send (and
 * would read SQS's count after it) finds its conditional write refused, and one that reads after
 * it finds the queue not quiet. A deleted queue's counters are left alone.
 */
export async function touchQueueCounters(ns: string, queueId: string, now: number): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.queueCounters(ns, queueId),
        UpdateExpression: 'SET changed_at = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/**
 * Sets the totals to `counted` (sweeper reconciliation) if no request changed the counters since
 * `seenChangedAt`, and adds the change (`counted` less the totals seen) to the expiry bucket
 * `bucketEnd` in the same transaction, so `totals = Σ buckets` holds on; returns whether they were
 * set.
 */
export async function setQueueCounts(
  ns: string,
  queueId: string,
  counted: { count: number; bytes: number },
  seen: { changedAt: number; prunedAt?: number; totals?: { count: number; bytes: number }; bucketEnd?: number },
  now: number,
): Promise<boolean> {
  const counters = {
    TableName: META(),
    Key: metaKeys.queueCounters(ns, queueId),
    UpdateExpression: 'SET message_count = :n, #b = :b, reconciled_at = :now',
    ConditionExpression:
      seen.prunedAt === undefined
        ? 'attribute_exists(pk) AND changed_at = :seen AND attribute_not_exists(pruned_at)'
        : 'attribute_exists(pk) AND changed_at = :seen AND pruned_at = :pruned',
    ExpressionAttributeNames: { '#b': 'bytes' },
    ExpressionAttributeValues: {
      ':n': counted.count,
      ':b': counted.bytes,
      ':now': now,
      ':seen': seen.changedAt,
      ...(seen.prunedAt === undefined ? {} : { ':pruned': seen.prunedAt }),
    },
  };
  const delta = seen.totals ? { count: counted.count - seen.totals.count, bytes: counted.bytes - seen.totals.bytes } : { count: 0, bytes: 0 };
  try {
    if (seen.bucketEnd === undefined || (delta.count === 0 && delta.bytes === 0)) await ddb().send(new UpdateCommand(counters));
    else {
      const bucket = {
        TableName: META(),
        Key: metaKeys.queueExpiryBucket(ns, queueId, seen.bucketEnd),
        UpdateExpression: 'ADD #n :n, #b :b SET #t = :ttl',
        ExpressionAttributeNames: { '#n': 'n', '#b': 'b', '#t': 'ttl' },
        ExpressionAttributeValues: { ':n': delta.count, ':b': delta.bytes, ':ttl': ttlSeconds(seen.bucketEnd + 86_400_000) },
      };
      await ddb().send(new TransactWriteCommand({ TransactItems: [{ Update: counters }, { Update: bucket }] }));
    }
    return true;
  } catch (e) {
    if (!isConditionFailed(e) && (e as { name?: string }).name !== 'TransactionCanceledException') throw e;
    return false;
  }
}

/** Removes a deleted queue's counters (the sweeper, once its SQS queue is gone). */
export async function deleteQueueCounters(ns: string, queueId: string): Promise<void> {
  await ddb().send(new DeleteCommand({ TableName: META(), Key: metaKeys.queueCounters(ns, queueId) }));
}
