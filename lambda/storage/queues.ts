/**
 * What DynamoDB keeps of a queue (DESIGN.md section 6): the resource item (settings, the SQS
 * queue's name), its counters, the ack record of each acknowledged message, and consumer
 * records. The messages themselves live in SQS (lambda/adapters/service-queues.ts).
 *
 * Cost per call: a publish adds to the counters (one conditional UpdateItem per bound queue), an
 * ack call writes one ack record per message plus one counter update, a consume writes nothing
 * (but a consumer record every 30 s per container and consumer). The counters item has its own
 * partition key per queue incarnation, so the busiest key of a queue takes one write per publish
 * call and one per ack call, whatever the batch size.
 */
import { BatchGetCommand, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { countAll, ddb, isConditionFailed, tableName } from './client';
import { metaKeys, ttlSeconds } from './keys';
import type { ResourceItem } from './resources';
import { CONSUMER_WINDOW_MS } from '../domain/queues';
import type { QueueOrdering } from '../domain/ordering';

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
  /** Messages dropped (no dead-letter topic, the hop limit, or nothing bound to the topic). */
  dropped_count: number;
  dead_lettered_count: number;
  /** Messages found past their TTL at receive and removed. */
  expired_count: number;
  /** Epoch ms of the last change by a request (the sweeper reconciles only quiet queues). */
  changed_at: number;
  /** Epoch ms of the last reconciliation with SQS's own counts. */
  reconciled_at?: number;
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

/** A queue incarnation's counters (strongly consistent, so a count read after a 201 includes it). */
export async function getQueueCounters(ns: string, queueId: string): Promise<QueueCounters> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.queueCounters(ns, queueId), ConsistentRead: true }));
  return counters(out.Item);
}

/** Counters of several queues of a namespace (one BatchGetItem per 100), by queue id. */
export async function getManyQueueCounters(ns: string, queueIds: string[]): Promise<Map<string, QueueCounters>> {
  const found = new Map<string, QueueCounters>();
  for (let i = 0; i < queueIds.length; i += 100) {
    let keys: Record<string, unknown>[] = queueIds.slice(i, i + 100).map((id) => metaKeys.queueCounters(ns, id));
    for (let attempt = 0; keys.length; attempt++) {
      if (attempt > 8) throw new Error(`BatchGetItem left ${keys.length} queue counters unread after retries`);
      const out = await ddb().send(new BatchGetCommand({ RequestItems: { [META()]: { Keys: keys, ConsistentRead: true } } }));
      for (const item of out.Responses?.[META()] ?? []) found.set(String(item.pk).slice(String(item.pk).lastIndexOf('#') + 1), counters(item));
      keys = (out.UnprocessedKeys?.[META()]?.Keys ?? []) as Record<string, unknown>[];
      if (keys.length) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
    }
  }
  return found;
}

/**
 * Reserves room for messages: adds to the counters unless the bytes would exceed `maxBytes`.
 * 'gone' when the counters no longer exist (the queue was deleted and purged meanwhile).
 */
export async function reserveQueueRoom(ns: string, queueId: string, count: number, bytes: number, maxBytes: number, now: number): Promise<'ok' | 'full' | 'gone'> {
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
}

/**
 * Takes messages out of the counters (acked, expired, dead-lettered, dropped, or a reservation
 * whose send failed) in one UpdateItem. A deleted queue's counters are left alone.
 */
export async function releaseQueueRoom(ns: string, queueId: string, r: CounterRelease, now: number): Promise<void> {
  const adds = ['message_count :n', '#b :b'];
  const values: Record<string, unknown> = { ':n': -r.count, ':b': -r.bytes, ':now': now };
  for (const [field, v] of [['dropped_count', r.dropped], ['dead_lettered_count', r.deadLettered], ['expired_count', r.expired]] as const) {
    if (!v) continue;
    adds.push(`${field} :${field}`);
    values[`:${field}`] = v;
  }
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.queueCounters(ns, queueId),
        UpdateExpression: `ADD ${adds.join(', ')} SET changed_at = :now`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#b': 'bytes' },
        ExpressionAttributeValues: values,
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // the queue is gone: nothing to count
  }
}

/**
 * Sets the counts to SQS's (sweeper reconciliation) if no request changed the counters since
 * `seenChangedAt`; returns whether they were set.
 */
export async function setQueueCounts(ns: string, queueId: string, counted: { count: number; bytes: number }, seenChangedAt: number, now: number): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.queueCounters(ns, queueId),
        UpdateExpression: 'SET message_count = :n, #b = :b, reconciled_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND changed_at = :seen',
        ExpressionAttributeNames: { '#b': 'bytes' },
        ExpressionAttributeValues: { ':n': counted.count, ':b': counted.bytes, ':now': now, ':seen': seenChangedAt },
      }),
    );
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    return false;
  }
}

/** Removes a deleted queue's counters (the sweeper, once its SQS queue is gone). */
export async function deleteQueueCounters(ns: string, queueId: string): Promise<void> {
  await ddb().send(new DeleteCommand({ TableName: META(), Key: metaKeys.queueCounters(ns, queueId) }));
}

