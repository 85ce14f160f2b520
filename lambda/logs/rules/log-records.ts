/**
 * What a log's reservation records say about its blocks in flight (lambda/logs/storage/log-records.ts). Pure.
 *
 * Every publish call's reservation on the head takes the next reservation number (`seq`) with its
 * block of positions, in the head's one serial order, so block `j + 1` starts where block `j`
 * ends. Once its outcome is known (its chunks written, or what failed recorded as a gap) the
 * publish writes record `j`: its block's first position `s`, positions `n`, bytes `b` and the log's
 * bytes before it `c`, and `ra`, when its reservation's answer came (its clock). The head keeps a
 * watermark: every reservation below `w` has its record, and block `w` starts at `ws` with the
 * log's bytes `wc` before it.
 *
 * Walking the records from `w` on, a number without a record is a block whose publish is still
 * writing, or died. Consecutive ones form a *run*: its positions start where the record before
 * ends (or at `ws`) and end where the record after starts (or at the head's `next`). Its publishes
 * all started before `ra` of any later record (that reservation landed after theirs), and before
 * the last reservation's token time plus how late a reservation may land after its token
 * (lambda/logs/rules/log-horizon.ts `RESERVATION_LANDING_MS`: the longest lifetime of a function that
 * reserves, 60 s, not an HTTP publish's 29 s, as a 60 s function's request may land that late), so
 * the run's time is the earlier of the two: a reader may pass it, and the sweeper settle it, once
 * that time is a settle time old (lambda/logs/rules/log-horizon.ts `PENDING_SETTLE_MS`), as for a pending
 * entry of its own.
 */
import { RESERVATION_LANDING_MS, pendingToken, tokenTime } from './log-horizon';
import type { Gap } from './retention';

/** The head's fields the records are read by. */
export interface RecordMarks {
  next: number;
  next_bytes: number;
  /** Reservations made so far (the next one's number); absent before the first one of this layout. */
  seq?: number;
  /** Every reservation below `w` has its record; block `w` starts at `ws`, the log's bytes before it `wc`. */
  w?: number;
  ws?: number;
  wc?: number;
  /** The last reservation's token (lambda/logs/rules/log-horizon.ts `pendingToken`). */
  lt?: string;
}

/** A reservation record, as lambda/logs/storage/log-records.ts writes it (keys left out). */
export interface ReservationRecord {
  /** The reservation number, zero-padded (the record's sort key). */
  sk: string;
  s: number;
  n: number;
  b: number;
  c: number;
  /** When the reservation's answer came (epoch ms, its publisher's clock); the settle time for a settled run. */
  ra: number;
  tok: string;
  /** A settled run (lambda/logs/storage/log-records.ts `runRecord`): the last reservation number it covers. */
  to?: number;
  /** Not a record: a claim of a run being settled (lambda/logs/storage/log-records.ts `claimRun`), the run's first number. */
  claim?: number;
  /** Written with a gap on the head: the gap's messages (`n` when it covers the whole block, lambda/logs/rules/log-gaps.ts). */
  g?: number;
}

/**
 * The gaps written with `records` (in the same transaction as their records), keyed by last
 * position as on the head: a reader that read the head before such a record was written learns its
 * gap here, from the records it reads after the head anyway.
 * @example recordGaps([{ sk: recordSk(1), s: 3, n: 2, b: 20, c: 30, ra: 9, tok: 't', g: 2 }]) // { '4': { s: 3, n: 2, b: 20 } }
 */
export function recordGaps(records: ReservationRecord[]): Record<string, Gap> {
  const out: Record<string, Gap> = {};
  for (const r of records) if (r.claim === undefined && r.g) out[String(r.s + r.n - 1)] = { s: r.s, n: r.g, b: r.b };
  return out;
}

/** Reservations `from`..`to` without a record: positions [s, end), bytes [c, endc). */
export interface MissingRun {
  from: number;
  to: number;
  s: number;
  c: number;
  end: number;
  endc: number;
  /** A time by which all of its publishes had started (see the module comment). */
  time: number;
}

export const recordSk = (seq: number) => String(seq).padStart(16, '0');

/**
 * The runs of reservations without a record, and where the records are complete up to (the
 * watermark may move there). `records` are those from `w` on, in order, as one Query returns them;
 * when they stop short of `seq` (a page), the rest counts as one run.
 * @example walkRecords({ next: 5, next_bytes: 50, seq: 2, w: 0, ws: 0, wc: 0, lt: '0-2-14-x' }, [{ sk: recordSk(1), s: 3, n: 2, b: 20, c: 30, ra: 9, tok: 't' }]).runs // [{ from: 0, to: 0, s: 0, c: 0, end: 3, endc: 30, time: 9 }]
 */
export function walkRecords(head: RecordMarks, records: ReservationRecord[]): { runs: MissingRun[]; done: { w: number; ws: number; wc: number } } {
  const seq = head.seq ?? 0;
  let expect = head.w ?? 0;
  let pos = head.ws ?? head.next;
  let cum = head.wc ?? head.next_bytes;
  const runs: MissingRun[] = [];
  for (const r of records) {
    if (r.claim !== undefined) continue; // its run is not settled until the record at its first number
    const j = Number(r.sk);
    if (j < expect) continue; // inside a settled run
    if (j > expect) runs.push({ from: expect, to: j - 1, s: pos, c: cum, end: r.s, endc: r.c, time: Infinity });
    for (const run of runs) run.time = Math.min(run.time, r.ra);
    pos = r.s + r.n;
    cum = r.c + r.b;
    expect = (r.to ?? j) + 1;
  }
  if (expect < seq) runs.push({ from: expect, to: seq - 1, s: pos, c: cum, end: head.next, endc: head.next_bytes, time: Infinity });
  // Every reservation landed before the last one, which landed at most RESERVATION_LANDING_MS after its token.
  const latest = head.lt !== undefined && Number.isFinite(tokenTime(head.lt)) ? tokenTime(head.lt) + RESERVATION_LANDING_MS : Infinity;
  for (const run of runs) run.time = Math.min(run.time, latest);
  const first = runs[0];
  return { runs, done: first ? { w: first.from, ws: first.s, wc: first.c } : { w: expect, ws: pos, wc: cum } };
}

/**
 * A run as a pending entry (lambda/logs/rules/log-horizon.ts): its token carries the run's time, positions and
 * bytes, and in its random part the reservation numbers and the log's bytes before it, so that
 * whoever settles it (lambda/logs/storage/log-reservations.ts `settleDead`) can write its record.
 * @example runToken({ from: 3, to: 4, s: 10, c: 7, end: 12, endc: 9, time: 0 }) // '0-2-2-r3.4.7'
 */
export const runToken = (run: MissingRun) => pendingToken(run.time === Infinity ? Date.now() : run.time, { count: run.end - run.s, bytes: run.endc - run.c }, `r${run.from}.${run.to}.${run.c}`);

/** The reservation numbers and bytes before a run token's block; undefined for a token of the head's own `pending`. */
export function tokenRun(token: string): { from: number; to: number; c: number } | undefined {
  const m = /-r(\d+)\.(\d+)\.(\d+)$/.exec(token);
  return m ? { from: Number(m[1]), to: Number(m[2]), c: Number(m[3]) } : undefined;
}
