/** A queue's consumer records (`consumer_count`), written by consumes (lambda/queues/consume.ts). */
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../core/storage/client';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';
import { CONSUMER_WINDOW_MS } from '../rules/queues';

const META = () => tableName('meta');

/**
 * Consumer records are keyed by the 5-minute period they were written in, so counting reads only
 * the records of the two periods the 5-minute window touches (never the stale ones DynamoDB TTL
 * has not removed yet, which may linger for days), at most two per consumer (a period as long as
 * the window: minute periods made it six), and stops at {@link CONSUMER_COUNT_LIMIT} distinct
 * consumers: bounded per request whatever `consumer_id`s clients choose. A list page of 100 queues
 * with 1,000 consumers each reads up to 200,000 items of about 100 bytes (about 2,500 read units,
 * eventually consistent: 8 KB a unit), against 600,000 with minute periods.
 */
const CONSUMER_BUCKET_MS = 5 * 60_000;
/** `consumer_count` counts at most this many distinct consumers. */
const CONSUMER_COUNT_LIMIT = 1000;
const bucketOf = (t: number) => String(Math.floor(t / CONSUMER_BUCKET_MS)).padStart(12, '0');
/**
 * The partition of a queue's consumer records: one per queue (they were under the namespace's
 * partition, written by every queue's consumes of the namespace), so no key takes the consumer
 * records of more than one queue (docs/design/0025-consume-cost-and-keys.md).
 */
export const consumersPk = (ns: string, queueId: string) => `${metaKeys.namespacePk(ns)}#QUEUE#${queueId}#CONSUMERS`;
const consumerKey = (ns: string, queueId: string, consumer: string, now: number) => ({
  pk: consumersPk(ns, queueId),
  sk: `CONSUMER#${queueId}#${bucketOf(now)}#${consumer}`,
});
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
        Item: { ...consumerKey(ns, queueId, consumer, now), consumer, last_seen: now, ttl: ttlSeconds(now + CONSUMER_WINDOW_MS + 2 * CONSUMER_BUCKET_MS) },
      }),
    );
  } catch (e) {
    recentlyRecorded.delete(k); // not written: the next consume tries again
    throw e;
  }
}

/**
 * Distinct consumers seen within the last five minutes, at most `limit`: one Query of the last
 * minutes' records, paged until `limit` distinct consumers are found (each consumer has at most
 * one record per minute, so at most about 6 × `limit` small items are read).
 */
export async function countConsumers(ns: string, queueId: string, now: number, limit = CONSUMER_COUNT_LIMIT): Promise<number> {
  const since = now - CONSUMER_WINDOW_MS;
  const seen = new Set<string>();
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({
        TableName: META(),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        FilterExpression: 'last_seen >= :since',
        ProjectionExpression: 'consumer',
        ExpressionAttributeValues: {
          ':pk': consumersPk(ns, queueId),
          ':from': `CONSUMER#${queueId}#${bucketOf(since)}#`,
          ':to': `CONSUMER#${queueId}#${bucketOf(now)}#\uffff`,
          ':since': since,
        },
        ExclusiveStartKey,
      }),
    );
    for (const item of out.Items ?? []) {
      seen.add(String(item.consumer));
      if (seen.size >= limit) return limit;
    }
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return seen.size;
}
