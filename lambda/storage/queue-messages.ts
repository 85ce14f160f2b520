/**
 * Queue message items (table `queueMessages`, keyed by the queue's internal id and the message
 * id). Visible messages are found through the LSI `queueMessagesByVisibility` (a strongly
 * consistent Query `visible_at <= now`), so consume and ack cost O(batch) whatever the depth.
 * Each claim is a conditional write on the `visible_at` the consumer read: of two consumers that
 * read the same message, exactly one wins it.
 */
import { BatchWriteCommand, DeleteCommand, QueryCommand, UpdateCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, queryAll, tableName } from './client';
import { ttlSeconds } from './keys';
import { countDropped, releaseQueueRoom, reserveQueueRoom, type QueueBindingSettings, type QueueItem } from './queues';
import type { Binding } from './resources';
import type { PublishedMessage } from '../domain/message';
import { mayDeliverAgain, newReceiptHandle } from '../domain/queues';
import { announceArrival } from '../publishing/arrivals';
import { countMetric, METRIC } from '../observability';

export interface QueueMessageItem extends PublishedMessage {
  queue_id: string;
  namespace: string;
  queue_name: string;
  /** Epoch ms from which the message may be received. */
  visible_at: number;
  receive_count: number;
  /** Current receipt handle; absent before the first receive. */
  receipt?: string;
  /** Epoch ms after which the message is never returned (message_ttl_seconds). */
  expires_at: number;
  ttl: number;
}

const MESSAGES = () => tableName('queueMessages');
/**
 * DynamoDB caps an item collection (one partition key) of a table with local secondary indexes
 * at 10 GB, items and index copies together. A queue is treated as full a little below that, so
 * a huge `max_size_mb` makes the queue dead-letter or drop like any full queue instead of failing
 * every publish with the service's ItemCollectionSizeLimitExceededException.
 */
export const MAX_QUEUE_BYTES = 9 * 1024 ** 3;
const BATCH_WRITE_MAX = 25;

/** Writes items with BatchWriteItem, retrying unprocessed items with backoff until all are stored. */
export async function batchWrite(table: string, requests: Record<string, unknown>[]): Promise<void> {
  const chunks: Record<string, unknown>[][] = [];
  for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX) chunks.push(requests.slice(i, i + BATCH_WRITE_MAX));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending = chunk;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 8) throw new Error(`BatchWriteItem on ${table} left ${pending.length} items unprocessed after retries`);
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
        const out = await ddb().send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
        pending = (out.UnprocessedItems?.[table] ?? []) as Record<string, unknown>[];
      }
    }),
  );
}

/**
 * The queue sink of publish: stores the messages in every bound queue. A queue that the messages
 * would push over `max_size_mb` gets them dead-lettered (or dropped and counted) instead, and the
 * publish still succeeds for the other bindings (DESIGN.md section 6).
 */
export async function storeInQueues(ctx: { namespace: string; now: number }, bindings: Binding[], messages: PublishedMessage[]): Promise<void> {
  const bytes = messages.reduce((n, m) => n + m.size, 0);
  await Promise.all(
    bindings.map(async (b) => {
      const s = b.settings as unknown as QueueBindingSettings;
      const room = await reserveQueueRoom(ctx.namespace, b.name, b.id, messages.length, bytes, Math.min(s.max_size_mb * 1024 * 1024, MAX_QUEUE_BYTES));
      if (room === 'gone') return;
      if (room === 'full') {
        await overflow(ctx, b, s, messages);
        return;
      }
      const items: QueueMessageItem[] = messages.map((m) => {
        const expires = m.published_at + s.message_ttl_seconds * 1000;
        return {
          ...m,
          queue_id: b.id,
          namespace: ctx.namespace,
          queue_name: b.name,
          visible_at: m.published_at,
          receive_count: 0,
          expires_at: expires,
          ttl: ttlSeconds(expires) + 3600,
        };
      });
      await batchWrite(MESSAGES(), items.map((Item) => ({ PutRequest: { Item } })));
      announceArrival(b.id);
    }),
  );
}

async function overflow(ctx: { namespace: string; now: number }, b: Binding, s: QueueBindingSettings, messages: PublishedMessage[]) {
  const { deadLetter } = await import('../publishing/dead-letter');
  let dropped = 0;
  for (const m of messages) {
    const sent = await deadLetter(ctx.namespace, s.dead_letter_topic, m, { dlq_source_queue: b.name, dlq_reason: 'queue_full', dlq_receive_count: '0' }, ctx.now);
    if (!sent) dropped++;
  }
  countMetric(METRIC.deadLettered, messages.length - dropped, { namespace: ctx.namespace, dimensions: { reason: 'queue_full' } });
  countMetric(METRIC.dropped, dropped, { namespace: ctx.namespace, dimensions: { reason: 'queue_full' } });
  if (dropped) await countDropped(ctx.namespace, b.name, b.id, dropped);
}

