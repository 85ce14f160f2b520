import { absentPositions, isWholeGap, wholeGap } from '../../lambda/logs/rules/log-gaps';
import { recordGaps, recordSk } from '../../lambda/logs/rules/log-records';

describe('absent positions (whole gaps)', () => {
  it('tells a whole gap from a partial one written before 2026-11-29', () => {
    expect(isWholeGap('5', { s: 4, n: 2, b: 9 })).toBe(true);
    expect(isWholeGap('5', { s: 3, n: 2, b: 9 })).toBe(false);
    expect(wholeGap(7, { count: 3, bytes: 12 })).toEqual({ end: 9, gap: { s: 7, n: 3, b: 12 } });
  });

  it('finds the positions inside the whole gaps of several maps, and none inside partial ones', () => {
    const absent = absentPositions([{ '5': { s: 4, n: 2, b: 9 }, '20': { s: 10, n: 3, b: 1 } }, undefined, { '30': { s: 25, n: 6, b: 1 }, '2': { s: 2, n: 1, b: 1 } }]);
    const hits = Array.from({ length: 40 }, (_, p) => p).filter(absent);
    expect(hits).toEqual([2, 4, 5, 25, 26, 27, 28, 29, 30]);
    expect(absentPositions([{}, undefined])(0)).toBe(false);
  });

  it('names the first position past the gaps, end to end, holding a position', () => {
    const absent = absentPositions([{ '5': { s: 4, n: 2, b: 9 }, '8': { s: 6, n: 3, b: 1 }, '20': { s: 10, n: 3, b: 1 } }]);
    expect([3, 4, 5, 7, 9, 10, 20].map((p) => absent.after(p))).toEqual([3, 9, 9, 9, 9, 10, 20]);
    expect(absentPositions([]).after(7)).toBe(7);
  });

  it('reads the gaps written with records, not with claims', () => {
    const rec = { sk: recordSk(1), s: 3, n: 2, b: 20, c: 30, ra: 9, tok: 't' };
    expect(recordGaps([{ ...rec, g: 2 }, { ...rec, sk: recordSk(2), s: 5, n: 1 }, { ...rec, sk: recordSk(3), s: 6, claim: 1, g: 1 }])).toEqual({ '4': { s: 3, n: 2, b: 20 } });
  });
});
