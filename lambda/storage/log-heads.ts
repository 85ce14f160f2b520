/**
 * The head of an append-only log (a stream or subscription incarnation), in the metadata table
 * under the log's own partition key (keys.ts `logHead`): the position and byte counters that
 * publishes reserve from, the reservations in flight, the gaps of failed publishes, the oldest
 * retained position and the sweeper's trimming state. `message_count` and the retained bytes are
 * derived from it (lambda/domain/retention.ts), never counted separately, so they cannot drift.
 *
 * The head has no `kind` attribute: it must not appear in the `resourcesByKind` index, whose
 * partition key every resource of a kind shares (every publish writes the head).
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from './batch';
import { batchWrite, ddb, isConditionFailed, tableName } from './client';
import { metaKeys } from './keys';
import type { Gap, HeadCounters } from '../domain/retention';

export type LogKind = 'STREAM' | 'SUBSCRIPTION';

export interface LogHead extends HeadCounters {
  id: string;
  namespace: string;
  name: string;
  log_kind: LogKind;
  /** 1 for subscriptions. */
  partition_count: number;
  pending: Record<string, number>;
  /** The log's payload bytes before each pending block, by reservation token (the block's `cum`). */
  pcum?: Record<string, number>;
  gaps: Record<string, Gap>;
  /** Streams: partition → the last offset reserved in it (readers skip partitions with nothing new). */
  lp?: Record<string, number>;
  /** Streams: partition → messages reserved in it so far (the partition lag, domain/retention.ts). */
  lc?: Record<string, number>;
  /** Trimming state (lambda/domain/retention.ts `canSkipTrim`). */
  trim_at?: number;
  earliest_bytes?: number;
  idle_next?: number;
  /** Set by the delete transaction: no publish reserves any more, readers see the log gone. */
  deleted_at?: number;
}

/** Identifies a log: its namespace and incarnation id. */
export interface LogRef {
  namespace: string;
  id: string;
}

const META = () => tableName('meta');

/** The head (with its key) that the create transaction writes beside the resource item. */
export function newHead(ref: LogRef & { name: string; log_kind: LogKind; partition_count: number }): Record<string, unknown> {
  const head: LogHead = {
    id: ref.id,
    namespace: ref.namespace,
    name: ref.name,
    log_kind: ref.log_kind,
    partition_count: ref.partition_count,
    next: 0,
    next_bytes: 0,
    earliest: 0,
    pending: {},
    pcum: {},
    gaps: {},
    ...(ref.log_kind === 'STREAM' ? { lp: {}, lc: {} } : {}),
  };
  return { ...metaKeys.logHead(ref.namespace, ref.id), ...head };
}

/** The update a delete transaction makes: the log stops taking publishes at once. */
export function markDeletedUpdate(ref: LogRef, now: number) {
  return { Update: { TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), UpdateExpression: 'SET deleted_at = :now', ExpressionAttributeValues: { ':now': now } } };
}

/** The head, strongly consistent; undefined when it is gone or its log deleted. */
export async function getHead(ref: LogRef): Promise<LogHead | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), ConsistentRead: true }));
  const head = out.Item as LogHead | undefined;
  return head && head.deleted_at === undefined ? head : undefined;
}

/** Eventually consistent head reads for long polls in this container, by log, shared while fresh. */
const polls = new Map<string, { at: number; head: Promise<LogHead | undefined> }>();
/** How long one poll read serves every long poll of the log waiting in this container. */
const POLL_SHARE_MS = 150;

/**
 * The head as a waiting long poll sees it: eventually consistent (half a read unit, served by any
 * replica; a stale head only shows less: its horizon is never past the true one), and one read per
 * log and container every {@link POLL_SHARE_MS} whatever the number of pollers waiting here. A
 * poller that sees something new reads the head again strongly before it reads the log.
 */
export function pollHead(ref: LogRef, now = Date.now()): Promise<LogHead | undefined> {
  const k = `${ref.namespace}#${ref.id}`;
  const cached = polls.get(k);
  if (cached && now - cached.at < POLL_SHARE_MS) return cached.head;
  if (polls.size > 10_000) polls.clear();
  const head = ddb()
    .send(new GetCommand({ TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), ConsistentRead: false }))
    .then((out) => {
      const h = out.Item as LogHead | undefined;
      return h && h.deleted_at === undefined ? h : undefined;
    });
  head.catch(() => polls.delete(k));
  polls.set(k, { at: now, head });
  return head;
}

/** The head even when its log is deleted (the purge reads its partition count). */
export async function getHeadForPurge(ref: LogRef): Promise<LogHead | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), ConsistentRead: true }));
  return out.Item as LogHead | undefined;
}