export interface ClaimOptions {
  max: number;
  visibilityMs: number;
  now: number;
}

export interface ClaimResult {
  claimed: QueueMessageItem[];
  /** Messages found expired and removed. */
  expired: QueueMessageItem[];
  /** Messages whose deliveries were used up, removed (and dead-lettered when configured). */
  exhausted: QueueMessageItem[];
}

/** Visible messages, oldest first: one strongly consistent Query on the visibility index. */
async function visibleCandidates(queueId: string, now: number, limit: number, start?: Record<string, unknown>): Promise<QueryCommandOutput> {
  return ddb().send(
    new QueryCommand({
      TableName: MESSAGES(),
      IndexName: 'queueMessagesByVisibility',
      KeyConditionExpression: 'queue_id = :q AND visible_at <= :now',
      ExpressionAttributeValues: { ':q': queueId, ':now': now },
      ConsistentRead: true,
      Limit: limit,
      ExclusiveStartKey: start,
    }),
  );
}

/**
 * Takes a message from the visible set if it is still where we saw it: `delete` removes it,
 * `receive` sets `set` and counts a receive, `hold` only sets `set`.
 */
async function takeIfUnchanged(m: QueueMessageItem, set: Record<string, unknown>, mode: 'delete' | 'receive' | 'hold'): Promise<QueueMessageItem | undefined> {
  const key = { queue_id: m.queue_id, message_id: m.message_id };
  try {
    if (mode === 'delete') {
      await ddb().send(
        new DeleteCommand({ TableName: MESSAGES(), Key: key, ConditionExpression: 'visible_at = :seen', ExpressionAttributeValues: { ':seen': m.visible_at } }),
      );
      return m;
    }
    const names = Object.keys(set);
    const out = await ddb().send(
      new UpdateCommand({
        TableName: MESSAGES(),
        Key: key,
        UpdateExpression: `SET ${names.map((_, i) => `#s${i} = :s${i}`).join(', ')}${mode === 'receive' ? ' ADD receive_count :one' : ''}`,
        ConditionExpression: 'visible_at = :seen',
        ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#s${i}`, name])),
        ExpressionAttributeValues: {
          ':seen': m.visible_at,
          ...(mode === 'receive' ? { ':one': 1 } : {}),
          ...Object.fromEntries(names.map((name, i) => [`:s${i}`, set[name]])),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes as QueueMessageItem;
  } catch (e) {
    if (isConditionFailed(e)) return undefined; // another consumer got there first
    throw e;
  }
}

/**
 * Concurrent consumers read the same oldest messages; if each tried them in the same order, all
 * but one would lose every race (10 consumers: ~70% of claim writes lost). Once this container
 * has lost a race on a queue, it tries that queue's window of oldest candidates in a random order
 * for a few seconds: delivery stays FIFO best effort within that small window, lost races become
 * rare, and a lone consumer, which never loses a race, keeps strict oldest-first order.
 */
const contendedUntil = new Map<string, number>();
const CONTENTION_MEMORY_MS = 5_000;
function spread<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Claims up to `max` visible messages for one consumer, oldest first: each gets a fresh receipt
 * handle, `receive_count + 1`, and stays hidden for the visibility timeout. Expired messages met on
 * the way are removed; messages whose deliveries are used up are removed for dead-lettering.
 * Reads O(max) items: the Query asks for a few more than needed to absorb lost races.
 */
export async function claimMessages(queue: QueueItem, { max, visibilityMs, now }: ClaimOptions): Promise<ClaimResult> {
  const result: ClaimResult = { claimed: [], expired: [], exhausted: [] };
  let start: Record<string, unknown> | undefined;
  for (let round = 0; round < 5 && result.claimed.length < max; round++) {
    // Twice the need plus a few: room to absorb lost races and to spread concurrent consumers.
    const page = await visibleCandidates(queue.id, now, 2 * (max - result.claimed.length) + 5, start);
    const candidates = (page.Items ?? []) as QueueMessageItem[];
    const deliverable: QueueMessageItem[] = [];
    await Promise.all(
      candidates.map(async (m) => {
        if (m.expires_at <= now) {
          if (await takeIfUnchanged(m, {}, 'delete')) result.expired.push(m);
        } else if (!mayDeliverAgain(m.receive_count, queue.max_retries)) {
          // Hide it briefly while it is dead-lettered: if this container dies midway, it
          // reappears and is dead-lettered again (at least once), never lost.
          const held = await takeIfUnchanged(m, { visible_at: now + 60_000 }, 'hold');
          if (held) result.exhausted.push(held);
        } else {
          deliverable.push(m);
        }
      }),
    );
    // Try the page's candidates until enough are claimed; lost races move on to untried ones.
    const pool = (contendedUntil.get(queue.id) ?? 0) > now ? spread(deliverable) : deliverable;
    while (pool.length > 0 && result.claimed.length < max) {
      const tries = pool.splice(0, max - result.claimed.length);
      const winners = await Promise.all(
        tries.map((m) => takeIfUnchanged(m, { visible_at: now + visibilityMs, receipt: newReceiptHandle(), last_received_at: now }, 'receive')),
      );
      for (const w of winners) if (w) result.claimed.push(w);
      if (winners.some((w) => !w)) {
        if (contendedUntil.size > 10_000) contendedUntil.clear();
        contendedUntil.set(queue.id, now + CONTENTION_MEMORY_MS);
      }
    }
    start = page.LastEvaluatedKey;
    if (!start) break;
  }
  result.claimed.sort((a, b) => (a.message_id < b.message_id ? -1 : 1));
  return result;
}

/** Deletes a message (after dead-lettering), unconditionally. */
export async function deleteMessage(queueId: string, messageId: string): Promise<void> {
  await ddb().send(new DeleteCommand({ TableName: MESSAGES(), Key: { queue_id: queueId, message_id: messageId } }));
}

export type AckOutcome = { ok: true; message: QueueMessageItem } | { ok: false; reason: 'MESSAGE_NOT_FOUND' | 'INVALID_RECEIPT_HANDLE' };

/**
 * Acknowledges with a receipt handle: deletes the message if the handle is its current one and its
 * visibility timeout has not ended. One conditional DeleteItem.
 */
export async function ackMessage(queueId: string, messageId: string, handle: string, now: number): Promise<AckOutcome> {
  try {
    const out = await ddb().send(
      new DeleteCommand({
        TableName: MESSAGES(),
        Key: { queue_id: queueId, message_id: messageId },
        ConditionExpression: 'receipt = :h AND visible_at > :now',
        ExpressionAttributeValues: { ':h': handle, ':now': now },
        ReturnValues: 'ALL_OLD',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { ok: true, message: out.Attributes as QueueMessageItem };
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const exists = (e as { Item?: unknown }).Item !== undefined;
    return { ok: false, reason: exists ? 'INVALID_RECEIPT_HANDLE' : 'MESSAGE_NOT_FOUND' };
  }
}

/** Messages whose TTL has passed, oldest first (sweeper), through the expiry index. */
export async function expiredMessages(queueId: string, now: number, limit: number): Promise<QueueMessageItem[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: MESSAGES(),
      IndexName: 'queueMessagesByExpiry',
      KeyConditionExpression: 'queue_id = :q AND expires_at <= :now',
      ExpressionAttributeValues: { ':q': queueId, ':now': now },
      Limit: limit,
    }),
  );
  return (out.Items ?? []) as QueueMessageItem[];
}

/** Removes an expired message unless it was received meanwhile; returns whether it was removed. */
export async function removeExpired(m: QueueMessageItem): Promise<boolean> {
  return (await takeIfUnchanged(m, {}, 'delete')) !== undefined;
}

/** Deletes up to `limit` messages of a deleted queue; returns how many it deleted. */
export async function purgeMessages(queueId: string, limit: number): Promise<number> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: MESSAGES(),
      KeyConditionExpression: 'queue_id = :q',
      ExpressionAttributeValues: { ':q': queueId },
      ProjectionExpression: 'queue_id, message_id',
      Limit: limit,
    }),
  );
  const keys = out.Items ?? [];
  if (keys.length) await batchWrite(MESSAGES(), keys.map((Key) => ({ DeleteRequest: { Key } })));
  return keys.length;
}

/** Counts a queue's messages and their bytes (sweeper reconciliation of the counters). */
/**
 * Publish time of the queue's oldest stored message (message ids begin with their publish time,
 * so it is the first item of the partition): one Query of one item. Undefined when empty.
 */
export async function oldestMessageAt(queueId: string): Promise<number | undefined> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: MESSAGES(),
      KeyConditionExpression: 'queue_id = :q',
      ExpressionAttributeValues: { ':q': queueId },
      ProjectionExpression: 'published_at',
      Limit: 1,
    }),
  );
  return (out.Items?.[0] as { published_at?: number } | undefined)?.published_at;
}

export async function countMessages(queueId: string): Promise<{ count: number; bytes: number }> {
  const items = await queryAll<{ size?: number }>({
    TableName: MESSAGES(),
    KeyConditionExpression: 'queue_id = :q',
    ExpressionAttributeValues: { ':q': queueId },
    ProjectionExpression: '#s',
    ExpressionAttributeNames: { '#s': 'size' },
  });
  return { count: items.length, bytes: items.reduce((n, i) => n + (i.size ?? 0), 0) };
}

export { releaseQueueRoom };
