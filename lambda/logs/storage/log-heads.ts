/**
 * The head of an append-only log (a stream or subscription incarnation), in the metadata table
 * under the log's own partition key (keys.ts `logHead`): the position and byte counters that
 * publishes reserve from, the reservation numbers and the watermark of their records
 * (./log-records.ts: the reservations in flight are read from them), the gaps of failed publishes, the oldest
 * retained position and the sweeper's trimming state. `message_count` and the retained bytes are
 * derived from it (lambda/logs/rules/retention.ts), never counted separately, so they cannot drift.
 *
 * The gaps, their pages and the trim that moves past them are in ./log-gaps.ts; member counts in
 * ./log-members.ts.
 *
 * The head has no `kind` attribute: it must not appear in the `resourcesByKind` index, whose
 * partition key every resource of a kind shares (every publish writes the head).
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from '../../core/storage/batch';
import { batchWrite, ddb, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import type { Gap, HeadCounters } from '../rules/retention';
import { deleteMarks, marksOnOwnItem, readMarks } from './partition-marks';
import { inFlightOf } from './log-records';
import type { RecordMarks } from '../rules/log-records';

export type LogKind = 'STREAM' | 'SUBSCRIPTION';

export interface LogHead extends HeadCounters, RecordMarks {
  id: string;
  namespace: string;
  name: string;
  log_kind: LogKind;
  /** 1 for subscriptions. */
  partition_count: number;
  /**
   * The blocks in flight, token → first position (lambda/logs/rules/log-horizon.ts). As `getHead` returns it:
   * the runs of reservations without a record (./log-records.ts), beside the entries stored on the
   * head itself, which only reservations made before 2026-11-29 have.
   */
  pending: Record<string, number>;
  /**
   * Reservations made before 2026-11-29 only: the log's payload bytes before each pending block,
   * by its token's random part (lambda/logs/rules/log-horizon.ts `tokenKey`; whole tokens before 2026-11-27).
   * New heads keep it empty (see ./log-gaps.ts `CLEAR_PATHS`).
   */
  pcum?: Record<string, number>;
  gaps: Record<string, Gap>;
  /**
   * As `getHead` returns it: the gaps of the reservation records read after the head (some perhaps
   * written since the head was read), which readers pass as well (./log-gaps.ts `absentIn`). Not
   * counted: `message_count` is the head's.
   */
  rgaps?: Record<string, Gap>;
  /** Streams: partition → the last offset reserved in it (readers skip partitions with nothing new); absent: any may. */
  lp?: Record<string, number>;
  /** Streams: partition → messages reserved in it so far (the partition lag, lambda/logs/rules/retention.ts). */
  lc?: Record<string, number>;
  /** `lp` and `lc` live on their own item (./partition-marks.ts), which `getHead` reads in. */
  marks?: 'item';
  /** Trimming state (lambda/logs/rules/retention.ts `canSkipTrim`). */
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
    seq: 0,
    w: 0,
    ws: 0,
    wc: 0,
    pending: {},
    pcum: {},
    gaps: {},
    ...(ref.log_kind !== 'STREAM' ? {} : marksOnOwnItem(ref.partition_count) ? { marks: 'item' as const } : { lp: {}, lc: {} }),
  };
  return { ...metaKeys.logHead(ref.namespace, ref.id), ...head };
}

/** The update a delete transaction makes: the log stops taking publishes at once. */
export function markDeletedUpdate(ref: LogRef, now: number) {
  return { Update: { TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), UpdateExpression: 'SET deleted_at = :now', ExpressionAttributeValues: { ':now': now } } };
}

/**
 * The head, strongly consistent, with its stream's marks item and its reservation records read
 * after it (so they hold every block below the head's `next`: both are written before a block's
 * record), its `pending` the blocks still in flight and `rgaps` the gaps of the records read;
 * undefined when gone or deleted. `abortSignal` (a consume's answer deadline) ends its reads, the
 * SDK's retries inside them included, with the SDK's `AbortError`.
 */
export async function getHead(ref: LogRef, abortSignal?: AbortSignal): Promise<LogHead | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), ConsistentRead: true }), { abortSignal });
  const head = out.Item as LogHead | undefined;
  if (!head || head.deleted_at !== undefined) return undefined;
  const [marks, inFlight] = await Promise.all([head.marks === 'item' ? readMarks(ref, abortSignal) : undefined, inFlightOf(ref, head, abortSignal)]);
  return { ...head, ...(marks ?? {}), pending: inFlight.pending, ...(Object.keys(inFlight.gaps).length ? { rgaps: inFlight.gaps } : {}) };
}

/** Eventually consistent head reads for long polls in this container, by log, shared while fresh. */
const polls = new Map<string, { at: number; head: Promise<LogHead | undefined> }>();
/** How long one poll read serves every long poll of the log waiting in this container. */
const POLL_SHARE_MS = 150;

/**
 * The head item as a waiting long poll sees it: eventually consistent (half a read unit, served by
 * any replica; a stale head only shows less: its counters never ahead of the true ones), and one
 * read per log and container every {@link POLL_SHARE_MS} whatever the number of pollers waiting
 * here. Its `pending` holds no blocks in flight but those reserved before 2026-11-29 (they are in
 * ./log-records.ts), so its own horizon means nothing: ./log-waits.ts `waitForNews` compares it
 * with the last strong read. A poller that sees something new reads the head again strongly
 * (`getHead`) before it reads the log.
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
export async function getHeadForPurge(ref: LogRef, abortSignal?: AbortSignal): Promise<LogHead | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), ConsistentRead: true }), { abortSignal });
  return out.Item as LogHead | undefined;
}

/** Heads of several logs of one namespace (lists), by id. */
export async function getHeads(ns: string, ids: string[]): Promise<Map<string, LogHead>> {
  const heads = await batchGet<LogHead>(META(), ids.map((id) => metaKeys.logHead(ns, id)), true);
  return new Map(heads.map((h) => [h.id, h]));
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
      // Strongly consistent: an empty page closes the purge job for good, and an eventually
      // consistent Query may miss records written within the last second (a head, a group).
      ConsistentRead: true,
    }),
  );
  const keys = (out.Items ?? []) as Record<string, unknown>[];
  if (keys.length) await batchWrite(META(), keys.map((Key) => ({ DeleteRequest: { Key } })));
  // Last, a stream's partition marks (their own partition key).
  else await deleteMarks(ref);
  return keys.length;
}
