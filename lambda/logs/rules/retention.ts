/**
 * Retention of an append-only log (stream `retention_days` and `max_size_gb`, subscription
 * `message_ttl_seconds` and `max_size_mb`) and its counters, derived from the log's head so that
 * nothing can drift. Pure.
 *
 * The head counts positions (`next`) and payload bytes (`next_bytes`) as they are reserved. A block
 * whose publish failed, wholly or in part, is recorded as a gap (`gaps[last position] = {s, n, b}`:
 * its first position, messages and bytes), by the publish itself or, when the publish died, by
 * whoever settles it. Since 2026-11-29 a gap covers its whole block, and readers treat every
 * position inside it as absent whatever its chunks hold (./log-gaps.ts; a chunk may land after its
 * block was settled). So:
 *
 * - `message_count` = positions between `earliest` and `next`, less the messages of gaps there;
 * - the bytes retained from a message on = `next_bytes` less the message's `cum` (the log's bytes
 *   before it), less the gaps' bytes after it, less every reservation still pending (it may yet
 *   fail). Each approximation errs low, so the size limit never trims a message it should keep.
 *
 * DynamoDB TTL deleting an expired chunk changes neither figure, and a failed write only adds a gap.
 */
import { pendingBytes } from './log-horizon';

/** What a failed block did not store: its first position, messages and payload bytes. */
export interface Gap {
  s: number;
  n: number;
  b: number;
}

/** The parts of a log head that counting and trimming decide on. */
export interface HeadCounters {
  next: number;
  next_bytes: number;
  earliest: number;
  pending?: Record<string, number>;
  /** Keyed by the gap's last position (a string, as DynamoDB map keys are). */
  gaps?: Record<string, Gap>;
  /**
   * Gaps spilled from the head to page items (lambda/logs/storage/log-gaps.ts `spillGaps`), so the head stays
   * small whatever publishes fail: their lost messages (`sg_n`) and bytes (`sg_b`), the lowest
   * first position (`sg_s`) and the highest last position (`sg_e`) among them. Every spilled gap
   * ends at or after `earliest` (the sweeper drops or splits a page's gaps as `earliest` passes).
   */
  sg_n?: number;
  sg_b?: number;
  sg_s?: number;
  sg_e?: number;
  /** At least the width of every gap page (lambda/logs/storage/log-gap-pages.ts), and `sg_k` 1 once none is of the form before 2026-11-29. */
  sg_w?: number;
  sg_k?: number;
}

/** Gaps that end at or after `position`. */
const gapsFrom = (h: HeadCounters, position: number) => Object.entries(h.gaps ?? {}).filter(([end]) => Number(end) >= position).map(([, g]) => g);

/**
 * Retained messages: positions from `earliest` to `next`, less those that failed to store.
 * @example messageCount({ next: 10, next_bytes: 0, earliest: 2, gaps: { '5': { s: 4, n: 2, b: 9 } } }) // 6
 */
export function messageCount(h: HeadCounters): number {
  return Math.max(0, h.next - h.earliest - gapsFrom(h, h.earliest).reduce((n, g) => n + g.n, 0) - (h.sg_n ?? 0));
}

/** Bytes of spilled gaps that may end at or after `position` (all of them, or none: errs low on what is retained). */
const spilledBytesFrom = (h: HeadCounters, position: number) => (h.sg_b && h.sg_e !== undefined && h.sg_e >= position ? h.sg_b : 0);

/**
 * A lower bound of the payload bytes the log holds from the message with `cum` at `position` on.
 * @example retainedBytesFrom({ next: 3, next_bytes: 30, earliest: 0 }, { position: 1, cum: 10 }) // 20
 */
export function retainedBytesFrom(h: HeadCounters, m: { position: number; cum: number }): number {
  const lost = gapsFrom(h, m.position).reduce((n, g) => n + g.b, 0) + spilledBytesFrom(h, m.position);
  return h.next_bytes - m.cum - lost - pendingBytes(h.pending);
}

export interface RetentionLimits {
  /** Messages published before this (epoch ms) are past retention. */
  cutoff: number;
  /** Payload bytes the log may retain. */
  maxBytes: number;
}

/**
 * Whether the oldest retained message goes: it is past retention, or the bytes retained from it on
 * exceed `maxBytes` (the log is over its cap by its true size, counted low).
 * @example isTrimmed({ position: 0, cum: 0, published_at: 5 }, { next: 1, next_bytes: 9, earliest: 0 }, { cutoff: 6, maxBytes: 99 }) // true
 */
export function isTrimmed(m: { position: number; cum: number; published_at: number }, h: HeadCounters, limits: RetentionLimits): boolean {
  return m.published_at < limits.cutoff || retainedBytesFrom(h, m) > limits.maxBytes;
}

/**
 * How far out of position order publish times may be. A message's publish time is its publish
 * call's clock when the call started; positions are given by the order of the reservations. A
 * publish stores nothing once its reservation is older than the settle time (log-horizon.ts
 * `PENDING_SETTLE_MS`, lambda/logs/storage/log-reservations.ts `mayStillWrite`), so a stored message at a
 * later position was published at most this long before any earlier one.
 */
const SKIP_AGE_MARGIN_MS = 60_000;

