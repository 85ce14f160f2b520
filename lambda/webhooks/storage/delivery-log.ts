/**
 * The webhook delivery log table (extension; keys in ./keys.ts `deliveryLogKeys`, table in
 * ./tables.ts `deliveryLog`). Everything expires by TTL after 7 days (lambda/webhooks/rules/delivery-log.ts).
 *
 * Two ways to an attempt (the log may not cost a write unit per delivery):
 *
 * - **by time**: pages (`pk` = one of LOG_SHARDS keys per webhook and outcome, `sk` = `P#` and the
 *   time key of the page's oldest entry). A run collects its attempts ({@link logLater}) and
 *   {@link flushLog} writes them at the end of the batch or Task as pages of up to
 *   PAGE_ENTRIES entries spanning at most PAGE_SPAN_MS (./delivery-log-pages.ts), with BatchWriteItem, on a
 *   shard chosen at random: a batch of ten deliveries of one webhook writes one page of about
 *   1 KB (1 write unit, 0.1 per delivery). The list and bulk replay read pages.
 * - **by message**: the record of a delivery (./webhook-deliveries.ts) carries the entry of the
 *   attempt that ended it; every other attempt (one a retry follows, a replay's, an attempt whose
 *   run lost the record to another run) is an item of its own under the message's key
 *   (sk `A#{time key}`, 1 write unit), beside the retained message of a failed delivery.
 *
 * A delivery that ends in failure also writes its message (1 write unit per KB of message, up to
 * 257 for a 256 KiB payload); a replay that succeeds marks it recovered (1 unit). The index
 * `attemptsByTime` holds only attempt items written before pages (they expire within 7 days).
 */
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { LOG_RETENTION_SECONDS, LOG_SHARDS, timeKey, timeOfKey, type AttemptEntry, type AttemptOutcome, type ListQuery } from '../rules/delivery-log';
import type { PublishedMessage } from '../../core/rules/message';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { putEach } from '../../core/storage/batch';
import { deliveryLogKeys as keys, ttlSeconds } from '../../core/storage/keys';
import { readDelivery } from './webhook-deliveries';
import { buildPages, pageEntries, pageSk, PAGE_SPAN_MS, type ListedAttempt } from './delivery-log-pages';

const TABLE = () => tableName('deliveryLog');

export { buildPages, type ListedAttempt } from './delivery-log-pages';

/** A short unique part of an entry's time key (two entries of one message and attempt differ). */
const entryIdOf = () => randomBytes(6).toString('base64url');

/** The time key of an entry. */
export const entryAt = (e: AttemptEntry, entryId = entryIdOf()) => timeKey(e.attempted_at, e.message_id, e.attempt, entryId);

/** The item of one attempt under its message's key (built apart from sending, for unit tests). */
export function buildAttemptPut(ns: string, webhookId: string, e: AttemptEntry, entryId: string) {
  const at = timeKey(e.attempted_at, e.message_id, e.attempt, entryId);
  return new PutCommand({
    TableName: TABLE(),
    Item: { pk: keys.message(ns, webhookId, e.message_id), sk: keys.attemptSk(at), at, ...e, ttl: ttlSeconds(e.attempted_at) + LOG_RETENTION_SECONDS },
  });
}

/** Writes the item of one attempt under its message's key (not in a page: see {@link logLater}). */
export async function putAttemptItem(ns: string, webhookId: string, e: ListedAttempt): Promise<void> {
  const { at, ...entry } = e;
  await ddb().send(buildAttemptPut(ns, webhookId, entry, at.split('#')[3]));
}

/** One attempt, written at once both ways (tools and tests; deliveries use {@link logLater}). */
export async function putAttempt(ns: string, webhookId: string, e: AttemptEntry, entryId: string): Promise<void> {
  const at = timeKey(e.attempted_at, e.message_id, e.attempt, entryId);
  await ddb().send(buildAttemptPut(ns, webhookId, e, entryId));
  const { failed, error } = await putEach(TABLE(), buildPages(ns, webhookId, [{ ...e, at }]));
  if (failed.length) throw error ?? new Error('delivery log page not written');
}

let pending = new Map<string, { ns: string; webhookId: string; entries: ListedAttempt[] }>();

/** Adds an attempt to this run's pages (written by {@link flushLog}). */
export function logLater(ns: string, webhookId: string, e: ListedAttempt): void {
  const k = `${ns}\u0000${webhookId}`;
  const p = pending.get(k) ?? { ns, webhookId, entries: [] };
  p.entries.push(e);
  pending.set(k, p);
}

/** Rounds of BatchWriteItem for the pages some earlier round did not write (each retries its unprocessed items). */
const FLUSH_ROUNDS = 4;

