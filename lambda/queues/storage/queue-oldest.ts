/**
 * The publish time of a queue's oldest live message, read from its expiry buckets
 * (lambda/queues/storage/queues.ts), never from SQS: SQS gives the age of the oldest message only as the
 * CloudWatch metric ApproximateAgeOfOldestMessage, not through GetQueueAttributes
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html,
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html).
 *
 * Every message is counted in the bucket its expiry falls in: a bucket ending at `end` (width `w`,
 * a tenth of the TTL between 1 s and 60 s) holds messages that expire in (end − w, end], so
 * were published in (end − w − TTL, end − TTL]. The first bucket, by end, that has not ended and
 * still counts a message therefore bounds the oldest live message's publish time from below by
 * `end − w − TTL`: the age answered is at most one bucket width more than the true one, never less.
 *
 * Cost: one strongly consistent Query of the queue's not-ended buckets (items of about 60 bytes:
 * up to about 65 buckets per read unit), in key order, stopping at the first page holding a
 * non-empty bucket. A queue has at most one bucket per bucket width of its TTL (11 for a TTL up to
 * 10 minutes, at most 20,161 for 14 days at 60 s), whatever its depth.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { expiryBucketWidthMs } from './queues';

/** Buckets read per Query page: the first page usually holds the answer. */
const PAGE = 200;

export interface OldestMessage {
  /** Epoch ms no later than the oldest live message's publish time (one bucket width early at most). */
  publishedNoEarlierThan: number;
  /** The bound's precision: the bucket width, ms. */
  precisionMs: number;
}

/** The earliest publish time of a message counted in the bucket ending at `bucketEnd`: `end − width − TTL`. */
export const bucketPublishedNoEarlierThan = (bucketEnd: number, ttlSeconds: number) => bucketEnd - expiryBucketWidthMs(ttlSeconds) - ttlSeconds * 1000;

/** The oldest live (not acked, not expired) message of a queue incarnation, or undefined when it counts none. */
export async function oldestMessage(ns: string, queueId: string, ttlSeconds: number, now: number): Promise<OldestMessage | undefined> {
  const w = expiryBucketWidthMs(ttlSeconds);
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({
        TableName: tableName('meta'),
        KeyConditionExpression: 'pk = :pk AND sk > :now',
        // A bucket whose messages were all acked stays (at 0) until it ends and is pruned.
        FilterExpression: '#n > :zero',
        ExpressionAttributeNames: { '#n': 'n' },
        ExpressionAttributeValues: { ':pk': metaKeys.queueExpiryBuckets(ns, queueId), ':now': String(now).padStart(15, '0'), ':zero': 0 },
        ConsistentRead: true,
        Limit: PAGE,
        ExclusiveStartKey: start,
      }),
    );
    const first = out.Items?.[0];
    if (first) return { publishedNoEarlierThan: bucketPublishedNoEarlierThan(Number(first.sk), ttlSeconds), precisionMs: w };
    start = out.LastEvaluatedKey;
  } while (start);
  return undefined;
}
