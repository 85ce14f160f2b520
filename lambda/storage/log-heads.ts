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
import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from './batch';
import { batchWrite, ddb, isConditionFailed, isTransactionConflict, tableName } from './client';
import { metaKeys } from './keys';
import { HEAD_MAX_GAPS, type Gap, type HeadCounters } from '../domain/retention';
import { tokenKey } from '../domain/log-horizon';
import { deleteMarks, marksOnOwnItem, readMarks } from './partition-marks';

/**
 * What clearing reservation `#tok` removes: its pending entry and, made before 2026-11-29, its
 * `pcum` entry, by `#key` (its token's random part) or, before 2026-11-27, by `#tok`. Heads keep
 * an empty `pcum` map, so the paths are valid (removing an absent entry is a no-op).
 */
const CLEAR_PATHS = ['pending.#tok', 'pcum.#key', 'pcum.#tok'];
const clearNames = (token: string) => ({ '#tok': token, '#key': tokenKey(token) });

export type LogKind = 'STREAM' | 'SUBSCRIPTION';

export interface LogHead extends HeadCounters {
  id: string;
  namespace: string;
  name: string;
  log_kind: LogKind;
  /** 1 for subscriptions. */
  partition_count: number;
  pending: Record<string, number>;
  /**
   * Reservations made before 2026-11-29 only: the log's payload bytes before each pending block,
   * by its token's random part (domain/log-horizon.ts `tokenKey`; whole tokens before 2026-11-27).
   * New heads keep it empty (see `CLEAR_PATHS`).
   */
  pcum?: Record<string, number>;
  gaps: Record<string, Gap>;
  /** Streams: partition → the last offset reserved in it (readers skip partitions with nothing new); absent: any may. */
  lp?: Record<string, number>;
  /** Streams: partition → messages reserved in it so far (the partition lag, domain/retention.ts). */
  lc?: Record<string, number>;
  /** `lp` and `lc` live on their own item (./partition-marks.ts), which `getHead` reads in. */
  marks?: 'item';
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
    ...(ref.log_kind !== 'STREAM' ? {} : marksOnOwnItem(ref.partition_count) ? { marks: 'item' as const } : { lp: {}, lc: {} }),
  };
  return { ...metaKeys.logHead(ref.namespace, ref.id), ...head };
}

/** The update a delete transaction makes: the log stops taking publishes at once. */
export function markDeletedUpdate(ref: LogRef, now: number) {
  return { Update: { TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), UpdateExpression: 'SET deleted_at = :now', ExpressionAttributeValues: { ':now': now } } };
}

/** The head, strongly consistent, with its stream's marks item read after it; undefined when gone or deleted. */
export async function getHead(ref: LogRef): Promise<LogHead | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), ConsistentRead: true }));
  const head = out.Item as LogHead | undefined;
  if (!head || head.deleted_at !== undefined) return undefined;
  return head.marks === 'item' ? { ...head, ...(await readMarks(ref)) } : head;
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
 *
 * A gap goes into the head only while it holds fewer than domain/retention.ts `HEAD_MAX_GAPS`;
 * the one that would pass it spills them all, with itself, to a page item (`spillGaps`), so the
 * head's size stays bounded however many publishes fail.
 */
export async function settleBlock(ref: LogRef, token: string, lost?: { end: number; gap: Gap }): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: META(),
        Key: metaKeys.logHead(ref.namespace, ref.id),
        UpdateExpression: `REMOVE ${CLEAR_PATHS.join(', ')}${lost ? ' SET gaps.#end = :gap' : ''}`,
        ConditionExpression: `attribute_exists(pending.#tok)${lost ? ' AND size(gaps) < :max' : ''}`,
        ExpressionAttributeNames: { ...clearNames(token), ...(lost ? { '#end': String(lost.end) } : {}) },
        ...(lost ? { ExpressionAttributeValues: { ':gap': lost.gap, ':max': HEAD_MAX_GAPS } } : {}),
      }),
    );
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
  if (!lost) return false;
  // The reservation is gone (cleared already) or the head's gaps are full: spill them. A spill
  // lost to a concurrent one (or to the sweeper) is tried again on the head as it is then.
  for (let attempt = 0; attempt < 5; attempt++) {
    const head = await getHeadForPurge(ref);
    if (!head || head.pending?.[token] === undefined) return false;
    // A deleted log keeps no counts: its reservation is only cleared.
    if (head.deleted_at !== undefined) return settleBlock(ref, token);
    if (Object.keys(head.gaps ?? {}).length < HEAD_MAX_GAPS) return settleBlock(ref, token, lost);
    if (await spillGaps(ref, head, { token, ...lost })) return true;
  }
  throw new Error(`could not record the gap of reservation ${token} of log ${ref.id}; the sweeper settles it after the settle time`);
}

