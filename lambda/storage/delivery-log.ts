/**
 * The webhook delivery log table (extension; keys in ./keys.ts `deliveryLogKeys`, table in
 * ./tables.ts `deliveryLog`): one item per attempt, and one per failed delivery's message kept for
 * replay. Everything expires by TTL after 7 days (lambda/domain/delivery-log.ts).
 *
 * Cost: an attempt is one PutItem of a few hundred bytes (1 write unit) plus its index entry
 * (1 write unit). A delivery that ends in failure also writes its message (1 write unit per KB of
 * message, up to 257 for a 256 KiB payload); a replay that succeeds marks it recovered (1 unit).
 * Items are keyed per message, so the table's writes spread evenly; the index spreads each
 * webhook's attempts over LOG_SHARDS keys per outcome.
 */
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { LOG_RETENTION_SECONDS, LOG_SHARDS, logShard, timeKey, timeOfKey, type AttemptEntry, type AttemptOutcome, type ListQuery } from '../domain/delivery-log';
import type { PublishedMessage } from '../domain/message';
import { ddb, isConditionFailed, tableName } from './client';
import { batchGet, putEach } from './batch';
import { deliveryLogKeys as keys, ttlSeconds } from './keys';

const TABLE = () => tableName('deliveryLog');
const INDEX = 'attemptsByTime';

/** An entry as listed: with its time key (the cursor of the page it ends). */
export interface ListedAttempt extends AttemptEntry {
  at: string;
}

/** The Put of one attempt (built apart from sending, for unit tests). */
export function buildAttemptPut(ns: string, webhookId: string, e: AttemptEntry, entryId: string) {
  const at = timeKey(e.attempted_at, e.message_id, e.attempt, entryId);
  return new PutCommand({
    TableName: TABLE(),
    Item: {
      pk: keys.message(ns, webhookId, e.message_id),
      sk: keys.attemptSk(at),
      lpk: keys.byTime(ns, webhookId, e.outcome, logShard(e.message_id)),
      at,
      ...e,
      ttl: ttlSeconds(e.attempted_at) + LOG_RETENTION_SECONDS,
    },
  });
}

export async function putAttempt(ns: string, webhookId: string, e: AttemptEntry, entryId: string): Promise<void> {
  await ddb().send(buildAttemptPut(ns, webhookId, e, entryId));
}

/** A failed delivery's message, kept for replay. */
export interface RetainedMessage {
  message: PublishedMessage;
  /** Epoch ms the delivery ended in failure (the latest, if it failed again). */
  failed_at: number;
  /** Epoch ms a replay of it succeeded: a bulk replay of failures leaves it out. */
  recovered_at?: number;
}

/**
 * Keeps the message of a delivery that ended in failure for {@link LOG_RETENTION_SECONDS} (a
 * later failure writes it again, with a fresh time and TTL, and clears `recovered_at`). The
 * message is a native map, so a 256 KiB payload fits the 400 KB item limit as in
 * ./webhook-messages.ts.
 */
export async function putRetained(ns: string, webhookId: string, message: PublishedMessage, failedAt: number): Promise<void> {
  await ddb().send(
    new PutCommand({
      TableName: TABLE(),
      Item: { pk: keys.message(ns, webhookId, message.message_id), sk: keys.retainedSk, message, failed_at: failedAt, ttl: ttlSeconds(failedAt) + LOG_RETENTION_SECONDS },
    }),
  );
}

/** Marks a retained message as delivered by a replay (nothing when it is no longer retained). */
export async function markRecovered(ns: string, webhookId: string, messageId: string, now: number): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: keys.message(ns, webhookId, messageId), sk: keys.retainedSk },
        UpdateExpression: 'SET recovered_at = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/**
 * Keeps a retained message at least until `untilMs` (a replay by reference loads it for every
 * attempt, and its retries may outlast the 7 days).
 */
export async function extendRetained(ns: string, webhookId: string, messageId: string, untilMs: number): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: TABLE(),
        Key: { pk: keys.message(ns, webhookId, messageId), sk: keys.retainedSk },
        UpdateExpression: 'SET #t = :t',
        ConditionExpression: 'attribute_exists(pk) AND #t < :t',
        ExpressionAttributeNames: { '#t': 'ttl' },
        ExpressionAttributeValues: { ':t': ttlSeconds(untilMs) },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}

/** The retained message, read strongly consistently; undefined when none is kept. */
export async function getRetained(ns: string, webhookId: string, messageId: string): Promise<RetainedMessage | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: TABLE(), Key: { pk: keys.message(ns, webhookId, messageId), sk: keys.retainedSk }, ConsistentRead: true }));
  return out.Item as RetainedMessage | undefined;
}