/** Pages of a run that could not be written, naming the deliveries that ended in failure in them. */
export class LogPagesNotWritten extends Error {
  constructor(
    readonly pages: number,
    /** `{ns, webhookId, messageId}` of each final failed entry in them: bulk replay cannot find those. */
    readonly lostFailures: { ns: string; webhookId: string; messageId: string }[],
    readonly reason: unknown,
  ) {
    super(`${pages} delivery log pages not written: ${(reason as Error)?.message ?? String(reason)}`);
    this.name = 'LogPagesNotWritten';
  }
}

/**
 * Writes this run's pages (BatchWriteItem, 25 a call), trying the pages a round did not write
 * again (a page is a whole item: written again it is the same item); throws
 * {@link LogPagesNotWritten} when some could not be written.
 */
export async function flushLog(): Promise<void> {
  if (!pending.size) return;
  const taken = [...pending.values()];
  pending = new Map();
  let left = taken.flatMap((p) => buildPages(p.ns, p.webhookId, p.entries).map((item) => ({ item, p })));
  let error: unknown;
  for (let round = 0; left.length && round < FLUSH_ROUNDS; round++) {
    if (round > 0) await new Promise((r) => setTimeout(r, 100 * 2 ** round));
    const out = await putEach(TABLE(), left.map((x) => x.item));
    error = out.error;
    left = out.failed.map((i) => left[i]);
  }
  if (!left.length) return;
  const lostFailures = left.flatMap(({ item, p }) =>
    String(item.pk).split('#').at(-2) === 'failed' // keys.byTime: ...#{outcome}#{shard}
      ? pageEntries(item, 'failed').filter((e) => e.final).map((e) => ({ ns: p.ns, webhookId: p.webhookId, messageId: e.message_id }))
      : [],
  );
  throw new LogPagesNotWritten(left.length, lostFailures, error ?? new Error('not written'));
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
export async function putRetained(ns: string, webhookId: string, message: PublishedMessage, failedAt: number, o: { ifOlder?: boolean } = {}): Promise<void> {
  try {
    await ddb().send(
      new PutCommand({
        TableName: TABLE(),
        Item: { pk: keys.message(ns, webhookId, message.message_id), sk: keys.retainedSk, message, failed_at: failedAt, ttl: ttlSeconds(failedAt) + LOG_RETENTION_SECONDS },
        // `ifOlder`: written again for a failure whose write may have been lost; a copy of this
        // failure or a later one (and its `recovered_at`) stays as it is.
        ...(o.ifOlder ? { ConditionExpression: 'attribute_not_exists(pk) OR failed_at < :f', ExpressionAttributeValues: { ':f': failedAt } } : {}),
      }),
    );
  } catch (e) {
    if (!o.ifOlder || !isConditionFailed(e)) throw e;
  }
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
  ...(typeof item.application === 'string' ? { application: item.application } : {}),
  at: String(item.at),
});

const newestFirst = (a: ListedAttempt, b: ListedAttempt) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0);

/**
 * One page of a webhook's attempts, newest first, and the time key to continue after (when there
 * are more). Without `message_id`: the pages of each shard of each listed outcome, newest first,
 * merged (8 or 16 Queries). With `message_id`: that message's items and its delivery record.
 */
export async function listAttempts(ns: string, webhookId: string, q: ListQuery): Promise<{ entries: ListedAttempt[]; next?: string }> {
  const read = q.message_id !== undefined ? await attemptsOfMessage(ns, webhookId, q.message_id, q) : await attemptsByTime(ns, webhookId, q);
  // An entry written again (a run that found a failed delivery's record writes its entry again,
  // lambda/webhooks/delivery-log.ts `keepAgain`) is one attempt: its time key says which.
  const found = [...new Map(read.map((e) => [e.at, e])).values()];
  found.sort(newestFirst);
  const entries = found.slice(0, q.limit);
  return { entries, ...(found.length > q.limit ? { next: entries[entries.length - 1].at } : {}) };
}

/**
 * The newest `want` entries of one shard older than `cursor`. Pages are ordered by their oldest
 * entry, and hold entries at most PAGE_SPAN_MS younger than it: reading stops once the entries in
 * hand are newer than anything a page not yet read can hold.
 */
