/**
 * Queue records: the resource item (settings and counters) and consumer records. Message items
 * live in ./queue-messages.ts.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { countAll, ddb, isConditionFailed, tableName } from './client';
import { metaKeys, ttlSeconds } from './keys';
import type { ResourceItem } from './resources';
import { CONSUMER_WINDOW_MS } from '../domain/queues';

export interface QueueItem extends ResourceItem {
  kind: 'QUEUE';
  max_size_mb: number;
  message_ttl_seconds: number;
  max_retries: number;
  dead_letter_topic?: string;
  /** Messages stored and not yet acked, expired or dead-lettered. */
  message_count?: number;
  /** Payload bytes of those messages, against max_size_mb. */
  bytes?: number;
  /** Messages dropped (no dead-letter topic, or it matched nothing). */
  dropped_count?: number;
  dead_lettered_count?: number;
}

/** Settings a publish needs, kept on the queue's binding. */
export interface QueueBindingSettings {
  max_size_mb: number;
  message_ttl_seconds: number;
  max_retries: number;
  dead_letter_topic?: string;
}

export const queueBindingSettings = (q: QueueItem): QueueBindingSettings => ({
  max_size_mb: q.max_size_mb,
  message_ttl_seconds: q.message_ttl_seconds,
  max_retries: q.max_retries,
  ...(q.dead_letter_topic ? { dead_letter_topic: q.dead_letter_topic } : {}),
});

/** Strongly consistent: a queue created just before is found, a deleted one is not. */
export async function getQueue(ns: string, name: string): Promise<QueueItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.resource(ns, 'QUEUE', name), ConsistentRead: true }));
  return out.Item as QueueItem | undefined;
}

/**
 * Reserves room for messages in a queue: adds to its counters unless that would exceed
 * `maxBytes`. Returns 'ok', 'full', or 'gone' (deleted or recreated since the binding was read).
 */
export async function reserveQueueRoom(ns: string, name: string, id: string, count: number, bytes: number, maxBytes: number): Promise<'ok' | 'full' | 'gone'> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.resource(ns, 'QUEUE', name),
        UpdateExpression: 'ADD message_count :n, #b :b',
        ConditionExpression: 'id = :id AND (attribute_not_exists(#b) OR #b <= :room)',
        ExpressionAttributeNames: { '#b': 'bytes' },
        ExpressionAttributeValues: { ':n': count, ':b': bytes, ':id': id, ':room': maxBytes - bytes },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'ok';
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const old = (e as { Item?: Record<string, { S?: string }> }).Item;
    return old?.id?.S === id ? 'full' : 'gone';
  }
}

/**
 * Adjusts a queue's counters after messages left it (acked, expired, dead-lettered, dropped).
 * Conditional on the queue's id, so it never resurrects a deleted queue's item.
 */
export async function releaseQueueRoom(
  ns: string,
  name: string,
  id: string,
  count: number,
  bytes: number,
  extra: { dropped?: number; deadLettered?: number } = {},
): Promise<void> {
  const adds = ['message_count :n', '#b :b'];
  const values: Record<string, unknown> = { ':n': -count, ':b': -bytes, ':id': id };
  if (extra.dropped) {
    adds.push('dropped_count :d');
    values[':d'] = extra.dropped;
  }
  if (extra.deadLettered) {
    adds.push('dead_lettered_count :l');
    values[':l'] = extra.deadLettered;
  }
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.resource(ns, 'QUEUE', name),
        UpdateExpression: `ADD ${adds.join(', ')}`,
        ConditionExpression: 'id = :id',
        ExpressionAttributeNames: { '#b': 'bytes' },
        ExpressionAttributeValues: values,
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e; // the queue is gone: nothing to count
  }
}

/** Counts dropped messages that never entered the queue (e.g. it was full). */
export async function countDropped(ns: string, name: string, id: string, n: number): Promise<void> {
  await releaseQueueRoom(ns, name, id, 0, 0, { dropped: n });
}

/**
 * Sets the counters to recounted values (sweeper reconciliation), only if they still hold the
 * values read before the count (`seen`): a publish or ack that changed them while the count ran
 * would otherwise be lost; that round is skipped and the next one corrects the drift. Returns
 * whether the counters were set.
 */
export async function setQueueCounters(
  ns: string,
  name: string,
  id: string,
  counted: { count: number; bytes: number },
  seen: { count: number; bytes: number },
  now: number,
): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.resource(ns, 'QUEUE', name),
        UpdateExpression: 'SET message_count = :n, #b = :b, reconciled_at = :t',
        ConditionExpression: 'id = :id AND message_count = :seenN AND #b = :seenB',
        ExpressionAttributeNames: { '#b': 'bytes' },
        ExpressionAttributeValues: { ':n': counted.count, ':b': counted.bytes, ':t': now, ':id': id, ':seenN': seen.count, ':seenB': seen.bytes },
      }),
    );
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    return false;
  }
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
  await ddb().send(
    new PutCommand({
      TableName: tableName('meta'),
      Item: { ...consumerKey(ns, queueId, consumer), last_seen: now, ttl: ttlSeconds(now + CONSUMER_WINDOW_MS + 60_000) },
    }),
  );
}

/** Distinct consumers seen within the last five minutes. */
export async function countConsumers(ns: string, queueId: string, now: number): Promise<number> {
  return countAll({
    TableName: tableName('meta'),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
    FilterExpression: 'last_seen >= :since',
    ExpressionAttributeValues: { ':pk': metaKeys.namespacePk(ns), ':p': `CONSUMER#${queueId}#`, ':since': now - CONSUMER_WINDOW_MS },
  });
}