/**
 * Writes the ack record of a message (DESIGN.md section 6) unless one of an unexpired delivery is
 * there: true for the first ack of a message, false for a repeated or concurrent one (and for a
 * second copy SQS delivered at the same time). The record lives until the acked delivery's
 * visibility ends (`until`), and DynamoDB TTL removes it after: a later redelivery (SQS's delete
 * having failed) writes a fresh one.
 *
 * `token` names the ack call that writes the record. When the SDK retries the write after an
 * answer was lost, the retry meets the record its own first attempt wrote and fails the
 * condition; the token tells that apart from another ack's record (one consistent read, only on a
 * failed condition), so the ack that won is not answered 404.
 */
export async function putAckRecord(ns: string, queueId: string, messageId: string, until: number, now: number, token: string): Promise<boolean> {
  const key = metaKeys.queueMessage(ns, queueId, messageId, 'ACK');
  try {
    await ddb().send(
      new PutCommand({
        TableName: META(),
        Item: { ...key, until, acked_at: now, ack_token: token, ttl: ttlSeconds(until) + 60 },
        ConditionExpression: 'attribute_not_exists(pk) OR #u <= :now',
        ExpressionAttributeNames: { '#u': 'until' },
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const out = await ddb().send(new GetCommand({ TableName: META(), Key: key, ConsistentRead: true }));
    return out.Item?.ack_token === token;
  }
}

/**
 * Removes the ack record written by the ack call `token` (its SQS delete failed, or its own write
 * failed and may have been applied), so a retried ack can still succeed. Never removes the record
 * of another ack.
 */
export async function deleteAckRecord(ns: string, queueId: string, messageId: string, token: string): Promise<void> {
  try {
    await ddb().send(
      new DeleteCommand({
        TableName: META(),
        Key: metaKeys.queueMessage(ns, queueId, messageId, 'ACK'),
        ConditionExpression: 'ack_token = :t',
        ExpressionAttributeValues: { ':t': token },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // not ours, or never written: nothing to remove
  }
}

/**
 * Counts a receive the service handed back without returning it (a consume over its response
 * budget), so the retry limit does not count it; kept as long as the message may live.
 */
export async function addReleasedReceive(ns: string, queueId: string, messageId: string, ttlSecondsFromNow: number, now: number): Promise<void> {
  await ddb().send(
    new UpdateCommand({
      TableName: META(),
      Key: metaKeys.queueMessage(ns, queueId, messageId, 'RELEASED'),
      UpdateExpression: 'ADD released :one SET #t = :ttl',
      ExpressionAttributeNames: { '#t': 'ttl' },
      ExpressionAttributeValues: { ':one': 1, ':ttl': ttlSeconds(now + ttlSecondsFromNow * 1000) + 3600 },
    }),
  );
}

/** Released receives of messages (only asked for messages that look out of deliveries). */
export async function releasedReceives(ns: string, queueId: string, messageIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  await Promise.all(
    messageIds.map(async (id) => {
      const got = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.queueMessage(ns, queueId, id, 'RELEASED'), ConsistentRead: true }));
      if (got.Item?.released) out.set(id, Number(got.Item.released));
    }),
  );
  return out;
}

const consumerKey = (ns: string, queueId: string, consumer: string) => ({ pk: metaKeys.namespacePk(ns), sk: `CONSUMER#${queueId}#${consumer}` });
const recentlyRecorded = new Map<string, number>();
/** How often one container rewrites the same consumer record. */
const CONSUMER_RECORD_EVERY_MS = 30_000;

/**
 * Records that `consumer` consumed from the queue. Throttled per container so a busy consumer
 * costs one write per 30 s, not one per request.
 */
export async function recordConsumer(ns: string, queueId: string, consumer: string, now: number): Promise<void> {
  const k = `${queueId}#${consumer}`;
  const last = recentlyRecorded.get(k);
  if (last !== undefined && now - last < CONSUMER_RECORD_EVERY_MS) return;
  if (recentlyRecorded.size > 10_000) recentlyRecorded.clear();
  recentlyRecorded.set(k, now);
  try {
    await ddb().send(
      new PutCommand({
        TableName: META(),
        Item: { ...consumerKey(ns, queueId, consumer), last_seen: now, ttl: ttlSeconds(now + CONSUMER_WINDOW_MS + 60_000) },
      }),
    );
  } catch (e) {
    recentlyRecorded.delete(k); // not written: the next consume tries again
    throw e;
  }
}

/** Distinct consumers seen within the last five minutes. */
export async function countConsumers(ns: string, queueId: string, now: number): Promise<number> {
  return countAll({
    TableName: META(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
    FilterExpression: 'last_seen >= :since',
    ExpressionAttributeValues: { ':pk': metaKeys.namespacePk(ns), ':p': `CONSUMER#${queueId}#`, ':since': now - CONSUMER_WINDOW_MS },
  });
}