/** Sort-key prefix of gap pages, under the log's partition key beside groups and cursors. */
const GAP_PAGE_PREFIX = 'GAPS#';
/** Gap page sort key: ordered by the lowest last position of its gaps (the first `earliest` passes). */
const gapPageSk = (lowestEnd: number, id: string) => `${GAP_PAGE_PREFIX}${String(lowestEnd).padStart(16, '0')}#${id}`;

/** A page of gaps spilled from a log's head (see `spillGaps`). */
export interface GapPage {
  pk: string;
  sk: string;
  g: Record<string, Gap>;
}

/**
 * Moves every gap of the head (and, from a settle, the reservation's own new gap, clearing the
 * reservation) to one new page item, adding their counts to the head's `sg_*` totals: one
 * transaction of two items, conditional on each moved gap still being in the head and `earliest`
 * unchanged, so a gap is never in two places nor moved twice. Returns false when it lost a race.
 * Rare: once per domain/retention.ts `HEAD_MAX_GAPS` failed publishes.
 */
export async function spillGaps(ref: LogRef, head: LogHead, settling?: { token: string; end: number; gap: Gap }): Promise<boolean> {
  const moved: Record<string, Gap> = { ...(head.gaps ?? {}), ...(settling ? { [String(settling.end)]: settling.gap } : {}) };
  const entries = Object.entries(moved);
  if (!entries.length) return true;
  const total = entries.reduce((t, [end, g]) => ({ n: t.n + g.n, b: t.b + g.b, s: Math.min(t.s, g.s), e: Math.max(t.e, Number(end)) }), { n: 0, b: 0, s: Infinity, e: -Infinity });
  const fresh = !head.sg_n;
  const names: Record<string, string> = {};
  const removes: string[] = [];
  const conditions = ['earliest = :earliest', 'attribute_not_exists(deleted_at)'];
  Object.keys(head.gaps ?? {}).forEach((end, i) => {
    names[`#g${i}`] = end;
    removes.push(`gaps.#g${i}`);
    conditions.push(`attribute_exists(gaps.#g${i})`);
  });
  if (settling) {
    Object.assign(names, clearNames(settling.token));
    removes.push(...CLEAR_PATHS);
    conditions.push('attribute_exists(pending.#tok)');
  }
  const lowest = Math.min(...entries.map(([end]) => Number(end)));
  try {
    await ddb().send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: META(), Item: { pk: metaKeys.logPk(ref.namespace, ref.id), sk: gapPageSk(lowest, randomId()), g: moved }, ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Update: {
              TableName: META(),
              Key: metaKeys.logHead(ref.namespace, ref.id),
              UpdateExpression: `SET sg_n = if_not_exists(sg_n, :zero) + :n, sg_b = if_not_exists(sg_b, :zero) + :b, sg_s = :s, sg_e = :e REMOVE ${removes.join(', ')}`,
              ConditionExpression: conditions.join(' AND '),
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: {
                ':earliest': head.earliest,
                ':zero': 0,
                ':n': total.n,
                ':b': total.b,
                ':s': fresh ? total.s : Math.min(total.s, head.sg_s ?? total.s),
                ':e': fresh ? total.e : Math.max(total.e, head.sg_e ?? total.e),
              },
            },
          },
        ],
      }),
    );
    return true;
  } catch (e) {
    if (lostRace(e)) return false;
    throw e;
  }
}

const randomId = () => randomBytes(6).toString('hex');

/** A transaction cancelled by a failed condition or a concurrent transaction on its items. */
function lostRace(e: unknown): boolean {
  return isConditionFailed(e) || isTransactionConflict(e);
}

/**
 * The gap pages holding a gap that ends before `to` (the sweeper is moving `earliest` there), by
 * their lowest last position, at most `limit`: one Query of small items.
 */
