/**
 * A queue's expiry buckets (./queues.ts "Counting by expiry time"): every message is counted in
 * the bucket its TTL ends in, besides the queue's running totals, so the live count is the
 * totals less the buckets whose end has passed; the sweeper prunes those.
 */
import { DeleteCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName, updateOnce } from '../../core/storage/client';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';

const META = () => tableName('meta');

/** Width of a queue's expiry buckets: a tenth of its TTL, between 1 s and 60 s. */
export const expiryBucketWidthMs = (ttlSeconds: number) => Math.min(60_000, Math.max(1_000, Math.round(ttlSeconds * 100)));

/** The end (epoch ms) of the expiry bucket of a message published at `publishedAt`: the first bucket boundary at or after its expiry. */
export function expiryBucketEnd(publishedAt: number, ttlSeconds: number): number {
  const w = expiryBucketWidthMs(ttlSeconds);
  return Math.ceil((publishedAt + ttlSeconds * 1000) / w) * w;
}

/** Amounts per expiry bucket (by bucket end). */
export type BucketAmounts = Map<number, { count: number; bytes: number; heldCount?: number; heldBytes?: number }>;

/** Sums messages by their expiry bucket. */
export function byExpiryBucket<T>(items: T[], ttlSeconds: number, publishedAt: (t: T) => number | undefined, bytes: (t: T) => number, o: { held?: boolean; count?: boolean } = {}): BucketAmounts {
  const out: BucketAmounts = new Map();
  const counted = o.count ?? true;
  for (const t of items) {
    const p = publishedAt(t);
    if (p === undefined) continue; // a handle from before expiry buckets: its message is in none
    const end = expiryBucketEnd(p, ttlSeconds);
    const a = out.get(end) ?? { count: 0, bytes: 0, ...(o.held ? { heldCount: 0, heldBytes: 0 } : {}) };
    if (counted) {
      a.count += 1;
      a.bytes += bytes(t);
    }
    if (o.held) {
      a.heldCount = (a.heldCount ?? 0) + 1;
      a.heldBytes = (a.heldBytes ?? 0) + bytes(t);
    }
    out.set(end, a);
  }
  return out;
}

/** The held part of `buckets` in all. */
export const heldOf = (buckets: BucketAmounts | undefined) => [...(buckets?.values() ?? [])].reduce((s, a) => ({ count: s.count + (a.heldCount ?? 0), bytes: s.bytes + (a.heldBytes ?? 0) }), { count: 0, bytes: 0 });

