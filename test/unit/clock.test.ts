import { derivedId, newId, sleep, systemClock } from '../../lambda/core/rules/clock';
import { deadLetterId } from '../../lambda/publishing/rules';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Reads the millisecond time back from an id's first 10 characters. */
const timeOf = (id: string) => [...id.slice(0, 10)].reduce((t, c) => t * 32 + CROCKFORD.indexOf(c), 0);

describe('newId', () => {
  it('is 26 characters of Crockford base 32', () => {
    expect(newId()).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('encodes the given millisecond time in its first 10 characters', () => {
    expect(newId(0).slice(0, 10)).toBe('0000000000');
    const t = Date.UTC(2026, 10, 22, 10, 0, 0, 123);
    expect(timeOf(newId(t))).toBe(t);
  });

  it('sorts ids of later times after earlier ones, across digit carries', () => {
    const base = Date.UTC(2026, 0, 1);
    const times = [base, base + 1, base + 31, base + 32, base + 1023, base + 1024, base + 86_400_000, base + 365 * 86_400_000];
    const ids = times.map((t) => newId(t));
    expect([...ids].sort()).toEqual(ids);
  });

  it('makes ids of one millisecond sort in the order they were made (a batch keeps its order)', () => {
    const ids = Array.from({ length: 1000 }, () => newId(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(ids.every((id) => timeOf(id) === 1_700_000_000_000)).toBe(true);
  });

  it('starts afresh, unpredictably, in the next millisecond', () => {
    const a = newId(1_700_000_000_001);
    const b = newId(1_700_000_000_002);
    expect(b > a).toBe(true);
    expect(timeOf(b)).toBe(1_700_000_000_002);
    expect(new Set(Array.from({ length: 20 }, (_, i) => newId(1_700_000_001_000 + i).slice(10))).size).toBe(20);
  });

  it('never repeats within one millisecond', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId(1_700_000_000_000)));
    expect(ids.size).toBe(10_000);
  });
});

describe('clock', () => {
  it('tells the system time', () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('sleeps until the time has passed', async () => {
    jest.useFakeTimers();
    try {
      let done = false;
      const p = sleep(1000).then(() => (done = true));
      await jest.advanceTimersByTimeAsync(999);
      expect(done).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await p;
      expect(done).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('derivedId and deadLetterId', () => {
  const t = Date.UTC(2026, 10, 29, 7, 0, 0, 5);
  it('is an id of the same form, with the given time, the same for the same seed', () => {
    expect(derivedId(t, 'a')).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(timeOf(derivedId(t, 'a'))).toBe(t);
    expect(derivedId(t, 'a')).toBe(derivedId(t, 'a'));
    expect(derivedId(t, 'b')).not.toBe(derivedId(t, 'a'));
  });

  it('names one dead-lettering: the same on a retry, another for another queue, original or hop', () => {
    const m = { message_id: newId(t), published_at: t, properties: {} };
    const id = deadLetterId('q1', m);
    expect(deadLetterId('q1', { ...m })).toBe(id);
    expect(timeOf(id)).toBe(t);
    expect(deadLetterId('q2', m)).not.toBe(id);
    expect(deadLetterId('q1', { ...m, message_id: newId(t) })).not.toBe(id);
    expect(deadLetterId('q1', { ...m, properties: { 'x-hop': '1' } })).not.toBe(id);
  });
});