export async function gapPagesBelow(ref: LogRef, to: number, limit: number): Promise<GapPage[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: META(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
      ExpressionAttributeValues: { ':pk': metaKeys.logPk(ref.namespace, ref.id), ':lo': GAP_PAGE_PREFIX, ':hi': `${gapPageSk(to - 1, '')}~` },
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return (out.Items ?? []) as GapPage[];
}

/** The lowest last position among a page's gaps (its sort key's). */
export const pageLowestEnd = (page: GapPage) => Number(page.sk.slice(GAP_PAGE_PREFIX.length).split('#')[0]);

/** What a trim does to gap pages: pages replaced (their gaps before `earliest` dropped), and the change of the head's spilled totals. */
export interface PageChanges {
  deletes: GapPage[];
  puts: Record<string, Gap>[];
  n: number;
  b: number;
}

export interface TrimUpdate {
  earliest: number;
  trim_at?: number;
  earliest_bytes?: number;
  idle_next?: number;
}

/**
 * Moves the oldest retained position (readers stop reading below it at once) and stores the
 * trimming state; drops the gaps that end below the new position. `replacedGaps` (by their last
 * position) replace gaps that span the new position by their part after it. Conditional on the
 * head as `read`: its position (two sweeps never interleave), its spilled total, and each gap it
 * drops or replaces still on the head. A publish that spilled the head's gaps to a page since the
 * read would otherwise have them counted twice: dropped from the head here but counted on the page,
 * or a replaced gap back on the head beside its page copy. Returns false when it lost a race.
 */
export async function advanceEarliest(ref: LogRef, read: Pick<LogHead, 'earliest' | 'sg_n'>, to: TrimUpdate, droppedGaps: string[], replacedGaps: Record<string, Gap> = {}, pages?: PageChanges): Promise<boolean> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':from': read.earliest, ':to': to.earliest };
  const conditions = ['earliest = :from', 'attribute_not_exists(deleted_at)'];
  if (read.sg_n === undefined) conditions.push('attribute_not_exists(sg_n)');
  else {
    conditions.push('sg_n = :readSgn');
    values[':readSgn'] = read.sg_n;
  }
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
    conditions.push(`attribute_exists(gaps.#g${i})`);
  });
  Object.entries(replacedGaps).forEach(([end, gap], i) => {
    names[`#r${i}`] = end;
    values[`:r${i}`] = gap;
    sets.push(`gaps.#r${i} = :r${i}`);
    conditions.push(`attribute_exists(gaps.#r${i})`);
  });
  if (pages) {
    sets.push('sg_n = sg_n - :pn', 'sg_b = sg_b - :pb');
    values[':pn'] = pages.n;
    values[':pb'] = pages.b;
  }
  const update = {
    TableName: META(),
    Key: metaKeys.logHead(ref.namespace, ref.id),
    UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ConditionExpression: conditions.join(' AND '),
    ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ExpressionAttributeValues: values,
  };
  try {
    if (!pages) await ddb().send(new UpdateCommand(update));
    else {
      // One transaction: the head's totals and its pages never disagree (message_count stays exact).
      const pk = metaKeys.logPk(ref.namespace, ref.id);
      await ddb().send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: update },
            ...pages.deletes.map((p) => ({ Delete: { TableName: META(), Key: { pk: p.pk, sk: p.sk }, ConditionExpression: 'attribute_exists(pk)' } })),
            ...pages.puts.map((g) => ({ Put: { TableName: META(), Item: { pk, sk: gapPageSk(Math.min(...Object.keys(g).map(Number)), randomId()), g } } })),
          ],
        }),
      );
    }
    return true;
  } catch (e) {
    if (lostRace(e)) return false;
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
  // Last, a stream's partition marks (their own partition key).
  else await deleteMarks(ref);
  return keys.length;
}

/** Member records (groups, subscriber cursors) one count reads at most. */
export const MAX_COUNTED = 1000;

/** A member count: exact, or (`atLeast`) a lower bound when the log has more records than one count reads. */
export interface MemberCount {
  count: number;
  atLeast: boolean;
}

/**
 * Records of a log with `prefix` whose `seen`/`last_seen` is at or after `since`, among the first
 * {@link MAX_COUNTED} (whatever names clients chose, a count stays a few small Queries). A Query
 * stops at 1 MB of items read before it reaches its `Limit` (a group of a 64-partition stream that
 * commits per partition is ~1.5 KB, so ~650 per page), so the count goes on from the page's
 * `LastEvaluatedKey` until the records are all read or {@link MAX_COUNTED} were:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.Pagination.html
 * Records left unread make it a lower bound (`atLeast`), which the API answer says.
 */
export async function countMembers(ns: string, logId: string, prefix: string, seenAttr: 'seen' | 'last_seen', since: number): Promise<MemberCount> {
  let count = 0;
  let read = 0;
  let from: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({
        TableName: tableName('meta'),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        FilterExpression: '#seen >= :since',
        ExpressionAttributeNames: { '#seen': seenAttr },
        ExpressionAttributeValues: { ':pk': metaKeys.logPk(ns, logId), ':p': prefix, ':since': since },
        Select: 'COUNT',
        Limit: MAX_COUNTED - read,
        ...(from ? { ExclusiveStartKey: from } : {}),
      }),
    );
    count += out.Count ?? 0;
    read += out.ScannedCount ?? 0;
    from = out.LastEvaluatedKey;
  } while (from && read < MAX_COUNTED);
  return { count, atLeast: from !== undefined };
}
