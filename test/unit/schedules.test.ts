/**
 * Schedules and long delays, the pure parts (docs/schedules.md): next runs of cron (croner, time
 * zones through Intl, daylight-saving gaps and repeats) and `every` schedules, start_at / end_at,
 * the placeholders, and the delay rules.
 */
import fc from 'fast-check';
import { cronProblem, nextRunAfter, render, runMessage, toScheduleConfig, patched, type ScheduleConfig } from '../../lambda/schedules/rules/schedules';
import { checkDelays, dueAt, dueShard, isLongDelay, remainingDelaySeconds, timeKey, DUE_SHARDS } from '../../lambda/core/rules/delays';
import { refusal } from '../fixtures/errors';

const FC = { seed: Number(process.env.FC_SEED ?? 20), numRuns: Number(process.env.FC_RUNS ?? 200) };
const base: ScheduleConfig = { timezone: 'UTC', topic: 't', payload: 'p', enabled: true };
const at = (iso: string) => Date.parse(iso);
const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());

describe('cron schedules', () => {
  it('runs at the next matching minute in its time zone', () => {
    const c = { ...base, cron: '0 9 * * 1-5', timezone: 'Europe/Paris' };
    // Friday 27 Nov 2026 10:00 Paris → Monday 30 Nov 09:00 Paris (08:00 UTC, winter time).
    expect(iso(nextRunAfter(c, at('2026-11-27T09:00:00Z'), 0))).toBe('2026-11-30T08:00:00.000Z');
    // Summer time: 09:00 Paris is 07:00 UTC.
    expect(iso(nextRunAfter(c, at('2026-07-01T00:00:00Z'), 0))).toBe('2026-07-01T07:00:00.000Z');
  });

  it('runs a time that a spring-forward gap skips once, at the first valid time after it', () => {
    const c = { ...base, cron: '30 2 * * *', timezone: 'America/New_York' };
    // 8 March 2026: 02:00 → 03:00 in New York; 02:30 does not exist, the run is 03:00 EDT (07:00 UTC).
    expect(iso(nextRunAfter(c, at('2026-03-07T12:00:00Z'), 0))).toBe('2026-03-08T07:00:00.000Z');
    expect(iso(nextRunAfter(c, at('2026-03-08T07:00:00Z'), 0))).toBe('2026-03-09T06:30:00.000Z');
  });

  it('runs a time that a fall-back repeat shows twice only once, at its first occurrence', () => {
    const c = { ...base, cron: '30 1 * * *', timezone: 'America/New_York' };
    const first = nextRunAfter(c, at('2026-10-31T12:00:00Z'), 0) as number;
    expect(iso(first)).toBe('2026-11-01T05:30:00.000Z'); // 01:30 EDT
    expect(iso(nextRunAfter(c, first, 0))).toBe('2026-11-02T06:30:00.000Z'); // not 01:30 EST the same night
  });

  it('honours start_at and end_at', () => {
    const c = { ...base, cron: '0 * * * *', start_at: at('2026-05-01T10:30:00Z'), end_at: at('2026-05-01T12:00:00Z') };
    expect(iso(nextRunAfter(c, at('2026-01-01T00:00:00Z'), 0))).toBe('2026-05-01T11:00:00.000Z');
    expect(iso(nextRunAfter(c, at('2026-05-01T11:00:00Z'), 0))).toBe('2026-05-01T12:00:00.000Z');
    expect(nextRunAfter(c, at('2026-05-01T12:00:00Z'), 0)).toBeUndefined();
  });

  it('refuses anything but 5 valid fields', () => {
    expect(cronProblem('* * * * *')).toBeUndefined();
    expect(cronProblem('0 0 * * * *')).toMatch(/5 fields/);
    expect(cronProblem('61 * * * *')).toMatch(/minute/);
    expect(cronProblem('0 0 31 2 *')).toBeDefined();
  });

  it('is always strictly after `after`, on a whole minute, and never more than a year away for "* * * * *"-like patterns (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: at('2025-01-01T00:00:00Z'), max: at('2030-01-01T00:00:00Z') }), fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'), fc.constantFrom('* * * * *', '*/15 * * * *', '0 * * * *', '30 2 * * *', '0 0 1 * *'), (after, timezone, cron) => {
        const next = nextRunAfter({ ...base, cron, timezone }, after, 0) as number;
        expect(next).toBeGreaterThan(after);
        expect(next % 60_000).toBe(0);
        expect(next - after).toBeLessThanOrEqual(32 * 24 * 3600_000);
      }),
      FC,
    );
  });
});

