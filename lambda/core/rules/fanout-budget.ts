/**
 * The fan-out budget: how many bindings one publish can reach across every filter it matches.
 * The cap per filter bounds one filter, but filters that match the same topic add up (100 queues
 * on `#`, 60 on `+/#`, 60 on `t/+` and 1 on `t/#` made one publish write to 221 queues), so a
 * create that adds a binding is refused when some topic its filter matches would then reach more
 * than the namespace's `bindings-per-publish` (./resource-limits.ts). Pure.
 */
import { ApiError } from './errors';

interface Bound {
  levels: string[];
  n: number;
}

/** A level no filter names: a topic level only `+` and `#` match. */
const FRESH = '\u0000';

/** Search nodes before {@link maxReach} settles for its upper bound (a pathological namespace). */
const SEARCH_NODES = 50_000;

/**
 * Whether some topic matches both filters.
 * @example filtersOverlap('a/+', '+/b') // true
 * @example filtersOverlap('a/b', 'a/c') // false
 */
export function filtersOverlap(a: string, b: string): boolean {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; ; i++) {
    if (x[i] === '#' || y[i] === '#') return true;
    if (i === x.length || i === y.length) return x.length === y.length;
    if (x[i] !== '+' && y[i] !== '+' && x[i] !== y[i]) return false;
  }
}

/**
 * The most bindings a publish to a topic `filter` matches reaches once one more binding of
 * `filter` is added, given the namespace's bindings per filter (`counts`). Exact (a search over
 * the topics that tell the filters apart), or, past {@link SEARCH_NODES} steps, the sum of every
 * filter that overlaps `filter`: never below the truth.
 * @example maxReach('t/x', new Map([['#', 100], ['+/#', 60], ['t/+', 60], ['t/#', 1]])) // 222
 * @example maxReach('orders/+', new Map([['orders/1', 1], ['orders/2', 1]])) // 2
 */
export function maxReach(filter: string, counts: ReadonlyMap<string, number>, nodes = SEARCH_NODES): number {
  const target = filter.split('/');
  const bound: Bound[] = [...counts].filter(([f, n]) => n > 0 && filtersOverlap(f, filter)).map(([f, n]) => ({ levels: f.split('/'), n }));
  const upper = 1 + bound.reduce((s, b) => s + b.n, 0);
  let steps = 0;
  let best = 0;
  // `alive`: filters whose levels so far match the topic being built; `acc`: weight of those
  // already matched through `#`; `done`: `filter` itself matched through `#`.
  const search = (i: number, alive: Bound[], acc: number, done: boolean): void => {
    if (++steps > nodes) throw new RangeError('search budget');
    const hashed = alive.filter((b) => b.levels[i] === '#');
    if (hashed.length) {
      acc += hashed.reduce((s, b) => s + b.n, 0);
      alive = alive.filter((b) => b.levels[i] !== '#');
    }
    done ||= target[i] === '#';
    if (acc + alive.reduce((s, b) => s + b.n, 0) <= best) return; // cannot beat what is found
    if (i >= 1 && (done || target.length === i)) best = Math.max(best, acc + alive.filter((b) => b.levels.length === i).reduce((s, b) => s + b.n, 0));
    if (!done && target.length <= i) return;
    const longer = alive.filter((b) => b.levels.length > i);
    // `filter` ends here in `#` and nothing longer is alive: a topic one level past this prefix
    // reaches every filter matched through `#` so far (`#` alone: all of them).
    if (done && !longer.length) {
      best = Math.max(best, acc);
      return;
    }
    const plus: Bound[] = [];
    const byLevel = new Map<string, Bound[]>();
    for (const b of longer) {
      if (b.levels[i] === '+') plus.push(b);
      else if (byLevel.has(b.levels[i])) byLevel.get(b.levels[i])?.push(b);
      else byLevel.set(b.levels[i], [b]);
    }
    const fixed = !done && target[i] !== '+' ? target[i] : undefined;
    const literals = fixed !== undefined ? [fixed] : [...byLevel.keys(), FRESH];
    for (const x of literals) search(i + 1, [...plus, ...(byLevel.get(x) ?? [])], acc, done);
  };
  try {
    search(0, bound, 0, false);
  } catch (e) {
    if (e instanceof RangeError) return upper;
    throw e;
  }
  return best + 1;
}

/** 409 LIMIT_EXCEEDED: one more binding of `topicFilter` would let one publish reach more than the cap. */
export function fanoutLimitExceeded(topicFilter: string, reach: number, limit: number): ApiError {
  return new ApiError(
    409,
    'LIMIT_EXCEEDED',
    `A publish to a topic "${topicFilter}" matches would reach ${reach} queues, streams, subscriptions and webhooks across all the filters it matches; the limit is ${limit} per publish. Use a narrower filter, delete some of them, or ask an operator to raise it (npm run admin -- resource-limit set <namespace> bindings-per-publish <n>).`,
    { limit, resource: 'bindings-per-publish', topic_filter: topicFilter, reach },
  );
}
