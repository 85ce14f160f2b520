/**
 * Upkeep of append-only logs (streams and subscriptions), one bounded visit at a time (the
 * framework in ../sweeper/tasks.ts decides which log and when):
 *
 * - **settle** reservations whose publish died (older than lambda/logs/rules/log-horizon.ts
 *   `PENDING_SETTLE_MS`): record the whole block as a gap, which readers pass whatever its chunks
 *   hold (lambda/logs/rules/log-gaps.ts), so the derived counters stay exact (lambda/logs/rules/retention.ts); and spill a head's gaps to a page item
 *   if a publish left it full (lambda/logs/rules/retention.ts `HEAD_MAX_GAPS`);
 * - **trim**: walk the oldest messages in position order and move `earliest` over those past
 *   retention or over the size limit by the log's true size. Nothing is deleted: DynamoDB TTL
 *   removes chunks once past retention, for free, and readers never read below `earliest` nor
 *   return a message past retention. A visit walks at most {@link TRIM_WALK_LIMIT} messages,
 *   holding one page of chunks per log key; the next visit goes on from the new `earliest`. When
 *   nothing can be due (lambda/logs/rules/retention.ts `canSkipTrim`) a visit reads only the head;
 * - **purge** a deleted log: its chunks, log key by log key, then its head and member records,
 *   a bounded number per visit, with the progress in the purge job.
 */
import type { PurgeJob, ResourceItem } from '../core/storage/resources';
import { savePurgeProgress } from '../core/storage/sweep-sources';
import { absentIn, advanceEarliest, spillGaps, type PageChanges, type TrimUpdate } from './storage/log-gaps';
import { convertOldPages, firstPosition, lowestStartLeft, pagesBelow } from './storage/log-gap-pages';
import { getHead, getHeadForPurge, purgeLogRecords, type LogHead, type LogRef } from './storage/log-heads';
import { purgeChunks, readMerged, skipGone, storedIn, type LogTable } from './storage/log-chunks';
import type { ResourceKind } from '../core/storage/keys';
import { lowestPending, PENDING_SETTLE_MS, staleTokens } from './rules/log-horizon';
import { settleDead } from './storage/log-reservations';
import { advanceWatermark } from './storage/log-records';
import { canSkipTrim, gapsAt, goneTests, HEAD_MAX_GAPS, isTrimmed, unreadCount, type Gap, type RetentionLimits } from './rules/retention';
import type { LogMessage } from './rules/log-chunks';
import { absentPositions, isWholeGap } from './rules/log-gaps';
import type { SweepContext, SweepStats } from '../core/sweep-task';

/** Messages one visit walks at most (then the next visit goes on). */
const TRIM_WALK_LIMIT = 5000;
/** Chunks read per Query page and log key while walking: bounds the memory of a visit. */
const WALK_PAGE_CHUNKS = 10;
/** Reservations of dead publishes one visit settles at most (each costs a write or two). */
const SETTLE_PER_VISIT = 100;
/** Gap pages (lambda/logs/rules/retention.ts `HEAD_MAX_GAPS` gaps each) one trim takes at most: one transaction. */
const PAGES_PER_VISIT = 8;
/**
 * Positions whose spilled gaps the walk reads at once (one Query of the gap pages that can hold
 * them, lambda/logs/storage/log-gap-pages.ts `pagesIn`), and such reads a visit makes at most: past them the
 * walk stops before the message it could not judge, and the next visit goes on from there.
 */
const PAGE_WINDOW = 1000;
const PAGE_READS_PER_VISIT = 8;
/** Chunks one purge visit deletes at most. */
const PURGE_PER_VISIT = 2000;

/** What differs between stream and subscription logs. */
export interface LogSpec<T extends ResourceItem> {
  kind: ResourceKind;
  table: LogTable;
  /** The log keys of partition `p` (subscriptions have only 0). */
  logKey(id: string, partition: number): string;
  /** Partitions that may hold positions at or after `from`. */
  partitionsFrom(head: LogHead, from: number): number[];
  retentionMs(resource: T): number;
  maxBytes(resource: T): number;
}

