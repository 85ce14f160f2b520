/**
 * The lateness rules of schedule runs, pure (lambda/schedules/rules/schedules.ts): every scheduled time a
 * tick reaches within the bound is made once, in order; older ones collapse into one run and the
 * rest are recorded as skipped; retryable failures and their window.
 */
import fc from 'fast-check';
import { ApiError } from '../../lambda/core/rules/errors';
import { isRetryableFailure, LATENESS_BOUND_MS, nextAfterRun, nextRunAfter, runWindowOpen, type ScheduleConfig } from '../../lambda/schedules/rules/schedules';

const FC = { seed: Number(process.env.FC_SEED ?? 35), numRuns: Number(process.env.FC_RUNS ?? 200) };
const base: ScheduleConfig = { timezone: 'UTC', topic: 't', payload: 'p', enabled: true };
const anchor = Date.parse('2026-11-27T10:00:00Z');

/** The runs ticks at `ticks` make, as the tick does (lambda/schedules/runs.ts): each due time, then nextAfterRun. */
function simulate(c: ScheduleConfig, ticks: number[]) {
  const made: { t: number; at: number }[] = [];
  const skipped: { from: number; until: number | undefined }[] = [];
  let next = nextRunAfter(c, anchor, anchor);
  for (const now of ticks) {
    while (next !== undefined && next <= now) {
      made.push({ t: next, at: now });
      const after = nextAfterRun(c, next, now, anchor);
      if (after.skipped) skipped.push(after.skipped);
      next = after.next;
    }
  }
  return { made, skipped };
}

/** Every scheduled time of `c` up to `until`. */
function allTimes(c: ScheduleConfig, until: number): number[] {
  const out: number[] = [];
  for (let t = nextRunAfter(c, anchor, anchor); t !== undefined && t <= until; t = nextRunAfter(c, t, anchor)) out.push(t);
  return out;
}

describe('late ticks', () => {
  it('make 60, 120, 180 and 240 of an every-60 schedule ticked at +59.5, +120.5, +180.2 and +240.1 s', () => {
    const { made, skipped } = simulate({ ...base, every: 60 }, [59.5, 120.5, 180.2, 240.1].map((s) => anchor + s * 1000));
    expect(made.map((m) => (m.t - anchor) / 1000)).toEqual([60, 120, 180, 240]);
    expect(skipped).toEqual([]);
  });

  it('after a 10-minute outage make the first missed time once, skip the times beyond 5 minutes and make those within', () => {
    const back = anchor + 60_000 + 10 * 60_000 + 5_000;
    const { made, skipped } = simulate({ ...base, every: 60 }, [back]);
    expect(made.map((m) => (m.t - anchor) / 60_000)).toEqual([1, 7, 8, 9, 10, 11]);
    expect(skipped).toEqual([{ from: anchor + 2 * 60_000, until: anchor + 7 * 60_000 }]);
  });

  it('never go back before the anchor (a changed timing does not make the new configuration\'s past times)', () => {
    const c = { ...base, cron: '* * * * *' };
    const changed = anchor + 30 * 60_000 + 10_000;
    expect(nextAfterRun(c, anchor + 25 * 60_000, changed + 1000, changed)).toEqual({ next: anchor + 31 * 60_000 });
  });

  it('make each time once, in order; every time reached within the bound; any other time inside a recorded skip (property)', () => {
    const timing = fc.oneof(
      fc.integer({ min: 60, max: 900 }).map((every) => ({ every })),
      fc.constantFrom('* * * * *', '*/5 * * * *', '*/2 * * * *', '0 * * * *').map((cron) => ({ cron })),
    );
    // Gaps between ticks: mostly about a minute, sometimes an outage of up to 3 hours.
    const gap = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1_000, max: 120_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 120_000, max: 3 * 3600_000 }) });
    fc.assert(
      fc.property(timing, fc.array(gap, { minLength: 1, maxLength: 60 }), (t, gaps) => {
        const c = { ...base, ...t };
        const ticks = gaps.reduce<number[]>((acc, g) => [...acc, (acc.at(-1) ?? anchor) + g], []);
        const { made, skipped } = simulate(c, ticks);
        const times = made.map((m) => m.t);
        for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThan(times[i - 1]);
        const madeSet = new Set(times);
        const all = allTimes(c, ticks.at(-1) as number);
        for (const time of all) {
          const reached = ticks.find((k) => k >= time) as number;
          if (reached - time <= LATENESS_BOUND_MS) expect(madeSet.has(time)).toBe(true);
          if (!madeSet.has(time)) expect(skipped.some((s) => s.from <= time && (s.until === undefined || time < s.until))).toBe(true);
        }
        const allSet = new Set(all);
        for (const m of made) expect(allSet.has(m.t)).toBe(true);
        // At most the collapsed run and the times within the bound in one tick.
        const perTick = new Map<number, number>();
        for (const m of made) perTick.set(m.at, (perTick.get(m.at) ?? 0) + 1);
        expect(Math.max(...perTick.values(), 0)).toBeLessThanOrEqual(7);
      }),
      FC,
    );
  });
});

describe('retries', () => {
  it('retry the service\'s own failures, 5xx and 429; not refusals that would answer the same again', () => {
    expect(isRetryableFailure(new Error('ProvisionedThroughputExceededException'))).toBe(true);
    expect(isRetryableFailure(new ApiError(503, 'SERVICE_UNAVAILABLE', 'x'))).toBe(true);
    expect(isRetryableFailure(new ApiError(429, 'RATE_LIMIT_EXCEEDED', 'x'))).toBe(true);
    expect(isRetryableFailure(new ApiError(404, 'TOPIC_NOT_FOUND', 'x'))).toBe(false);
    expect(isRetryableFailure(new ApiError(413, 'PAYLOAD_TOO_LARGE', 'x'))).toBe(false);
  });

  it('keep a run\'s window open for the bound after the later of its time and its first attempt', () => {
    expect(runWindowOpen(anchor, anchor, anchor + LATENESS_BOUND_MS)).toBe(true);
    expect(runWindowOpen(anchor, anchor, anchor + LATENESS_BOUND_MS + 1)).toBe(false);
    // Made late after an outage: its own window from the first attempt.
    expect(runWindowOpen(anchor, anchor + 3600_000, anchor + 3600_000 + 60_000)).toBe(true);
  });
});
