/**
 * Topic names and MQTT 5 topic filters (DESIGN.md section 4; OASIS MQTT 5.0, section 4.7).
 *
 * - A topic name is 1 to 256 characters of `/`-separated levels: no empty level, no `+` or `#`,
 *   no control characters.
 * - In a filter, `+` matches exactly one level and `#` any number of levels including zero (so
 *   `a/#` matches `a`); each must occupy a whole level and `#` must be the last level.
 */

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const MAX_TOPIC_LENGTH = 256;

/** Why a topic name is invalid, or undefined when it is valid. */
export function topicNameProblem(topic: string): string | undefined {
  if (topic.length === 0) return 'must not be empty';
  if (topic.length > MAX_TOPIC_LENGTH) return `must be at most ${MAX_TOPIC_LENGTH} characters`;
  if (CONTROL.test(topic)) return 'must not contain control characters';
  if (/[+#]/.test(topic)) return 'must not contain the wildcards + or #';
  if (topic.split('/').some((l) => l === '')) return 'must not have empty levels (leading, trailing or double /)';
  return undefined;
}

/** Why a topic filter is invalid, or undefined when it is valid. */
export function topicFilterProblem(filter: string): string | undefined {
  if (filter.length === 0) return 'must not be empty';
  if (filter.length > MAX_TOPIC_LENGTH) return `must be at most ${MAX_TOPIC_LENGTH} characters`;
  if (CONTROL.test(filter)) return 'must not contain control characters';
  const levels = filter.split('/');
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i];
    if (l === '') return 'must not have empty levels';
    if (l.includes('#') && (l !== '#' || i !== levels.length - 1)) return '# must be a whole level and the last one';
    if (l.includes('+') && l !== '+') return '+ must be a whole level';
  }
  return undefined;
}

/**
 * Whether `topic` matches `filter`, by direct comparison. The reference the trie is tested against.
 * @example topicMatches('a/#', 'a') // true
 */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

interface TrieNode<T> {
  children: Map<string, TrieNode<T>>;
  /** Values whose filter ends at this node. */
  here: T[];
  /** Values whose filter ends with `#` below this node. */
  hash: T[];
}

const node = <T>(): TrieNode<T> => ({ children: new Map(), here: [], hash: [] });

/**
 * An index of filters: matching a topic walks at most (levels × 2) branches, so its cost depends
 * on the topic's depth and the number of matches, not on how many filters the namespace has.
 */
export class TopicTrie<T> {
  private readonly root: TrieNode<T> = node();
  size = 0;

  add(filter: string, value: T): this {
    let n = this.root;
    for (const level of filter.split('/')) {
      if (level === '#') {
        n.hash.push(value);
        this.size++;
        return this;
      }
      let next = n.children.get(level);
      if (!next) n.children.set(level, (next = node()));
      n = next;
    }
    n.here.push(value);
    this.size++;
    return this;
  }

  /** Every value whose filter matches `topic` (each once per filter it was added under). */
  match(topic: string): T[] {
    const levels = topic.split('/');
    const out: T[] = [];
    const walk = (n: TrieNode<T>, i: number) => {
      // `#` matches the parent level too (`a/#` matches `a`), so collect it before descending.
      out.push(...n.hash);
      if (i === levels.length) {
        out.push(...n.here);
        return;
      }
      const exact = n.children.get(levels[i]);
      if (exact) walk(exact, i + 1);
      const plus = n.children.get('+');
      if (plus) walk(plus, i + 1);
    };
    walk(this.root, 0);
    return out;
  }
}
