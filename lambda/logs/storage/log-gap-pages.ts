/**
 * The page items of a log's spilled gaps (./log-gaps.ts `spillGaps`), under the log's partition
 * key beside its groups and cursors, keyed by the highest last position among their gaps
 * (`GAPE#{highest end}#{id}`), so a reader from position p queries only the pages that hold a gap
 * ending at or after p: a key condition, so DynamoDB reads and bills nothing before them (a
 * FilterExpression would still bill what it reads, [Query.FilterExpression](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Query.FilterExpression.html)).
 *
 * A page's gaps are those the head held when it spilled: usually consecutive failed publishes, but
 * a dead block settled late joins whichever head gaps are there, so pages may overlap. The head's
 * `sg_w` bounds every page's width (highest last position less lowest first position), so the
 * pages that can hold a position below q end below q + `sg_w`: the bound of the sweeper's trim.
 *
 * Pages written before 2026-11-29 were keyed by their lowest last position (`GAPS#{lowest end}#{id}`).
 * A head marked `sg_k` has none left: a spill onto a head without spilled gaps marks it, and the
 * sweeper converts an unmarked head's old pages on its visit (`convertOldPages`); until then
 * readers also query the old pages as before.
 */
import { randomBytes } from 'node:crypto';
import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, isTransactionConflict, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import type { LogHead, LogRef } from './log-heads';
import type { Gap } from '../rules/retention';

const META = () => tableName('meta');

/** Sort-key prefix of gap pages keyed by their highest last position. */
const GAP_PAGE_PREFIX = 'GAPE#';
/** Sort-key prefix of gap pages written before 2026-11-29, keyed by their lowest last position. */
const OLD_GAP_PAGE_PREFIX = 'GAPS#';
const pad = (n: number) => String(n).padStart(16, '0');
/** The sort key of a gap page holding `g`: its highest last position, then a random id. */
export const gapPageSk = (g: Record<string, Gap>) => `${GAP_PAGE_PREFIX}${pad(highestEnd(g))}#${randomBytes(6).toString('hex')}`;

/** A page of gaps spilled from a log's head. */
export interface GapPage {
  pk: string;
  sk: string;
  g: Record<string, Gap>;
}

const highestEnd = (g: Record<string, Gap>) => Math.max(...Object.keys(g).map(Number));
/** The first position of a page's gaps (the lowest). */
export const firstPosition = (g: Record<string, Gap>) => Math.min(...Object.values(g).map((x) => x.s));
/** A page's width: its highest last position less its lowest first position (the head's `sg_w` bounds it). */
export const pageWidth = (g: Record<string, Gap>) => highestEnd(g) - firstPosition(g);

/** The pages whose sort key lies in [lo, hi], strongly consistent, paged to the end. */
async function pagesBetween(ref: LogRef, lo: string, hi: string, limit?: number): Promise<GapPage[]> {
  const pages: GapPage[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({
        TableName: META(),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
        ExpressionAttributeValues: { ':pk': metaKeys.logPk(ref.namespace, ref.id), ':lo': lo, ':hi': hi },
        ConsistentRead: true,
        ExclusiveStartKey: start,
        ...(limit ? { Limit: limit } : {}),
      }),
    );
    pages.push(...((out.Items ?? []) as GapPage[]));
    start = limit ? undefined : out.LastEvaluatedKey;
  } while (start);
  return pages;
}

/**
 * The pages that can hold a gap with a position in [from, to): those ending at or after `from`,
 * and below `to` + the head's `sg_w` (no page is wider); and, on a head not yet marked `sg_k`,
 * the old-form pages with a gap ending below `to`, as before.
 */
export async function pagesIn(ref: LogRef, head: Pick<LogHead, 'sg_w' | 'sg_k'>, from: number, to: number): Promise<GapPage[]> {
  // The old form first: a conversion deletes an old page and puts it in the new form at once, so a
  // page the first Query misses because it was converted meanwhile is found by the second, which
  // then has no upper bound (the conversion widened `sg_w` after this head was read).
  const old = head.sg_k === undefined ? await pagesBetween(ref, OLD_GAP_PAGE_PREFIX, `${OLD_GAP_PAGE_PREFIX}${pad(to - 1)}#~`) : [];
  const hi = head.sg_w === undefined || head.sg_k === undefined ? `${GAP_PAGE_PREFIX}~` : `${GAP_PAGE_PREFIX}${pad(to - 1 + head.sg_w)}#~`;
  return [...old, ...(await pagesBetween(ref, `${GAP_PAGE_PREFIX}${pad(from)}#`, hi))];
}

/**
 * The pages holding a gap that starts before `to` (the sweeper is moving `earliest` there), by
 * their first position: those ending below `to` + `sg_w`, read in full (they are the pages the
 * trim drops next, small items).
 */