/** One visit of a live log: settle dead reservations, then trim (see the module comment). */
export async function visitLog<T extends ResourceItem>(resource: T, spec: LogSpec<T>, ctx: Pick<SweepContext, 'now'>, walkLimit = TRIM_WALK_LIMIT): Promise<SweepStats> {
  const ref: LogRef = { namespace: resource.namespace, id: resource.id };
  let head = await getHead(ref);
  if (!head) return {};
  const stats: SweepStats = {};
  // Bounded per visit: after an outage many publishes may have died; the next visits settle the rest.
  const stale = staleTokens(head.pending, ctx.now).slice(0, SETTLE_PER_VISIT);
  for (const token of stale) await settleDead(ref, head, token);
  if (stale.length) {
    stats.settled = stale.length;
    head = await getHead(ref);
    if (!head) return stats;
  }
  // Publishes move the watermark of reservation records every few calls; a log that stopped
  // publishing (or whose dead runs were just settled) has it moved here, so readers read few records.
  if (head.w !== undefined && (head.seq ?? 0) > head.w) await advanceWatermark(ref, head, (head.seq ?? 0) - 1);
  // Publishes spill a full head's gaps themselves; a head left full (a spill lost to a race) is spilled here.
  const gapCount = Object.keys(head.gaps ?? {}).length;
  if (gapCount >= HEAD_MAX_GAPS && (await spillGaps(ref, head))) {
    stats.gaps_spilled = gapCount;
    head = await getHead(ref);
    if (!head) return stats;
  }
  // Gap pages written before 2026-11-29 are keyed by their lowest last position: rewritten in the
  // new form first (lambda/logs/storage/log-gap-pages.ts), as the trim reads only that; a lost race waits a visit.
  if (head.sg_n && head.sg_k === undefined) {
    if (!(await convertOldPages(ref, head))) return stats;
    head = await getHead(ref);
    if (!head) return stats;
  }
  const limits: RetentionLimits = { cutoff: ctx.now - spec.retentionMs(resource), maxBytes: spec.maxBytes(resource) };
  if (canSkipTrim(head, ctx.now, limits.maxBytes)) return stats;

  const to = lowestPending(head.pending, head.next);
  const logs = spec.partitionsFrom(head, head.earliest).map((p) => spec.logKey(ref.id, p));
  // First by position: a binary search over the chunks finds where the messages the monotone test
  // trims end (lambda/logs/storage/log-chunks.ts `skipGone`), whatever their number; then the exact test walks
  // on from there (the few within lambda/logs/rules/retention.ts `SKIP_AGE_MARGIN_MS`), at most `walkLimit`.
  const skipTo = head.earliest < to ? await skipGone(spec.table, logs, { from: head.earliest, to }, goneTests(head, limits).skip) : head.earliest;
  let lastRemoved: number | undefined = skipTo > head.earliest ? skipTo - 1 : undefined;
  let kept: LogMessage | undefined;
  let walked = 0;
  let stopped = false;
  // A message inside a whole gap is absent (a chunk that landed after its block was settled): it
  // neither stops the walk nor is trimmed. The head's gaps are known; those spilled to pages are
  // read a window at a time as the walk meets a message within the spilled span (`sg_s`..`sg_e`).
  let absent = absentPositions([head.gaps]);
  let pagesKnownTo = -Infinity;
  let pageReads = 0;
  for await (const m of readMerged(spec.table, logs, { from: skipTo, to, want: 1, maxPageChunks: WALK_PAGE_CHUNKS, consistent: true })) {
    if (m.position >= pagesKnownTo && inSpilledSpan(head, m.position)) {
      if (pageReads++ >= PAGE_READS_PER_VISIT) {
        stopped = true;
        break;
      }
      absent = await absentIn(ref, head, m.position, m.position + PAGE_WINDOW);
      pagesKnownTo = m.position + PAGE_WINDOW;
    }
    if (absent(m.position)) {
      if (++walked >= walkLimit) break;
      continue;
    }
    if (!isTrimmed(m, head, limits)) {
      kept = m;
      break;
    }
    lastRemoved = m.position;
    if (++walked >= walkLimit) break;
  }
  let update: TrimUpdate = kept
    ? // The oldest retained message: nothing is due before it leaves retention, unless the log outgrows its cap.
      { earliest: kept.position, trim_at: kept.published_at + spec.retentionMs(resource), earliest_bytes: kept.cum }
    : { earliest: lastRemoved !== undefined ? lastRemoved + 1 : head.earliest, ...(!stopped && walked < walkLimit && to === head.next ? { idle_next: head.next } : {}) };
  const sameState = update.earliest === head.earliest && update.trim_at === head.trim_at && update.earliest_bytes === head.earliest_bytes && update.idle_next === head.idle_next;
  if (sameState) return stats;
  let pages: PageChanges | undefined;
  if (head.sg_n && update.earliest > head.earliest) {
    // Every page holding a gap that starts before the new earliest, by first position.
    const found = await pagesBelow(ref, head, update.earliest);
    // More pages than a visit takes: stop at the first position of the first page it leaves, so no
    // gap it leaves spans the new earliest (its lost messages before it would stay counted); every
    // page after it starts later.
    if (found.length > PAGES_PER_VISIT) update = { earliest: Math.min(update.earliest, firstPosition(found[PAGES_PER_VISIT].g)) };
    const to = update.earliest;
    const taken = found.slice(0, PAGES_PER_VISIT).filter((page) => firstPosition(page.g) < to);
    if (taken.length) {
      pages = { deletes: taken, puts: [], n: 0, b: 0 };
      for (const page of taken) {
        const { dropped: gone, spanning, kept: rest } = gapsAt(page.g, to);
        const split = await splitStraddling(ref, head, spanning, to, spec);
        for (const g of gone) {
          pages.n += g.n;
          pages.b += g.b;
        }
        // A gap spanning `earliest` keeps its bytes (errs low on what is retained) and loses the messages before it.
        for (const [end, g] of Object.entries(spanning)) pages.n += g.n - split[end].n;
        // A spanning gap that lost nothing from `earliest` on is dropped with its bytes (none of them are after it).
        const left: Record<string, Gap> = { ...rest };
        for (const [end, g] of Object.entries(split)) {
          if (g.n > 0) left[end] = g;
          else pages.b += g.b;
        }
        if (Object.keys(left).length) pages.puts.push(left);
      }
      pages.s = await lowestStartLeft(ref, head, to, new Set(taken.map((p) => p.sk)), pages.puts);
    }
  }
  const dropped = Object.keys(head.gaps ?? {}).filter((end) => Number(end) < update.earliest);
  const split = await splitStraddling(ref, head, head.gaps ?? {}, update.earliest, spec);
  const trimmed = unreadCount({ ...head, sg_n: 0 }, head.earliest, update.earliest) - (pages?.n ?? 0);
  if ((await advanceEarliest(ref, head, update, dropped, split, pages)) && trimmed > 0) stats.trimmed = trimmed;
  return stats;
}