/** Buckets whose end has passed (their messages are expired but still in the totals). */
export async function endedBuckets(ns: string, queueId: string, now: number): Promise<{ end: number; n: number; b: number; hn: number; hb: number }[]> {
  // Every page: a queue that was not pruned for a while (a sweeper outage) has more than one.
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({
        TableName: META(),
        KeyConditionExpression: 'pk = :pk AND sk <= :now',
        ExpressionAttributeValues: { ':pk': metaKeys.queueExpiryBuckets(ns, queueId), ':now': String(now).padStart(15, '0') },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items.map((i) => ({ end: Number(i.sk), n: Number(i.n ?? 0), b: Number(i.b ?? 0), hn: Number(i.hn ?? 0), hb: Number(i.hb ?? 0) }));
}

/**
 * Prunes the queue's ended expiry buckets: each is deleted and its amounts subtracted from the
 * totals in one transaction, conditional on the amounts read (a change meanwhile: it is left for
 * the next prune). An empty bucket is only deleted. Returns the messages pruned.
 */
export async function pruneExpiryBuckets(ns: string, queueId: string, now: number): Promise<number> {
  let pruned = 0;
  for (const e of await endedBuckets(ns, queueId, now)) {
    const key = metaKeys.queueExpiryBucket(ns, queueId, e.end);
    const same = {
      ConditionExpression: '#n = :n AND #b = :b AND (attribute_not_exists(hn) OR hn = :hn) AND (attribute_not_exists(hb) OR hb = :hb)',
      ExpressionAttributeNames: { '#n': 'n', '#b': 'b' },
      ExpressionAttributeValues: { ':n': e.n, ':b': e.b, ':hn': e.hn, ':hb': e.hb },
    };
    try {
      if (e.n === 0 && e.b === 0 && e.hn === 0 && e.hb === 0) {
        await ddb().send(new DeleteCommand({ TableName: META(), Key: key, ...same }));
        continue;
      }
      await ddb().send(
        new TransactWriteCommand({
          TransactItems: [
            { Delete: { TableName: META(), Key: key, ...same } },
            {
              Update: {
                TableName: META(),
                Key: metaKeys.queueCounters(ns, queueId),
                UpdateExpression: 'ADD message_count :n, #b :b, expired_count :x, held_count :hn, held_bytes :hb, prunes :one SET pruned_at = :now',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeNames: { '#b': 'bytes' },
                ExpressionAttributeValues: { ':n': -e.n, ':b': -e.b, ':x': Math.max(0, e.n), ':hn': -e.hn, ':hb': -e.hb, ':one': 1, ':now': now },
              },
            },
          ],
        }),
      );
      pruned += e.n;
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (!isConditionFailed(err) && name !== 'TransactionCanceledException') throw err;
      // Changed meanwhile (the next prune takes it), or the queue is gone (its purge takes it).
    }
  }
  return pruned;
}

/**
 * Adds to (or, negative, takes from) the expiry buckets; each bucket item lives a day past its end
 * at most (a deleted queue's). A bucket's held part is written once (./client.ts updateOnce, two
 * write units): the prune subtracts the bucket from the totals, and the held amount is not
 * corrected by the reconciliation (./queue-held.ts), so a held part applied twice by the SDK's
 * retry would leave the held amount one too low for good.
 */
export async function addToBuckets(ns: string, queueId: string, amounts: BucketAmounts): Promise<void> {
  await Promise.all(
    [...amounts].map(([end, a]) => {
      const update = bucketUpdate(ns, queueId, end, a);
      return a.heldCount ? updateOnce(update) : ddb().send(new UpdateCommand(update));
    }),
  );
}

/** The update that adds `a` to the expiry bucket ending at `end` (alone, or in a transaction). */
export function bucketUpdate(ns: string, queueId: string, end: number, a: BucketAmounts extends Map<number, infer V> ? V : never) {
  return {
    TableName: META(),
    Key: metaKeys.queueExpiryBucket(ns, queueId, end),
    UpdateExpression: a.heldCount !== undefined ? 'ADD #n :n, #b :b, hn :hn, hb :hb SET #t = :ttl' : 'ADD #n :n, #b :b SET #t = :ttl',
    ExpressionAttributeNames: { '#n': 'n', '#b': 'b', '#t': 'ttl' },
    ExpressionAttributeValues: {
      ':n': a.count,
      ':b': a.bytes,
      ':ttl': ttlSeconds(end + 86_400_000),
      ...(a.heldCount !== undefined ? { ':hn': a.heldCount, ':hb': a.heldBytes ?? 0 } : {}),
    },
  };
}

/**
 * Takes `buckets` out of the queue's expiry buckets only (one UpdateItem per bucket), the totals
 * left alone: for a give-back that must be retriable part by part (a cancel records the totals
 * and the bucket of each queue as separate parts, so a retry never gives back the totals twice).
 */
export async function releaseQueueBuckets(ns: string, queueId: string, buckets: BucketAmounts): Promise<void> {
  const negative: BucketAmounts = new Map(
    [...buckets].map(([end, a]) => [end, { count: -a.count, bytes: -a.bytes, ...(a.heldCount !== undefined ? { heldCount: -a.heldCount, heldBytes: -(a.heldBytes ?? 0) } : {}) }]),
  );
  await addToBuckets(ns, queueId, negative);
}
