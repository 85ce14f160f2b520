/**
 * The gaps of a log (the positions of failed publishes, which hold no message): recorded on the
 * head when a reservation settles (`settleBlock`), spilled to page items under the log's partition
 * key when the head holds lambda/logs/rules/retention.ts `HEAD_MAX_GAPS` (`spillGaps`), and dropped by the
 * sweeper's trim as `earliest` moves past them (`advanceEarliest`). The head's `sg_*` totals count
 * the spilled gaps, so `message_count` stays exact without reading the pages.
 */
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CONFLICT_TRIES, conflictBackoffMs, ddb, isConditionFailed, isTransactionConflict, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { getHeadForPurge, type LogHead, type LogRef } from './log-heads';
import { HEAD_MAX_GAPS, type Gap } from '../rules/retention';
import { tokenKey } from '../rules/log-horizon';
import { absentPositions, type Absent } from '../rules/log-gaps';
import { gapPageSk, pageWidth, pagesIn, type GapPage } from './log-gap-pages';

/**
 * What clearing reservation `#tok` removes: its pending entry and, made before 2026-11-29, its
 * `pcum` entry, by `#key` (its token's random part) or, before 2026-11-27, by `#tok`. Heads keep
 * an empty `pcum` map, so the paths are valid (removing an absent entry is a no-op).
 */
const CLEAR_PATHS = ['pending.#tok', 'pcum.#key', 'pcum.#tok'];
const clearNames = (token: string) => ({ '#tok': token, '#key': tokenKey(token) });

const META = () => tableName('meta');

/**
 * Clears a reservation of the head's own `pending` map (one made before 2026-11-29; since, a
 * reservation ends with its record, ./log-records.ts) once its outcome is known, recording what it
 * failed to store as a gap. Conditional on the reservation still being there, so the publish and
 * the sweeper (for a publish that looked dead) never both record one block. Returns false when it
 * was already cleared.
 *
 * A gap goes into the head only while it holds fewer than lambda/logs/rules/retention.ts `HEAD_MAX_GAPS`;
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
  // lost to a concurrent one (or to the sweeper), or cancelled by the publishes' writes of the
  // head while it was in flight, is tried again on the head as it is then, after a random wait.
  for (let attempt = 1; attempt <= CONFLICT_TRIES; attempt++) {
    const head = await getHeadForPurge(ref);
    if (!head || head.pending?.[token] === undefined) return false;
    // A deleted log keeps no counts: its reservation is only cleared.
    if (head.deleted_at !== undefined) return settleBlock(ref, token);
    if (Object.keys(head.gaps ?? {}).length < HEAD_MAX_GAPS) return settleBlock(ref, token, lost);
    if (await spillGaps(ref, head, { token, ...lost })) return true;
    await new Promise((r) => setTimeout(r, conflictBackoffMs(attempt)));
  }
  throw new Error(`could not record the gap of reservation ${token} of log ${ref.id}; the sweeper settles it after the settle time`);
}

/**
 * Moves every gap of the head (and, from a settle, the reservation's own new gap, clearing the
 * reservation) to one new page item, adding their counts to the head's `sg_*` totals: one
 * transaction of two items, conditional on each moved gap still being in the head and `earliest`
 * unchanged, so a gap is never in two places nor moved twice. The page is keyed by its highest
 * last position and widens the head's `sg_w` (./log-gap-pages.ts); a spill onto a head without
 * spilled gaps marks it `sg_k` (it has no page of the form before 2026-11-29). Returns false when it lost a race.
 * Rare: once per lambda/logs/rules/retention.ts `HEAD_MAX_GAPS` failed publishes.
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
  const w = fresh ? pageWidth(moved) : Math.max(head.sg_w ?? 0, pageWidth(moved));
  // The head's `sg_w` as read: a concurrent conversion of old pages (the sweeper) widens it too.
  conditions.push(head.sg_w === undefined ? 'attribute_not_exists(sg_w)' : 'sg_w = :readW');
  if (fresh) conditions.push('(attribute_not_exists(sg_n) OR sg_n = :zero)');
  try {
    await ddb().send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: META(), Item: { pk: metaKeys.logPk(ref.namespace, ref.id), sk: gapPageSk(moved), g: moved }, ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Update: {
              TableName: META(),
              Key: metaKeys.logHead(ref.namespace, ref.id),
              UpdateExpression: `SET sg_n = if_not_exists(sg_n, :zero) + :n, sg_b = if_not_exists(sg_b, :zero) + :b, sg_s = :s, sg_e = :e, sg_w = :w${fresh ? ', sg_k = :one' : ''} REMOVE ${removes.join(', ')}`,
              ConditionExpression: conditions.join(' AND '),
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: {
                ':earliest': head.earliest,
                ':zero': 0,
                ':n': total.n,
                ':b': total.b,
                ':s': fresh ? total.s : Math.min(total.s, head.sg_s ?? total.s),
                ':e': fresh ? total.e : Math.max(total.e, head.sg_e ?? total.e),
                ':w': w,
                ...(head.sg_w === undefined ? {} : { ':readW': head.sg_w }),
                ...(fresh ? { ':one': 1 } : {}),
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

/** A transaction cancelled by a failed condition or a concurrent transaction on its items. */
function lostRace(e: unknown): boolean {
  return isConditionFailed(e) || isTransactionConflict(e);
}

/**
 * The test of absent positions (lambda/logs/rules/log-gaps.ts) for a reader of [from, to): the whole gaps on
 * the head and those of the records read after it (`rgaps`), both already read; and only when the
 * read crosses the span of spilled gaps (`sg_s`..`sg_e`), those of the gap pages that can hold
 * one in [from, to) (./log-gap-pages.ts `pagesIn`: pages ending before `from` are not read): a
 * strongly consistent Query of small items (about 1.3 KB a page of lambda/logs/rules/retention.ts
 * `HEAD_MAX_GAPS` failed publishes). Rare: a page exists only after that many failed publishes
 * within retention.
 */
export async function absentIn(ref: LogRef, head: LogHead, from: number, to: number): Promise<Absent> {
  const maps = [head.gaps, head.rgaps];
  if (head.sg_n && head.sg_s !== undefined && head.sg_e !== undefined && head.sg_s < to && head.sg_e >= from) {
    maps.push(...(await pagesIn(ref, head, from, to)).map((p) => p.g));
  }
  return absentPositions(maps);
}

/**
 * What a trim does to gap pages: pages replaced (their gaps before `earliest` dropped), the change
 * of the head's spilled totals, and the lowest first position of the pages left (`s`, the new `sg_s`).
 */
export interface PageChanges {
  deletes: GapPage[];
  puts: Record<string, Gap>[];
  n: number;
  b: number;
  s?: number;
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
    // The span starts at the pages left, not at those dropped: else no reader after the dropped
    // ones would ever have the spilled gaps subtracted from its lag (lambda/logs/rules/retention.ts `unreadCount`).
    if (pages.s !== undefined) {
      sets.push('sg_s = :ps');
      values[':ps'] = pages.s;
    }
    // No spilled gap left: no page either, so the bound of their widths starts again at the next spill.
    if (!pages.puts.length && pages.n === read.sg_n) removes.push('sg_w');
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
            ...pages.puts.map((g) => ({ Put: { TableName: META(), Item: { pk, sk: gapPageSk(g), g } } })),
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