/** Whether `position` lies within the span of the head's spilled gaps. */
const inSpilledSpan = (head: LogHead, position: number) => Boolean(head.sg_n) && head.sg_s !== undefined && head.sg_e !== undefined && head.sg_s <= position && position <= head.sg_e;

/**
 * A gap may span the new `earliest`: counting all its lost messages as at or after `earliest`
 * would make `message_count` low. Such a gap is replaced by a gap of its part from `earliest` on
 * (its bytes kept, which errs low on the bytes retained: the safe side for the size cap). A whole
 * gap's part is whole (every position of it absent, lambda/logs/rules/log-gaps.ts); a gap written before
 * 2026-11-29 may be partial, and is recounted: the messages stored in its part are read. Gaps are
 * never merged, so this reads at most one publish call's block per spanning partial gap.
 */
async function splitStraddling<T extends ResourceItem>(ref: LogRef, head: LogHead, gaps: Record<string, Gap>, earliest: number, spec: LogSpec<T>): Promise<Record<string, Gap>> {
  const out: Record<string, Gap> = {};
  for (const [end, g] of Object.entries(gaps)) {
    const e = Number(end);
    if (!(g.s < earliest && earliest <= e)) continue;
    if (isWholeGap(e, g)) {
      out[end] = { s: earliest, n: e - earliest + 1, b: g.b };
      continue;
    }
    let stored = 0;
    for (const p of spec.partitionsFrom(head, earliest)) stored += (await storedIn(spec.table, spec.logKey(ref.id, p), earliest, e)).n;
    out[end] = { s: earliest, n: Math.max(0, Math.min(g.n, e - earliest + 1 - stored)), b: g.b };
  }
  return out;
}

/** One visit of a deleted log's purge job; `done` when nothing of the log is left. */
export async function purgeLog<T extends ResourceItem>(job: PurgeJob, spec: LogSpec<T>, ctx: SweepContext): Promise<{ done: boolean; stats: SweepStats }> {
  // Publishes that reserved just before the delete may still be writing chunks.
  if (ctx.now - job.deleted_at < PENDING_SETTLE_MS) return { done: false, stats: {} };
  const ref: LogRef = { namespace: job.namespace, id: job.id };
  const partitions = (job.partitions as number | undefined) ?? (await getHeadForPurge(ref))?.partition_count ?? 1;
  let partition = (job.purge_partition as number | undefined) ?? 0;
  let deleted = 0;
  while (partition < partitions && deleted < PURGE_PER_VISIT && Date.now() < ctx.deadline) {
    const n = await purgeChunks(spec.table, spec.logKey(job.id, partition), 100);
    deleted += n;
    if (n === 0) partition++;
  }
  const stats = { purged: deleted };
  if (partition < partitions) {
    await savePurgeProgress(spec.kind, job.id, { purge_partition: partition, partitions });
    return { done: false, stats };
  }
  if (job.purge_partition !== partitions) await savePurgeProgress(spec.kind, job.id, { purge_partition: partition, partitions });
  let n: number;
  do {
    n = await purgeLogRecords(ref, 100);
    deleted += n;
  } while (n > 0 && deleted < PURGE_PER_VISIT && Date.now() < ctx.deadline);
  return { done: n === 0, stats: { purged: deleted } };
}