describe('every schedules', () => {
  it('run every N seconds from start_at, or from the anchor (create) without one, and skip what an outage missed', () => {
    const anchor = at('2026-01-01T00:00:10Z');
    const c = { ...base, every: 60 };
    expect(iso(nextRunAfter(c, anchor, anchor))).toBe('2026-01-01T00:01:10.000Z');
    expect(iso(nextRunAfter(c, at('2026-01-01T05:00:00Z'), anchor))).toBe('2026-01-01T05:00:10.000Z');
    const s = { ...c, start_at: at('2026-02-01T00:00:00Z') };
    expect(iso(nextRunAfter(s, anchor, anchor))).toBe('2026-02-01T00:00:00.000Z');
  });

  it('lands on the anchor grid strictly after `after` (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 0, max: 1e10 }), fc.integer({ min: 60, max: 86400 * 30 }), (anchor, delta, every) => {
        const next = nextRunAfter({ ...base, every }, anchor + delta, anchor) as number;
        expect(next).toBeGreaterThan(anchor + delta);
        expect((next - anchor) % (every * 1000)).toBe(0);
        expect(next - (anchor + delta)).toBeLessThanOrEqual(every * 1000);
      }),
      FC,
    );
  });
});

describe('configuration', () => {
  it('needs one of cron and every, and a PATCH of one replaces the other', () => {
    expect(refusal(() => toScheduleConfig({ topic: 't', payload: 'p' }))).toMatchObject({ status: 422, details: { fields: [{ field: 'cron' }] } });
    const stored = toScheduleConfig({ topic: 't', payload: 'p', every: 60 });
    expect(toScheduleConfig(patched(stored, { cron: '* * * * *' }))).toMatchObject({ cron: '* * * * *' });
    expect(toScheduleConfig(patched(stored, { cron: '* * * * *' }))).not.toHaveProperty('every');
    expect(toScheduleConfig(patched({ ...stored, start_at: 5 }, { start_at: null }))).not.toHaveProperty('start_at');
  });

  it('fills {{.scheduled_time}} and {{.schedule}} in the payload and property values, nothing else', () => {
    expect(render('{{.schedule}} at {{ .scheduled_time }} {{.payload}}', 'nightly', 0)).toBe('nightly at 1970-01-01T00:00:00.000Z {{.payload}}');
    expect(runMessage({ ...base, payload: '{{.schedule}}', properties: { k: '{{.scheduled_time}}' } }, 'n', 60_000)).toEqual({ payload: 'n', properties: { k: '1970-01-01T00:01:00.000Z' } });
  });
});

describe('delays', () => {
  const now = at('2026-01-01T00:00:00Z');
  it('splits at SQS\'s 900 s and rounds what is left to whole seconds', () => {
    expect(isLongDelay(dueAt({ delay_seconds: 900 }, now), now)).toBe(false);
    expect(isLongDelay(dueAt({ delay_seconds: 901 }, now), now)).toBe(true);
    expect(isLongDelay(dueAt({ deliver_at: '2026-01-01T00:15:00.001Z' }, now), now)).toBe(true);
    expect(remainingDelaySeconds(now + 840_400, now)).toBe(840);
    expect(remainingDelaySeconds(now - 5000, now)).toBe(0);
  });

  it('refuses both fields, a time without a zone, and more than 365 days', () => {
    expect(refusal(() => checkDelays([{ delay_seconds: 1, deliver_at: '2026-01-01T00:00:00Z' }], now, false))).toMatchObject({ status: 422, details: { fields: [{ field: 'deliver_at' }] } });
    expect(refusal(() => checkDelays([{}, { deliver_at: '2026-01-01T00:00:00' }], now, true))).toMatchObject({ details: { fields: [{ field: 'messages.1.deliver_at' }] } });
    expect(refusal(() => checkDelays([{ deliver_at: '2027-01-02T00:00:00Z' }], now, false))).toMatchObject({ status: 422 });
    expect(() => checkDelays([{ deliver_at: '2026-12-31T23:59:59+01:00' }], now, false)).not.toThrow();
  });

  it('spreads ids evenly over the shards and keys sort as times', () => {
    const counts = new Array(DUE_SHARDS).fill(0);
    for (let i = 0; i < 1000 * DUE_SHARDS; i++) counts[dueShard(`id-${i}`)]++;
    expect(Math.max(...counts)).toBeLessThan(1.15 * 1000);
    expect(Math.min(...counts)).toBeGreaterThan(0.85 * 1000);
    expect(timeKey(9) < timeKey(10)).toBe(true);
  });

  it('keeps the shards of fewer shards among the shards read: an item written with 32 shards is read with 64', () => {
    // An item keeps the due_shard it was written with; with 32 shards that is 0 to 31, all of
    // which the tick still reads with 64 (and the move of a schedule's entry takes the new count).
    for (let i = 0; i < 1000; i++) expect(dueShard(`id-${i}`, 32)).toBeLessThan(DUE_SHARDS);
    expect(DUE_SHARDS).toBe(64);
  });
});
