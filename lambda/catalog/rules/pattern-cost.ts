/**
 * What a tenant's pattern costs to run, judged before it runs, and the budget of pattern work a
 * publish may spend (docs/catalog.md, "Patterns").
 *
 * V8's linear-time engine simulates the pattern's automaton over the whole string: its time is
 * the string's length times the number of automaton threads alive at once, at most the number of
 * character-matching positions of the pattern with its counts written out (its "atoms":
 * `.{0,256}y` has 257, `a*a*a*b` 4). Measured against 256 KiB strings on the loaded 2-core test
 * machine, 0.1 to 1.7 µs per character per atom (`b` 76 ms, `.{0,7}y` 0.93 s, `.{0,256}y` 114 s).
 * An anchored pattern (`^…`) of bounded width stops once every thread has died, so it reads at
 * most its width plus one characters (`^[A-Z0-9-]{3,32}$` against 256 KiB: 0.1 ms).
 *
 * Some patterns cannot backtrack more than linearly on V8's default engine, which is ~50 times
 * faster per test (0.28 µs against 15.6 µs for `^[A-Z0-9-]{3,32}$`): anchored at the start, no
 * alternation, and at most one quantifier whose count varies (`*`, `+`, `?`, `{m,n}`, `{m,}`),
 * on a single character, class, escape or `.`, and not inside a counted group. Such a pattern is
 * tried at the start only, and its one choice point (how many characters the varying quantifier
 * takes) has at most n + 1 alternatives, each checked against the fixed rest of the pattern, so
 * a test is O(n × pattern length); fixed counts (`\d{4}`) offer no choice.
 */

/** What the cost estimate needs of a pattern. */
export interface PatternShape {
  /** Character-matching positions with counts written out (`x{3,32}` is 32, `x+` 2, `x*` 1). */
  atoms: number;
  /** The most characters a match can span; Infinity when unbounded. */
  width: number;
  /** Every match starts at the start of the string (every alternative begins with `^`). */
  anchored: boolean;
  /** Safe on V8's default (backtracking) engine, by the rule above. */
  safe: boolean;
}

/**
 * Units of pattern work a publish may spend: one unit is one character read against one atom.
 * 2^21: a string as long as the largest payload (256 KiB) against an unanchored pattern of 8
 * atoms, 0.2 to 3.6 s at the measured 0.1 to 1.7 µs per unit (0.93 s for `.{0,7}y`).
 */
export const PATTERN_BUDGET = 2 ** 21;

interface Node {
  atoms: number;
  width: number;
  anchored: boolean;
  /** Quantifiers whose count varies, inside. */
  varying: number;
  /** Something inside breaks the default-engine rule (alternation, a varying count on a group, ...). */
  unsafe: boolean;
}

/**
 * The shape of a pattern valid with the `u` flag that ../linear-regexp.ts accepts (no
 * backreference or lookaround reaches here): a recursive descent over alternatives, terms and
 * quantifiers. With `u`, `{` outside a class always starts a count.
 */
