/**
 * The fair-queue rule the local event source applies (local/fair-queues.ts), from the AWS
 * documentation: the thresholds that make a message group noisy, and the order a receive hands
 * messages out in.
 */
import { FairQueueState, NOISY_MIN_IN_FLIGHT, pick, RECENT_MS } from '../../local/fair-queues';

const many = (g: string, n: number) => Array.from({ length: n }, () => g);

describe('noisy neighbours', () => {
  it('by concurrency: more than 10 % of the in-flight messages and at least 30 of its own', () => {
    const s = new FairQueueState();
    const t = 1_000_000;
    // 29 in flight of 29: the whole share, but under 30: not noisy by concurrency. Its processing
    // time share is also all of it only once time has passed; at the same instant it is 0.
    s.hand(many('a', NOISY_MIN_IN_FLIGHT - 1), t);
    expect(s.noisy(t).has('a')).toBe(false);
    s.hand(['a'], t);
    expect(s.noisy(t).has('a')).toBe(true);
    // 30 of 400 (7.5 %): at least 30, but not above 10 %.
    const b = new FairQueueState();
    b.hand(many('a', 30), t);
    b.hand(many('b', 370), t);
    expect(b.noisy(t).has('a')).toBe(false);
    expect(b.noisy(t).has('b')).toBe(true);
  });

  it('by processing time: more than 10 % of the recent processing time, even with few in flight', () => {
    const s = new FairQueueState();
    const t = 1_000_000;
    // One slow message of `slow` for 5 s against 20 quick ones of each of 10 other groups (50 ms each).
    s.hand(['slow'], t);
    for (let g = 0; g < 10; g++) {
      for (let i = 0; i < 20; i++) {
        const h = s.hand([`q${g}`], t + i * 100);
        s.end(h, t + i * 100 + 50);
      }
    }
    const noisy = s.noisy(t + 5000);
    expect(noisy.has('slow')).toBe(true);
    expect([...noisy]).toEqual(['slow']);
  });

  it('forgets processing time older than the recent window, and counts a batch out when it ends', () => {
    const s = new FairQueueState();
    const t = 1_000_000;
    const h = s.hand(many('a', 5), t);
    s.end(h, t + 5000);
    s.end(h, t + 9000); // a second end changes nothing
    expect(s.inFlightOf('a')).toBe(0);
    const q = s.hand(['b'], t + 5000);
    s.end(q, t + 5001);
    expect(s.noisy(t + 6000).has('a')).toBe(true);
    expect(s.noisy(t + 5000 + RECENT_MS + 1).has('a')).toBe(false);
  });

  it('counts a message of no group as a tenant of its own: never noisy, never counted', () => {
    const s = new FairQueueState();
    s.hand([undefined, undefined], 0);
    expect(s.noisy(10_000).size).toBe(0);
  });
});

describe('the order of a receive', () => {
  const inFlight = (m: Record<string, number>) => (g: string) => m[g] ?? 0;

  it('hands quiet groups their messages first, in arrival order, then noisy ones', () => {
    const waiting = [{ group: 'n' }, { group: 'n' }, { group: 'q' }, {}, { group: 'n' }, { group: 'q' }];
    expect(pick(waiting, 3, new Set(['n']), inFlight({ n: 40 }))).toEqual([2, 3, 5]);
    // Room left after the quiet ones: noisy messages as usual (they are not throttled).
    expect(pick(waiting, 5, new Set(['n']), inFlight({ n: 40 }))).toEqual([2, 3, 5, 0, 1]);
  });

  it('hands the noisy group with the fewest messages in flight first', () => {
    const waiting = [{ group: 'a' }, { group: 'b' }, { group: 'a' }, { group: 'b' }];
    expect(pick(waiting, 2, new Set(['a', 'b']), inFlight({ a: 50, b: 31 }))).toEqual([1, 3]);
  });

  it('keeps arrival order when nobody is noisy (as fauxqs hands them out)', () => {
    const waiting = [{ group: 'a' }, { group: 'b' }, { group: 'a' }];
    expect(pick(waiting, 10, new Set(), inFlight({}))).toEqual([0, 1, 2]);
  });
});