/** Retained messages of several message ids (BatchGetItem per 100), by message id. */
export async function getManyRetained(ns: string, webhookId: string, messageIds: string[]): Promise<Map<string, RetainedMessage>> {
  const found = new Map<string, RetainedMessage>();
  for (let i = 0; i < messageIds.length; i += 100) {
    let keysLeft: Record<string, unknown>[] = messageIds.slice(i, i + 100).map((id) => ({ pk: keys.message(ns, webhookId, id), sk: keys.retainedSk }));
    for (let attempt = 0; keysLeft.length; attempt++) {
      if (attempt > 8) throw new Error(`BatchGetItem left ${keysLeft.length} retained messages unread after retries`);
      const out = await ddb().send(new BatchGetCommand({ RequestItems: { [TABLE()]: { Keys: keysLeft, ConsistentRead: true } } }));
      for (const item of out.Responses?.[TABLE()] ?? []) found.set((item as RetainedMessage).message.message_id, item as RetainedMessage);
      keysLeft = (out.UnprocessedKeys?.[TABLE()]?.Keys ?? []) as Record<string, unknown>[];
      if (keysLeft.length) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
    }
  }
  return found;
}

const ENTRY_FIELDS = ['message_id', 'attempt', 'attempted_at', 'duration_ms', 'status_code', 'outcome', 'error', 'final', 'replay'] as const;
const entryOf = (item: Record<string, unknown>): ListedAttempt => ({
  ...(Object.fromEntries(ENTRY_FIELDS.map((f) => [f, item[f] ?? null])) as unknown as AttemptEntry),
  at: String(item.at),
});

/**
 * One page of a webhook's attempts, newest first, and the time key to continue after (when there
 * are more). Without `message_id`: one Query per shard of each listed outcome, each for at most
 * `limit + 1` entries older than the cursor, merged (the index is eventually consistent: an entry
 * shows a moment after its attempt). With `message_id`: one Query of that message's items.
 */
export async function listAttempts(ns: string, webhookId: string, q: ListQuery): Promise<{ entries: ListedAttempt[]; next?: string }> {
  const found = q.message_id !== undefined ? await attemptsOfMessage(ns, webhookId, q.message_id, q) : await attemptsByTime(ns, webhookId, q);
  found.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  const entries = found.slice(0, q.limit);
  return { entries, ...(found.length > q.limit ? { next: entries[entries.length - 1].at } : {}) };
}

async function attemptsByTime(ns: string, webhookId: string, q: ListQuery): Promise<ListedAttempt[]> {
  const outcomes: AttemptOutcome[] = q.status ? [q.status] : ['succeeded', 'failed'];
  const queries = outcomes.flatMap((o) => Array.from({ length: LOG_SHARDS }, (_, shard) => keys.byTime(ns, webhookId, o, shard)));
  const pages = await Promise.all(
    queries.map(async (lpk) => {
      const out = await ddb().send(
        new QueryCommand({
          TableName: TABLE(),
          IndexName: INDEX,
          KeyConditionExpression: q.cursor ? 'lpk = :p AND #at < :c' : 'lpk = :p',
          ExpressionAttributeNames: q.cursor ? { '#at': 'at' } : undefined,
          ExpressionAttributeValues: { ':p': lpk, ...(q.cursor ? { ':c': q.cursor } : {}) },
          ScanIndexForward: false,
          Limit: q.limit + 1,
        }),
      );
      return (out.Items ?? []).map(entryOf);
    }),
  );
  return pages.flat();
}