export function patternShape(pattern: string): PatternShape {
  let i = 0;
  const alternatives = (): Node => {
    const alts = [sequence()];
    while (pattern[i] === '|') {
      i++;
      alts.push(sequence());
    }
    return {
      atoms: alts.reduce((n, a) => n + a.atoms, 0),
      width: Math.max(...alts.map((a) => a.width)),
      anchored: alts.every((a) => a.anchored),
      varying: alts.reduce((n, a) => n + a.varying, 0),
      unsafe: alts.length > 1 || alts.some((a) => a.unsafe),
    };
  };
  const sequence = (): Node => {
    const seq: Node = { atoms: 0, width: 0, anchored: false, varying: 0, unsafe: false };
    let first = true;
    while (i < pattern.length && pattern[i] !== '|' && pattern[i] !== ')') {
      const c = pattern[i];
      if (c === '^' || c === '$' || (c === '\\' && (pattern[i + 1] === 'b' || pattern[i + 1] === 'B'))) {
        i += c === '\\' ? 2 : 1;
        if (first) seq.anchored = c === '^';
        first = false;
        continue;
      }
      let inner: Node;
      if (c === '(') {
        i++;
        if (pattern[i] === '?') i = pattern[i + 1] === '<' ? pattern.indexOf('>', i) + 1 : i + 2;
        inner = alternatives();
        i++; // ')'
      } else {
        if (c === '[') {
          for (i++; pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
        } else if (c === '\\') {
          const e = pattern[++i];
          i += e === 'u' ? 4 : e === 'x' ? 2 : e === 'c' ? 1 : 0;
        }
        i++;
        inner = { atoms: 1, width: 1, anchored: false, varying: 0, unsafe: false };
      }
      const single = c !== '(';
      let [min, max] = [1, 1];
      const q = pattern[i];
      if (q === '*' || q === '+' || q === '?') {
        [min, max] = q === '*' ? [0, Infinity] : q === '+' ? [1, Infinity] : [0, 1];
        i++;
      } else if (q === '{') {
        const end = pattern.indexOf('}', i);
        const [lo, hi] = pattern.slice(i + 1, end).split(',');
        [min, max] = [Number(lo), hi === undefined ? Number(lo) : hi === '' ? Infinity : Number(hi)];
        i = end + 1;
      }
      if (pattern[i] === '?' && (q === '*' || q === '+' || q === '?' || q === '{')) i++; // lazy
      seq.atoms += inner.atoms * (max === Infinity ? min + 1 : Math.max(max, 1));
      seq.width += max === Infinity ? (inner.width > 0 ? Infinity : 0) : inner.width * max;
      const varies = min !== max;
      seq.varying += inner.varying * (max === Infinity ? 2 : max) + (varies ? 1 : 0);
      seq.unsafe ||= inner.unsafe || (!single && (varies || (max !== 1 && inner.varying > 0)));
      if (first) seq.anchored = !single && min === 1 && max === 1 && inner.anchored;
      first = false;
    }
    return seq;
  };
  const top = alternatives();
  return { atoms: Math.max(top.atoms, 1), width: top.width, anchored: top.anchored, safe: top.anchored && !top.unsafe && top.varying <= 1 };
}

/** Units of work a test of a string of `length` characters costs (PATTERN_BUDGET's unit). */
export function patternCost(shape: PatternShape, length: number): number {
  const read = shape.anchored && shape.width !== Infinity ? Math.min(length, shape.width + 1) : length;
  return read * (shape.safe ? 1 : shape.atoms);
}

/** The pattern work a publish has left; shared by a batch's payloads. */
export interface PatternBudget {
  left: number;
}
export const newPatternBudget = (): PatternBudget => ({ left: PATTERN_BUDGET });

/** Thrown by a pattern's test, before it runs, when its cost exceeds what the budget has left. */
export class PatternBudgetExceeded extends Error {
  constructor(
    readonly input: string,
    readonly pattern: string,
    readonly cost: number,
    readonly left: number,
  ) {
    super(`the pattern ${JSON.stringify(pattern)} would cost ${cost} units on ${input.length} characters, ${left} left of ${PATTERN_BUDGET}`);
  }
}

/** The budget the running validation charges (Ajv's generated code calls `test` with the string only). */
let current: PatternBudget | undefined;

/** Runs `f` with `budget` charged by every pattern test inside it. */
export function withPatternBudget<T>(budget: PatternBudget, f: () => T): T {
  const outer = current;
  current = budget;
  try {
    return f();
  } finally {
    current = outer;
  }
}

/** Forgets the running budget: for a validation stopped by the clock, which runs no `finally`. */
export function clearPatternBudget(): void {
  current = undefined;
}

/** Charges a test to the running budget, or throws PatternBudgetExceeded (nothing is charged outside a budget). */
export function chargePattern(pattern: string, shape: PatternShape, input: string, length: number): void {
  if (!current) return;
  const cost = patternCost(shape, length);
  if (cost > current.left) throw new PatternBudgetExceeded(input, pattern, cost, current.left);
  current.left -= cost;
}