export async function pagesBelow(ref: LogRef, head: Pick<LogHead, 'sg_w'>, to: number): Promise<GapPage[]> {
  const hi = head.sg_w === undefined ? `${GAP_PAGE_PREFIX}~` : `${GAP_PAGE_PREFIX}${pad(to - 1 + head.sg_w)}#~`;
  const pages = await pagesBetween(ref, GAP_PAGE_PREFIX, hi);
  return pages.filter((p) => firstPosition(p.g) < to).sort((a, b) => firstPosition(a.g) - firstPosition(b.g));
}

/**
 * The lowest first position among the gap pages a trim to `to` leaves: those it puts (`puts`) and
 * those it neither deletes (`deleted`, by sort key) nor puts, read by their last position from
 * `to` on (pages ending before it are all taken), until one ends at or after the lowest first
 * position seen plus `sg_w` (no page is wider, so none after it starts lower). Undefined when
 * none is left. The trim stores it as the head's `sg_s` (its readers' lag subtracts the spilled
 * gaps only when `sg_s` is at or after them, lambda/logs/rules/retention.ts `unreadCount`).
 */
export async function lowestStartLeft(ref: LogRef, head: Pick<LogHead, 'sg_w'>, to: number, deleted: Set<string>, puts: Record<string, Gap>[]): Promise<number | undefined> {
  let low = puts.length ? Math.min(...puts.map(firstPosition)) : Infinity;
  let start: Record<string, unknown> | undefined;
  do {
    if (low <= to) break;
    const out = await ddb().send(
      new QueryCommand({
        TableName: META(),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
        ExpressionAttributeValues: { ':pk': metaKeys.logPk(ref.namespace, ref.id), ':lo': `${GAP_PAGE_PREFIX}${pad(to)}#`, ':hi': `${GAP_PAGE_PREFIX}~` },
        ConsistentRead: true,
        ExclusiveStartKey: start,
        Limit: 8,
      }),
    );
    for (const page of (out.Items ?? []) as GapPage[]) {
      if (head.sg_w !== undefined && highestEnd(page.g) >= low + head.sg_w) return low;
      if (!deleted.has(page.sk)) low = Math.min(low, firstPosition(page.g));
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return Number.isFinite(low) ? low : undefined;
}

/** Every gap page of a log, of both forms (a test's and the simulation's view). */
export async function allGapPages(ref: LogRef): Promise<GapPage[]> {
  return [...(await pagesBetween(ref, OLD_GAP_PAGE_PREFIX, `${OLD_GAP_PAGE_PREFIX}~`)), ...(await pagesBetween(ref, GAP_PAGE_PREFIX, `${GAP_PAGE_PREFIX}~`))];
}

/** Old-form pages one conversion transaction moves (two items each, with the head: under the 100 items of a transaction). */
const CONVERT_PER_TRANSACTION = 8;

/**
 * Rewrites the old-form pages of a head not marked `sg_k` in the new form, some per transaction
 * (each deleted and put again under its highest last position, the head's `sg_w` widened to
 * them), and marks the head once none is left. Conditional on the head as read (`earliest`,
 * `sg_n`, `sg_w`), so a concurrent spill or trim is never undone. Returns false when it lost a race
 * (the next visit goes on); then the trim waits, as it reads the new form only.
 */
export async function convertOldPages(ref: LogRef, head: LogHead): Promise<boolean> {
  let w = head.sg_w;
  for (;;) {
    const old = await pagesBetween(ref, OLD_GAP_PAGE_PREFIX, `${OLD_GAP_PAGE_PREFIX}~`, CONVERT_PER_TRANSACTION);
    const widened = Math.max(w ?? 0, ...old.map((p) => pageWidth(p.g)));
    const done = old.length < CONVERT_PER_TRANSACTION;
    const values: Record<string, unknown> = { ':from': head.earliest, ':w': widened };
    const conditions = ['earliest = :from', 'attribute_not_exists(deleted_at)', head.sg_n === undefined ? 'attribute_not_exists(sg_n)' : 'sg_n = :n'];
    if (head.sg_n !== undefined) values[':n'] = head.sg_n;
    if (w === undefined) conditions.push('attribute_not_exists(sg_w)');
    else {
      conditions.push('sg_w = :readW');
      values[':readW'] = w;
    }
    if (done) values[':one'] = 1;
    try {
      await ddb().send(
        new TransactWriteCommand({
          TransactItems: [
            { Update: { TableName: META(), Key: metaKeys.logHead(ref.namespace, ref.id), UpdateExpression: `SET sg_w = :w${done ? ', sg_k = :one' : ''}`, ConditionExpression: conditions.join(' AND '), ExpressionAttributeValues: values } },
            ...old.map((p) => ({ Delete: { TableName: META(), Key: { pk: p.pk, sk: p.sk }, ConditionExpression: 'attribute_exists(pk)' } })),
            ...old.map((p) => ({ Put: { TableName: META(), Item: { pk: p.pk, sk: gapPageSk(p.g), g: p.g } } })),
          ],
        }),
      );
    } catch (e) {
      if (isConditionFailed(e) || isTransactionConflict(e)) return false;
      throw e;
    }
    if (done) return true;
    w = widened;
  }
}