async function attemptsOfMessage(ns: string, webhookId: string, messageId: string, q: ListQuery): Promise<ListedAttempt[]> {
  const input: QueryCommandInput = {
    TableName: TABLE(),
    KeyConditionExpression: q.cursor ? 'pk = :p AND sk BETWEEN :from AND :before' : 'pk = :p AND begins_with(sk, :from)',
    ExpressionAttributeValues: {
      ':p': keys.message(ns, webhookId, messageId),
      ':from': keys.attemptPrefix,
      ...(q.cursor ? { ':before': keys.attemptSk(q.cursor) } : {}),
      ...(q.status ? { ':o': q.status } : {}),
    },
    ...(q.status ? { FilterExpression: 'outcome = :o' } : {}),
    ScanIndexForward: false,
    ConsistentRead: true,
  };
  const out: ListedAttempt[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  // A message has a handful of attempts (at most 21 per delivery, plus its replays): read until
  // one page more than asked is in hand.
  do {
    const page = await ddb().send(new QueryCommand({ ...input, ExclusiveStartKey }));
    out.push(...(page.Items ?? []).map(entryOf).filter((e) => e.at !== q.cursor));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey && out.length <= q.limit);
  return out;
}

/** How late an attempt's entry may appear in the index after the time it is keyed by. */
export const LATE_ENTRY_MS = 60_000;

/**
 * Records that a replay of each message was queued at `now`, so a bulk replay whose pages
 * overlap queues each failure once (one small item per message, 1 write unit).
 */
export async function markReplayQueued(ns: string, webhookId: string, messageIds: string[], now: number): Promise<void> {
  const { failed, error } = await putEach(
    TABLE(),
    messageIds.map((id) => ({ pk: keys.message(ns, webhookId, id), sk: keys.replayQueuedSk, queued_at: now, ttl: ttlSeconds(now) + LOG_RETENTION_SECONDS })),
  );
  if (failed.length) throw error ?? new Error(`${failed.length} replay marks not written`);
}

/** When a replay of each message was last queued (absent: never). */
export async function replayQueuedAt(ns: string, webhookId: string, messageIds: string[]): Promise<Map<string, number>> {
  const items = await batchGet<{ pk: string; queued_at: number }>(TABLE(), messageIds.map((id) => ({ pk: keys.message(ns, webhookId, id), sk: keys.replayQueuedSk })), true);
  const byPk = new Map(items.map((i) => [i.pk, i.queued_at]));
  return new Map(messageIds.flatMap((id) => (byPk.has(keys.message(ns, webhookId, id)) ? [[id, byPk.get(keys.message(ns, webhookId, id)) as number]] : [])));
}

/**
 * Message ids of the deliveries that ended in failure at or after `sinceMs`, oldest first, about
 * `max` of them (never splitting one millisecond), and the time to continue from when more are
 * left. Reads each shard of failed attempts from `sinceMs` on, keeping final ones; a shard read
 * only in part sets a horizon past which nothing is taken this time.
 */
export async function failedDeliveriesSince(ns: string, webhookId: string, sinceMs: number, max: number, nowMs = Date.now()): Promise<{ messageIds: string[]; nextSinceMs?: number; unclampedMs?: number }> {
  const from = String(sinceMs).padStart(13, '0');
  const perShard = await Promise.all(
    Array.from({ length: LOG_SHARDS }, async (_, shard) => {
      const got: ListedAttempt[] = [];
      let ExclusiveStartKey: Record<string, unknown> | undefined;
      do {
        const page = await ddb().send(
          new QueryCommand({
            TableName: TABLE(),
            IndexName: INDEX,
            KeyConditionExpression: 'lpk = :p AND #at >= :from',
            FilterExpression: '#final = :true',
            ExpressionAttributeNames: { '#at': 'at', '#final': 'final' },
            ExpressionAttributeValues: { ':p': keys.byTime(ns, webhookId, 'failed', shard), ':from': from, ':true': true },
            ExclusiveStartKey,
          }),
        );
        got.push(...(page.Items ?? []).map(entryOf));
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey && got.length <= max);
      return { got, partial: ExclusiveStartKey !== undefined };
    }),
  );
  // Past the last entry read of a shard read in part, that shard's later entries are unknown.
  const partialEnds = perShard.filter((s) => s.partial && s.got.length).map((s) => timeOfKey(s.got[s.got.length - 1].at));
  const horizon = partialEnds.length ? Math.min(...partialEnds) : Infinity;
  const all = perShard.flatMap((s) => s.got).sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const ids: string[] = [];
  const seen = new Set<string>();
  let i = 0;
  for (; i < all.length; i++) {
    const t = timeOfKey(all[i].at);
    if (t >= horizon) break;
    if (seen.size >= max && t !== timeOfKey(all[i - 1].at)) break;
    if (!seen.has(all[i].message_id)) {
      seen.add(all[i].message_id);
      ids.push(all[i].message_id);
    }
  }
  let nextSinceMs: number | undefined = i < all.length ? timeOfKey(all[i].at) : horizon !== Infinity ? horizon : undefined;
  // An entry is keyed by its attempt's start and written when the attempt ended (up to the 30 s
  // timeout later, plus storage retries), and the index is eventually consistent: a later page
  // starting past now - LATE_ENTRY_MS could miss entries still to come before it. So the next page
  // starts no later than that (it may read entries again: the caller skips messages it queued).
  // `unclampedMs` is where the page really ended: a caller whose page was all repeats moves there.
  const unclampedMs = nextSinceMs;
  if (nextSinceMs !== undefined && nextSinceMs > nowMs - LATE_ENTRY_MS && nowMs - LATE_ENTRY_MS > sinceMs) nextSinceMs = nowMs - LATE_ENTRY_MS;
  return { messageIds: ids, ...(nextSinceMs !== undefined ? { nextSinceMs, unclampedMs } : {}) };
}
