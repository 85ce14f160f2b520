/**
 * The fan-out budget's search: the most bindings one publish to a topic a new filter matches can
 * reach, checked against brute force over every topic of a small alphabet.
 */
import fc from 'fast-check';
import { filtersOverlap, maxReach } from '../../lambda/core/rules/fanout-budget';
import { topicMatches } from '../../lambda/core/rules/topics';

describe('maxReach', () => {
  it('adds up the filters one topic matches (the review: 221 queues for one publish)', () => {
    const counts = new Map([['#', 100], ['+/#', 60], ['t/+', 60], ['t/#', 1]]);
    expect(maxReach('t/x', counts)).toBe(222);
    expect(maxReach('u/x', counts)).toBe(161); // `#` and `+/#`
  });

  it('counts every binding of `#` when the filter is `#` itself (a review found 1 for 99), plus the one being made', () => {
    expect(maxReach('#', new Map([['#', 99]]))).toBe(100);
    expect(maxReach('#', new Map([['#', 99], ['a/#', 3]]))).toBe(103);
    expect(maxReach('a/#', new Map([['#', 10], ['a/#', 4]]))).toBe(15);
  });

  it('does not add up filters no single topic matches together', () => {
    const counts = new Map(Array.from({ length: 1000 }, (_, i) => [`orders/${i}`, 1] as [string, number]));
    expect(maxReach('orders/+', counts)).toBe(2);
    expect(maxReach('orders/#', counts)).toBe(2);
    expect(maxReach('a', new Map([['a/#', 5], ['a/+', 7]]))).toBe(6); // `a/#` matches `a`, `a/+` does not
  });

  it('falls back to the sum of overlapping filters, never below the truth, when the search is too long', () => {
    const counts = new Map([['#', 3], ['a/+', 4], ['+/b', 5], ['c/d', 6]]);
    expect(maxReach('+/+', counts)).toBe(13);
    expect(maxReach('+/+', counts, 1)).toBe(19);
  });

  const ALPHABET = ['a', 'b'];
  const level = fc.constantFrom('a', 'b', '+');
  const filter = fc.tuple(fc.array(level, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([ls, hash]) => [...ls, ...(hash ? ['#'] : [])].join('/'));
  const topics = (n: number): string[] => (n === 0 ? [''] : topics(n - 1).flatMap((t) => [...ALPHABET, 'z'].map((l) => (t ? `${t}/${l}` : l))));
  const everyTopic = [1, 2, 3, 4, 5].flatMap(topics);

  it('equals brute force over every topic', () => {
    fc.assert(
      fc.property(filter, fc.array(fc.tuple(filter, fc.integer({ min: 1, max: 9 })), { maxLength: 8 }), (f, list) => {
        const counts = new Map<string, number>();
        for (const [g, n] of list) counts.set(g, (counts.get(g) ?? 0) + n);
        const brute = Math.max(0, ...everyTopic.filter((t) => topicMatches(f, t)).map((t) => [...counts].filter(([g]) => topicMatches(g, t)).reduce((s, [, n]) => s + n, 0)));
        expect(maxReach(f, counts)).toBe(brute + 1);
        for (const [g] of counts) expect(filtersOverlap(f, g)).toBe(everyTopic.some((t) => topicMatches(f, t) && topicMatches(g, t)));
      }),
      { numRuns: 400 },
    );
  });
});