async function shardNewest(pk: string, outcome: AttemptOutcome, cursor: string | undefined, want: number): Promise<ListedAttempt[]> {
  const got: ListedAttempt[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await ddb().send(
      new QueryCommand({
        TableName: TABLE(),
        KeyConditionExpression: cursor ? 'pk = :p AND sk < :c' : 'pk = :p AND begins_with(sk, :pre)',
        ExpressionAttributeValues: { ':p': pk, ...(cursor ? { ':c': pageSk(cursor) } : { ':pre': 'P#' }) },
        ScanIndexForward: false,
        Limit: 10,
        ExclusiveStartKey,
      }),
    );
    let oldestRead: number | undefined;
    for (const item of page.Items ?? []) {
      oldestRead = timeOfKey(String(item.sk).slice(2));
      got.push(...pageEntries(item, outcome).filter((e) => !cursor || e.at < cursor));
    }
    ExclusiveStartKey = page.LastEvaluatedKey;
    if (got.length >= want && oldestRead !== undefined) {
      got.sort(newestFirst);
      if (got[want - 1].attempted_at >= oldestRead + PAGE_SPAN_MS) break;
    }
  } while (ExclusiveStartKey);
  return got.sort(newestFirst).slice(0, want);
}

async function attemptsByTime(ns: string, webhookId: string, q: ListQuery): Promise<ListedAttempt[]> {
  const outcomes: AttemptOutcome[] = q.status ? [q.status] : ['succeeded', 'failed'];
  const pages = await Promise.all(
    outcomes.flatMap((o) => Array.from({ length: LOG_SHARDS }, (_, shard) => shardNewest(keys.byTime(ns, webhookId, o, shard), o, q.cursor, q.limit + 1))),
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
  // The attempt that ended the delivery is carried by its record (./webhook-deliveries.ts).
  const carried = (await readDelivery({ namespace: ns, webhookId, messageId }))?.log;
  if (carried && (!q.cursor || carried.at < q.cursor) && (!q.status || carried.outcome === q.status)) out.push({ ...entryOf(carried as unknown as Record<string, unknown>) });
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
const LATE_ENTRY_MS = 60_000;

/**
 * Message ids of the deliveries that ended in failure at or after `sinceMs`, oldest first, about
 * `max` of them (never splitting one millisecond), and the time to continue from when more are
 * left. Reads each shard of failed attempts from `sinceMs` on, keeping final ones; a shard read
 * only in part sets a horizon past which nothing is taken this time.
 */
export async function failedDeliveriesSince(ns: string, webhookId: string, sinceMs: number, max: number, nowMs = Date.now()): Promise<{ messageIds: string[]; nextSinceMs?: number; unclampedMs?: number }> {
  // A page starts at most PAGE_SPAN_MS before its entries: read from that far back.
  const from = pageSk(String(Math.max(0, sinceMs - PAGE_SPAN_MS)).padStart(13, '0'));
  const perShard = await Promise.all(
    Array.from({ length: LOG_SHARDS }, async (_, shard) => {
      const got: ListedAttempt[] = [];
      let lastPageStart: number | undefined;
      let ExclusiveStartKey: Record<string, unknown> | undefined;
      do {
        const page = await ddb().send(
          new QueryCommand({
            TableName: TABLE(),
            KeyConditionExpression: 'pk = :p AND sk >= :from',
            ExpressionAttributeValues: { ':p': keys.byTime(ns, webhookId, 'failed', shard), ':from': from },
            Limit: 25,
            // Strongly consistent: a bulk replay asked for right after failures must find them, and
            // an eventually consistent read "might not reflect the results of a recently completed
            // write" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
            // Twice the read units, on bulk replays only.
            ConsistentRead: true,
            ExclusiveStartKey,
          }),
        );
        for (const item of page.Items ?? []) {
          lastPageStart = timeOfKey(String(item.sk).slice(2));
          got.push(...pageEntries(item, 'failed').filter((e) => e.final && e.attempted_at >= sinceMs));
        }
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey && got.length <= max);
      // A shard read in part: pages not read start at or after its last page read.
      // (Never at or before sinceMs, so a page always moves on.)
      return { got, partial: ExclusiveStartKey !== undefined, horizon: lastPageStart === undefined ? undefined : Math.max(lastPageStart, sinceMs + 1) };
    }),
  );
  // Past the last entry read of a shard read in part, that shard's later entries are unknown.
  const partialEnds = perShard.filter((s) => s.partial && s.horizon !== undefined).map((s) => s.horizon as number);
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
  // timeout later, plus storage retries, when its batch's pages are written): a later page
  // starting past now - LATE_ENTRY_MS could miss entries still to come before it. So the next page
  // starts no later than that (it may read entries again: the caller skips messages it queued).
  // `unclampedMs` is where the page really ended: a caller whose page was all repeats moves there.
  const unclampedMs = nextSinceMs;
  if (nextSinceMs !== undefined && nextSinceMs > nowMs - LATE_ENTRY_MS && nowMs - LATE_ENTRY_MS > sinceMs) nextSinceMs = nowMs - LATE_ENTRY_MS;
  return { messageIds: ids, ...(nextSinceMs !== undefined ? { nextSinceMs, unclampedMs } : {}) };
}