/**
 * `isTrimmed` for a skip by position (lambda/logs/storage/log-chunks.ts `skipGone`), which needs a predicate
 * monotone in position: the size cap is, the age is once the margin above is allowed for. So it
 * trims by age only what is past retention by more than the margin; the readers' and the
 * sweeper's exact test (`isTrimmed`) handles the margin's few messages after the skip.
 */
function isTrimmedForSkip(m: { position: number; cum: number; published_at: number }, h: HeadCounters, limits: RetentionLimits): boolean {
  return isTrimmed(m, h, { cutoff: limits.cutoff - SKIP_AGE_MARGIN_MS, maxBytes: limits.maxBytes });
}

/**
 * Messages a reader at `position` has not read yet below `horizon` (the stable horizon): the
 * positions between, less the messages of failed publishes (gaps) there. A gap spanning
 * `position` counts only for its positions at or after it.
 * @example unreadCount({ next: 10, next_bytes: 0, earliest: 0, gaps: { '5': { s: 4, n: 2, b: 9 } } }, 2, 10) // 6
 */
export function unreadCount(h: HeadCounters, position: number, horizon: number): number {
  let lost = 0;
  for (const [end, g] of Object.entries(h.gaps ?? {})) {
    const e = Number(end);
    if (e < position || g.s >= horizon) continue;
    lost += Math.min(g.n, Math.min(e, horizon - 1) - Math.max(g.s, position) + 1);
  }
  // Spilled gaps count when they all lie in [position, horizon); else not at all (the lag errs high).
  if (h.sg_n && h.sg_s !== undefined && h.sg_e !== undefined && h.sg_s >= position && h.sg_e < horizon) lost += h.sg_n;
  return Math.max(0, horizon - position - lost);
}

/**
 * Whether a trim walk can be skipped: the oldest message seen by the last walk (`trim_at` = when
 * it leaves retention) is still inside retention, and even counting every byte since it (its
 * `cum` = `earliest_bytes`) the log is within its size limit; or the last walk found the log empty
 * and nothing was reserved since (`idle_next`).
 * @example canSkipTrim({ next: 5, next_bytes: 50, earliest: 0, trim_at: 100, earliest_bytes: 0 }, 50, 60) // true
 */
export function canSkipTrim(h: HeadCounters & { trim_at?: number; earliest_bytes?: number; idle_next?: number }, now: number, maxBytes: number): boolean {
  if (h.idle_next !== undefined && h.idle_next === h.next) return true;
  if (h.trim_at === undefined || h.earliest_bytes === undefined) return false;
  return now < h.trim_at && h.next_bytes - h.earliest_bytes <= maxBytes;
}

/**
 * Gaps the head holds at most. The gap that would pass it spills them all, with itself, to a page
 * item of their own (lambda/logs/storage/log-gaps.ts `spillGaps`): each gap is ~40 bytes of the head, which
 * every publish call writes twice (write units by the item's size), so many failed publishes (an
 * outage, sustained throttling) must not make every later publish dearer, nor the head reach
 * DynamoDB's 400 KB item limit. Gaps stay exact: none is ever merged.
 */
export const HEAD_MAX_GAPS = 32;

/**
 * How a spilled page's gaps fare when `earliest` moves to `to`: those ending before it are dropped
 * (no longer counted), those spanning it (`s < to <= end`) must be recounted from `to` on, the
 * rest are kept as they are.
 * @example gapsAt({ '3': { s: 2, n: 2, b: 4 }, '9': { s: 8, n: 2, b: 4 } }, 9).dropped // [{ s: 2, n: 2, b: 4 }]
 */
export function gapsAt(gaps: Record<string, Gap>, to: number): { dropped: Gap[]; spanning: Record<string, Gap>; kept: Record<string, Gap> } {
  const out = { dropped: [] as Gap[], spanning: {} as Record<string, Gap>, kept: {} as Record<string, Gap> };
  for (const [end, g] of Object.entries(gaps)) {
    if (Number(end) < to) out.dropped.push(g);
    else if (g.s < to) out.spanning[end] = g;
    else out.kept[end] = g;
  }
  return out;
}

/**
 * What one consume reads at most before it answers with the position it reached (chunk bytes,
 * and time): far below API Gateway's 29 s, and enough to fill a 5 MiB response.
 */
export const READ_BUDGET = { bytes: 8 * 1024 * 1024, ms: 5_000 } as const;

/**
 * The log's average payload bytes per message since it was created (undefined while empty): what
 * a read expects each message to cost (lambda/logs/storage/log-chunks.ts `MergeOptions.messageBytes`).
 * @example averageMessageBytes({ next: 4, next_bytes: 1000, earliest: 0 }) // 250
 */
export const averageMessageBytes = (h: HeadCounters) => (h.next > 0 ? h.next_bytes / h.next : undefined);

/**
 * The tests a reader applies to each message: exact, and monotone for a skip by position. `absent`
 * (./log-gaps.ts `absentPositions`) makes the exact test pass over the positions of whole gaps too.
 */
export function goneTests(h: HeadCounters, limits: RetentionLimits, absent: (position: number) => boolean = () => false) {
  return {
    exact: (m: { position: number; cum: number; published_at: number }) => absent(m.position) || isTrimmed(m, h, limits),
    skip: (m: { position: number; cum: number; published_at: number }) => isTrimmedForSkip(m, h, limits),
  };
}
