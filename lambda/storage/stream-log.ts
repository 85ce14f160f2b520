/**
 * Stream log items (table `streamLog`): the publish sink that appends to every bound stream, the
 * offset-range reads of consume (O(batch): a Query by offset, or the partition index then the items
 * by key), and the deletes of trimming and purging.
 */
import { BatchGetCommand, QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { randomInt } from 'node:crypto';
import { batchWrite, ddb, tableName } from './client';
import { ttlSeconds } from './keys';
import type { Binding } from './resources';
import { clearPending, reserveBlock } from './log-reservations';
import type { StreamBindingSettings } from './streams';
import type { PublishedMessage } from '../domain/message';
import { BUCKET_SIZE, bucketOf, partitionFor, partitionSortKey } from '../domain/streams';
import { announceArrival } from '../publishing/arrivals';

export interface StreamLogItem extends PublishedMessage {
  bucket: string;
  offset: number;
  partition: number;
  poff: number;
  ttl: number;
}

const LOG = () => tableName('streamLog');
const bucketKey = (streamId: string, offset: number) => `${streamId}#${bucketOf(offset)}`;
const DAY_MS = 86_400_000;

/** Round-robin position per stream in this container; starts anywhere so containers spread. */
const roundRobin = new Map<string, number>();
function nextRoundRobin(streamId: string): number {
  const n = roundRobin.get(streamId) ?? randomInt(1 << 30);
  if (roundRobin.size > 10_000) roundRobin.clear();
  roundRobin.set(streamId, n + 1);
  return n;
}

/**
 * The stream sink of publish: appends the messages to every bound stream. One counter update
 * reserves the batch's offsets (in input order), then the items are written; the reservation is
 * cleared even when a write fails, so readers are never held back by a publish that answered 500.
 */
export async function appendToStreams(ctx: { namespace: string; now: number }, bindings: Binding[], messages: PublishedMessage[]): Promise<void> {
  const bytes = messages.reduce((n, m) => n + m.size, 0);
  await Promise.all(
    bindings.map(async (b) => {
      const s = b.settings as unknown as StreamBindingSettings;
      const partitions = messages.map((m) => partitionFor(m.partition_key, s.partition_count, m.partition_key === undefined ? nextRoundRobin(b.id) : 0));
      const target = { namespace: ctx.namespace, kind: 'STREAM' as const, name: b.name, id: b.id };
      const r = await reserveBlock(target, messages.length, bytes, ctx.now);
      if (!r) return; // deleted since the binding was read
      try {
        const items: StreamLogItem[] = messages.map((m, i) => {
          const offset = r.start + i;
          return {
            ...m,
            bucket: bucketKey(b.id, offset),
            offset,
            partition: partitions[i],
            poff: partitionSortKey(partitions[i], offset),
            // A backstop only: the sweeper trims by retention first and keeps the counters right.
            ttl: ttlSeconds(m.published_at + (s.retention_days + 2) * DAY_MS),
          };
        });
        await batchWrite(LOG(), items.map((Item) => ({ PutRequest: { Item } })));
      } finally {
        await clearPending(target, [r.token]);
      }
      announceArrival(b.id);
    }),
  );
}

export interface ReadOptions {
  /** First offset to return. */
  from: number;
  /** First offset not to return (the stable horizon). */
  to: number;
  max: number;
  /** Stop once this many payload bytes are collected (at least one message is returned). */
  maxBytes: number;
  partition?: number;
  /** Only what trimming decides on. */
  keysOnly?: boolean;
}

/** Messages of a stream with `from <= offset < to`, in offset order. */
export async function readStreamLog(streamId: string, o: ReadOptions): Promise<StreamLogItem[]> {
  const out: StreamLogItem[] = [];
  let bytes = 0;
  const take = (items: StreamLogItem[]) => {
    for (const it of items) {
      if (out.length >= o.max || (out.length > 0 && bytes + it.size > o.maxBytes)) return false;
      out.push(it);
      bytes += it.size;
    }
    return true;
  };
  if (o.to <= o.from) return out;
  for (let b = bucketOf(o.from); b <= bucketOf(o.to - 1); b++) {
    const lo = Math.max(o.from, b * BUCKET_SIZE);
    const hi = Math.min(o.to - 1, b * BUCKET_SIZE + BUCKET_SIZE - 1);
    let start: Record<string, unknown> | undefined;
    do {
      const page: QueryCommandOutput = await ddb().send(
        new QueryCommand({
          TableName: LOG(),
          ...(o.partition === undefined
            ? {
                KeyConditionExpression: '#bk = :b AND #o BETWEEN :lo AND :hi',
                ExpressionAttributeNames: { '#bk': 'bucket', '#o': 'offset', ...(o.keysOnly ? { '#sz': 'size' } : {}) },
                ExpressionAttributeValues: { ':b': `${streamId}#${b}`, ':lo': lo, ':hi': hi },
                ...(o.keysOnly ? { ProjectionExpression: '#bk, #o, published_at, #sz' } : {}),
              }
            : {
                IndexName: 'streamLogByPartition',
                KeyConditionExpression: '#bk = :b AND poff BETWEEN :lo AND :hi',
                ExpressionAttributeNames: { '#bk': 'bucket' },
                ExpressionAttributeValues: { ':b': `${streamId}#${b}`, ':lo': partitionSortKey(o.partition, lo), ':hi': partitionSortKey(o.partition, hi) },
              }),
          ConsistentRead: true,
          Limit: Math.min(1000, o.max - out.length),
          ExclusiveStartKey: start,
        }),
      );
      let items = (page.Items ?? []) as StreamLogItem[];
      if (o.partition !== undefined) items = await getByKeys(items.map((k) => ({ bucket: k.bucket, offset: k.offset })));
      if (!take(items)) return out;
      if (out.length >= o.max) return out;
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return out;
}

/** Items by key, strongly consistent, in offset order (BatchGetItem, 100 keys a call). */
async function getByKeys(keys: { bucket: string; offset: number }[]): Promise<StreamLogItem[]> {
  const found: StreamLogItem[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    let pending: Record<string, unknown>[] = keys.slice(i, i + 100);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error(`BatchGetItem on ${LOG()} left ${pending.length} keys unprocessed`);
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
      const out = await ddb().send(new BatchGetCommand({ RequestItems: { [LOG()]: { Keys: pending, ConsistentRead: true } } }));
      found.push(...((out.Responses?.[LOG()] ?? []) as StreamLogItem[]));
      pending = (out.UnprocessedKeys?.[LOG()]?.Keys ?? []) as Record<string, unknown>[];
    }
  }
  return found.sort((a, b) => a.offset - b.offset);
}

/** Deletes log items by offset (trimmed or purged). */
export async function deleteStreamItems(streamId: string, offsets: number[]): Promise<void> {
  await batchWrite(LOG(), offsets.map((offset) => ({ DeleteRequest: { Key: { bucket: bucketKey(streamId, offset), offset } } })));
}

/** Deletes up to `limit` items of one bucket of a deleted stream; returns how many. */
export async function purgeBucket(streamId: string, bucket: number, limit: number): Promise<number> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: LOG(),
      KeyConditionExpression: '#bk = :b',
      ExpressionAttributeValues: { ':b': `${streamId}#${bucket}` },
      ProjectionExpression: '#bk, #o',
      ExpressionAttributeNames: { '#bk': 'bucket', '#o': 'offset' },
      Limit: limit,
    }),
  );
  const keys = (out.Items ?? []) as Record<string, unknown>[];
  if (keys.length) await batchWrite(LOG(), keys.map((Key) => ({ DeleteRequest: { Key } })));
  return keys.length;
}
