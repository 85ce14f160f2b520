import { TopicTrie, topicFilterProblem, topicMatches, topicNameProblem } from '../../lambda/core/rules/topics';

describe('topic names', () => {
  it.each(['a', 'a/b/c', 'orders/eu-west-1/created', 'x'.repeat(256), 'sp ace/ü/😀'])('accepts %s', (t) => {
    expect(topicNameProblem(t)).toBeUndefined();
  });
  it.each([
    ['empty', ''],
    ['257 characters', 'x'.repeat(257)],
    ['a leading slash', '/a'],
    ['a trailing slash', 'a/'],
    ['an empty level', 'a//b'],
    ['a plus', 'a/+'],
    ['a hash', 'a/#'],
    ['a NUL', 'a\u0000b'],
    ['a newline', 'a\nb'],
    ['DEL', 'a\u007f'],
  ])('refuses %s', (_label, t) => {
    expect(topicNameProblem(t)).toEqual(expect.any(String));
  });
});

describe('topic filters', () => {
  it.each(['#', '+', 'a', 'a/#', 'a/+/b', '+/+', 'a/+', '+/#', 'a/b/c/#'])('accepts %s', (f) => {
    expect(topicFilterProblem(f)).toBeUndefined();
  });
  it.each(['', 'a/b#', 'a/#/b', 'a+', '+a', 'a//b', '/a', 'a/', '##', 'a/\u0001', 'x'.repeat(257)])('refuses %j', (f) => {
    expect(topicFilterProblem(f)).toEqual(expect.any(String));
  });
});

const CASES: [string, string, boolean][] = [
  ['a/#', 'a', true],
  ['a/#', 'a/b', true],
  ['a/#', 'a/b/c', true],
  ['a/#', 'ab', false],
  ['a/#', 'b/a', false],
  ['#', 'anything/at/all', true],
  ['#', 'x', true],
  ['+', 'x', true],
  ['+', 'x/y', false],
  ['a/+/c', 'a/x/c', true],
  ['a/+/c', 'a/x/y/c', false],
  ['a/+/c', 'a/c', false],
  ['a/+', 'a', false],
  ['a/+', 'a/x', true],
  ['a/+', 'a/x/y', false],
  ['a/b', 'a/b', true],
  ['a/b', 'a/b/c', false],
  ['a/b', 'a', false],
  ['a/+/+/#', 'a/x', false],
  ['a/+/+/#', 'a/x/y', true],
  ['a/+/+/#', 'a/x/y/z/w', true],
  ['+/#', 'a', true],
  ['+/+', 'a/b', true],
  ['+/+', 'a', false],
];

describe('matching', () => {
  it.each(CASES)('filter %s on topic %s is %s', (filter, topic, expected) => {
    expect(topicMatches(filter, topic)).toBe(expected);
    const trie = new TopicTrie<string>().add(filter, filter);
    expect(trie.match(topic)).toEqual(expected ? [filter] : []);
  });

  it('the trie agrees with direct matching for every pair of filters and topics', () => {
    const filters = [...new Set(CASES.map((c) => c[0]))];
    const topics = [...new Set(CASES.map((c) => c[1]))];
    const trie = new TopicTrie<string>();
    filters.forEach((f) => trie.add(f, f));
    for (const t of topics) {
      expect(trie.match(t).sort()).toEqual(filters.filter((f) => topicMatches(f, t)).sort());
    }
  });

  it('returns a value once per filter it was added under, and every value of a shared filter', () => {
    const trie = new TopicTrie<string>().add('a/#', 'q1').add('a/#', 'q2').add('a/b', 'q3');
    expect(trie.match('a/b').sort()).toEqual(['q1', 'q2', 'q3']);
  });

  it('visits a bounded number of nodes whatever the number of unrelated filters', () => {
    const trie = new TopicTrie<number>();
    for (let i = 0; i < 20000; i++) trie.add(`tenant${i}/orders/+`, i);
    expect(trie.size).toBe(20000);
    expect(trie.match('tenant42/orders/created')).toEqual([42]);
    expect(trie.match('nobody/orders/created')).toEqual([]);
  });
});
