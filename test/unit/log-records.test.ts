/**
 * The pure walk of a log's reservation records (lambda/logs/rules/log-records.ts): which blocks are
 * still in flight, from when, and how far the watermark may move.
 */
import { recordSk, runToken, tokenRun, walkRecords, type RecordMarks, type ReservationRecord } from '../../lambda/logs/rules/log-records';
import { PENDING_SETTLE_MS, RESERVATION_LANDING_MS, RESERVER_LIFETIME_MS, pendingToken, stableHorizon, tokenBlock, tokenTime } from '../../lambda/logs/rules/log-horizon';
import { TICK_TIMEOUT } from '../../lib/constructs/scheduler';
import { DELIVERY_TIMEOUT } from '../../lib/constructs/webhook-delivery';

const now = 1_800_000_000_000;
/** A head after reservations 0..seq-1 of 2 positions and 20 bytes each, from position 10. */
const head = (seq: number, lastAt = now): RecordMarks => ({ next: 10 + 2 * seq, next_bytes: 100 + 20 * seq, seq, w: 0, ws: 10, wc: 100, lt: pendingToken(lastAt, { count: 2, bytes: 20 }, 'x') });
const record = (j: number, ra = now, extra: Partial<ReservationRecord> = {}): ReservationRecord => ({ sk: recordSk(j), s: 10 + 2 * j, n: 2, b: 20, c: 100 + 20 * j, ra, tok: `t${j}`, ...extra });

describe('walking reservation records', () => {
  it('finds nothing in flight when every reservation has its record, and moves the watermark past them all', () => {
    expect(walkRecords(head(3), [record(0), record(1), record(2)])).toEqual({ runs: [], done: { w: 3, ws: 16, wc: 160 } });
  });

  it('makes consecutive reservations without a record one run, its positions between its neighbours', () => {
    const { runs, done } = walkRecords(head(5), [record(0), record(3), record(4)]);
    expect(runs).toEqual([{ from: 1, to: 2, s: 12, c: 120, end: 16, endc: 160, time: now }]);
    // The watermark stops at the first reservation without a record.
    expect(done).toEqual({ w: 1, ws: 12, wc: 120 });
  });

  it("dates a run by the earliest answer of a later reservation, else by the last reservation's token time plus how late a reservation may land", () => {
    const later = walkRecords(head(4, now), [record(1, now - 5_000), record(2, now - 9_000)]);
    expect(later.runs.map((r) => [r.from, r.to, r.time])).toEqual([
      [0, 0, now - 9_000],
      [3, 3, now + RESERVATION_LANDING_MS],
    ]);
    // Its token carries that time, so readers pass it only a settle time after it.
    const token = runToken(later.runs[0]);
    expect(tokenTime(token)).toBe(now - 9_000);
    expect(tokenBlock(token)).toEqual({ count: 2, bytes: 20 });
    expect(tokenRun(token)).toEqual({ from: 0, to: 0, c: 100 });
    const pending = { [token]: 10, [runToken(later.runs[1])]: 16 };
    expect(stableHorizon(pending, 18, now)).toBe(10);
    expect(stableHorizon(pending, 18, now - 9_000 + PENDING_SETTLE_MS)).toBe(16);
  });

  it('skips the reservations of a settled run, and a late record inside it', () => {
    const settled = record(0, now, { n: 6, b: 60, to: 2 });
    expect(walkRecords(head(4), [settled, record(1), record(3)])).toEqual({ runs: [], done: { w: 4, ws: 18, wc: 180 } });
  });

  it('ignores the claims of a run being settled: the run stays until the record at its first number', () => {
    const claim = { sk: recordSk(2), claim: 1, tok: 'r', ra: now } as ReservationRecord;
    expect(walkRecords(head(4), [record(0), claim, record(3)]).runs).toEqual([{ from: 1, to: 2, s: 12, c: 120, end: 16, endc: 160, time: now }]);
    const settled = record(1, now, { n: 4, b: 40, to: 2 });
    expect(walkRecords(head(4), [record(0), settled, claim, record(3)])).toEqual({ runs: [], done: { w: 4, ws: 18, wc: 180 } });
  });

  it('counts the reservations past a page of records as in flight, from where the page ends', () => {
    const { runs } = walkRecords(head(4), [record(0), record(1)]);
    expect(runs).toEqual([{ from: 2, to: 3, s: 14, c: 140, end: 18, endc: 180, time: now + RESERVATION_LANDING_MS }]);
  });

  it('bounds how late a reservation lands by the longest lifetime of a function that reserves', () => {
    // The 60 s functions that publish (the scheduler's tick, webhook delivery) may send their
    // reservation that long after its token: a run's time must not assume an HTTP publish's 29 s.
    for (const t of [TICK_TIMEOUT, DELIVERY_TIMEOUT]) expect(t.toMilliseconds()).toBeLessThanOrEqual(RESERVER_LIFETIME_MS);
    expect(RESERVATION_LANDING_MS).toBeGreaterThan(RESERVER_LIFETIME_MS);
  });

  it('tells a run token from a token of the head itself', () => {
    expect(tokenRun(pendingToken(now, { count: 1, bytes: 1 }, 'r1.2.3x'))).toBeUndefined();
    expect(tokenRun(pendingToken(now, { count: 1, bytes: 1 }, 'AbC-_9xy'))).toBeUndefined();
  });
});
