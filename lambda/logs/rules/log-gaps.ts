/**
 * Which positions of an append-only log are absent: those inside a gap that covers its whole block
 * (lambda/logs/rules/retention.ts `Gap`). Pure.
 *
 * A block whose publish failed, or died and was settled by another, is recorded as a gap over the
 * whole block: its positions hold no message, whatever its chunks hold. A chunk put is sent before
 * the publish's write window ends but may land long after (the client sets no request timeout), so
 * a chunk can appear after its block was counted. Readers therefore skip every position inside a
 * whole gap instead of trusting what the chunks hold: `message_count` (positions less gaps) and the
 * messages a reader returns agree whenever a chunk lands, and the publish, which never answers 201
 * for a block with a gap (lambda/logs/storage/log-reservations.ts), leaves nothing its client's retry would
 * duplicate.
 *
 * Gaps recorded before 2026-11-29 may cover part of their block only (`n` below the block's
 * positions: the messages its chunks did not hold when it was settled); which positions those were
 * is not known, so readers return what such a block stores, as before (its count may err low).
 */
import type { Gap } from './retention';

/**
 * Whether the gap ending at `end` covers every position of its block (all gaps written since
 * 2026-11-29 do).
 * @example isWholeGap('5', { s: 4, n: 2, b: 9 }) // true
 */
export const isWholeGap = (end: string | number, g: Gap) => g.n === Number(end) - g.s + 1;

/** The gap of a whole block of `count` positions from `start` and `bytes` payload bytes, keyed by its last position. */
export const wholeGap = (start: number, block: { count: number; bytes: number }): { end: number; gap: Gap } => ({
  end: start + block.count - 1,
  gap: { s: start, n: block.count, b: block.bytes },
});

/** A test of absent positions, and the first position at or after one that is not absent. */
export interface Absent {
  (position: number): boolean;
  /** `position` when it is not absent, else the position after the gap (or gaps, end to end) holding it. */
  after(position: number): number;
}

/**
 * A test of positions inside the whole gaps of `maps` (each keyed by last position, as the head's
 * `gaps`, a gap page's `g`): a binary search over the gaps sorted by first position (gaps never
 * overlap: one per block, or per settled run of blocks).
 * @example absentPositions([{ '5': { s: 4, n: 2, b: 9 } }])(5) // true
 * @example absentPositions([{ '5': { s: 4, n: 2, b: 9 } }]).after(4) // 6
 */
export function absentPositions(maps: (Record<string, Gap> | undefined)[]): Absent {
  const spans: [number, number][] = [];
  for (const m of maps) for (const [end, g] of Object.entries(m ?? {})) if (isWholeGap(end, g)) spans.push([g.s, Number(end)]);
  spans.sort((a, b) => a[0] - b[0]);
  const holding = (position: number): [number, number] | undefined => {
    let lo = 0;
    let hi = spans.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (spans[mid][1] < position) lo = mid + 1;
      else if (spans[mid][0] > position) hi = mid - 1;
      else return spans[mid];
    }
    return undefined;
  };
  const absent = (position: number) => holding(position) !== undefined;
  return Object.assign(absent, {
    after(position: number) {
      for (let span = holding(position); span; span = holding(position)) position = span[1] + 1;
      return position;
    },
  });
}