/** Heads of several logs of one namespace (lists), by id. */
export async function getHeads(ns: string, ids: string[]): Promise<Map<string, LogHead>> {
  const heads = await batchGet<LogHead>(META(), ids.map((id) => metaKeys.logHead(ns, id)), true);
  return new Map(heads.map((h) => [h.id, h]));
}

/**
 * Clears a reservation once its outcome is known, recording what it failed to store as a gap.
 * Conditional on the reservation still being there, so the publish and the sweeper (for a publish
 * that looked dead) never both record one block. Returns false when it was already cleared.
 */
export async function settleBlock(ref: LogRef, token: string, lost?: { end: number; gap: Gap }): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.logHead(ref.namespace, ref.id),
        UpdateExpression: `REMOVE pending.#tok, pcum.#tok${lost ? ' SET gaps.#end = :gap' : ''}`,
        ConditionExpression: 'attribute_exists(pending.#tok)',
        ExpressionAttributeNames: { '#tok': token, ...(lost ? { '#end': String(lost.end) } : {}) },
        ...(lost ? { ExpressionAttributeValues: { ':gap': lost.gap } } : {}),
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

export interface TrimUpdate {
  earliest: number;
  trim_at?: number;
  earliest_bytes?: number;
  idle_next?: number;
}

/**
 * Moves the oldest retained position (readers stop reading below it at once) and stores the
 * trimming state; drops the gaps that end below the new position. Conditional on the position it
 * read, so two sweeps never interleave; returns false when it lost that race. `replacedGaps`
 * (by their last position) replace gaps that span the new position by their part after it.
 */
export async function advanceEarliest(ref: LogRef, from: number, to: TrimUpdate, droppedGaps: string[], replacedGaps: Record<string, Gap> = {}): Promise<boolean> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':from': from, ':to': to.earliest };
  const sets = ['earliest = :to'];
  const removes: string[] = [];
  for (const f of ['trim_at', 'earliest_bytes', 'idle_next'] as const) {
    if (to[f] === undefined) removes.push(f);
    else {
      sets.push(`${f} = :${f}`);
      values[`:${f}`] = to[f];
    }
  }
  droppedGaps.forEach((g, i) => {
    names[`#g${i}`] = g;
    removes.push(`gaps.#g${i}`);
  });
  Object.entries(replacedGaps).forEach(([end, gap], i) => {
    names[`#r${i}`] = end;
    values[`:r${i}`] = gap;
    sets.push(`gaps.#r${i} = :r${i}`);
  });
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.logHead(ref.namespace, ref.id),
        UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: 'earliest = :from AND attribute_not_exists(deleted_at)',
        ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/**
 * Deletes up to `limit` records of a deleted log (head, consumer groups or subscriber cursors);
 * returns how many, 0 when none are left. The purge calls it after deleting the log's chunks, as
 * it reads the partition count from the head.
 */
export async function purgeLogRecords(ref: LogRef, limit: number): Promise<number> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: META(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': metaKeys.logPk(ref.namespace, ref.id) },
      ProjectionExpression: 'pk, sk',
      Limit: limit,
    }),
  );
  const keys = (out.Items ?? []) as Record<string, unknown>[];
  if (keys.length) await batchWrite(META(), keys.map((Key) => ({ DeleteRequest: { Key } })));
  return keys.length;
}

/**
 * Replaces the head's gaps by a compacted set (domain/retention.ts `compactGaps`), if no publish
 * added one since they were read (their number is unchanged); returns whether it did.
 */
export async function replaceGaps(ref: LogRef, gaps: Record<string, Gap>, readCount: number): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.logHead(ref.namespace, ref.id),
        UpdateExpression: 'SET gaps = :g',
        ConditionExpression: 'size(gaps) = :n AND attribute_not_exists(deleted_at)',
        ExpressionAttributeValues: { ':g': gaps, ':n': readCount },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** Member records (groups, subscriber cursors) one count reads at most: one bounded Query. */
export const MAX_COUNTED = 1000;

/**
 * Records of a log with `prefix` whose `seen`/`last_seen` is at or after `since`, among the first
 * {@link MAX_COUNTED} (one Query of at most that many small records, whatever names clients chose):
 * exact up to that number, which then means "at least".
 */
export async function countMembers(ns: string, logId: string, prefix: string, seenAttr: 'seen' | 'last_seen', since: number): Promise<number> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      FilterExpression: '#seen >= :since',
      ExpressionAttributeNames: { '#seen': seenAttr },
      ExpressionAttributeValues: { ':pk': metaKeys.logPk(ns, logId), ':p': prefix, ':since': since },
      Select: 'COUNT',
      Limit: MAX_COUNTED,
    }),
  );
  return out.Count ?? 0;
}
