/**
 * The regular expressions of tenants' schemas (`pattern`, `patternProperties` keys), run on V8's
 * linear-time engine, so that no pattern can hold a publish on the event loop: Irregexp, V8's
 * default engine, backtracks, and `a*a*a*b` against 500 `a`s took 50 to 111 s on Node 22 (cubic;
 * `(a|aa)*c` is exponential). A static ReDoS check cannot refuse every polynomial case.
 *
 * V8's experimental engine runs a RegExp with the `l` flag in time linear in the input (an
 * automaton simulation, https://v8.dev/blog/non-backtracking-regexp), once the flag
 * `--enable-experimental-regexp-engine` is set. Node does not take V8 flags in NODE_OPTIONS
 * beyond a short list, so it is set here, on load, with `v8.setFlagsFromString`
 * (https://nodejs.org/api/v8.html#v8setflagsfromstringflags), before any `l` RegExp is compiled.
 *
 * On Node 22 (V8 12.4) the engine refuses, at construction, what it cannot run in linear time:
 * backreferences, lookaround, a count above 16 (nested counts multiplied: `(a{4}){5}`), and the
 * `u` and `v` flags (the same blog post lists these). A count above 16 on a single character is
 * written out in counts of at most 16 (expandCounts), up to a count of 256; on a group it is
 * refused. JSON Schema means ECMA-262 patterns with the
 * `u` flag (2020-12 Core, section 6.4; Ajv's default `unicodeRegExp`), so a pattern runs without
 * `u` only where that means the same:
 * - it must be valid with `u` (stricter syntax), and may not use what only `u` gives: `\p{…}`,
 *   `\P{…}`, `\u{…}`, characters outside the Basic Multilingual Plane, surrogates (as characters,
 *   `\uD800`-`\uDFFF` escapes or class ranges over them);
 * - without `u`, a character outside the BMP is two code units: the input's surrogate pairs are
 *   replaced by one lone surrogate before matching. Such a pattern cannot name a surrogate or an
 *   astral character, so with `u` every astral character and lone surrogate is matched by exactly
 *   the same parts of it (`.`, `[^…]`, `\S`, `\W`, `\D`), which is what a lone surrogate is
 *   matched by without `u`. `^.{1,3}$` thus counts code points, as JSON Schema means.
 */
import { setFlagsFromString } from 'node:v8';
import { chargePattern, patternShape } from './rules/pattern-cost';

setFlagsFromString('--enable-experimental-regexp-engine');

/** A surrogate pair (one code point outside the BMP) in an input. */
const PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
/** What a pair becomes before matching: a lone surrogate, which the pattern cannot name. */
const ASTRAL = '\uD800';

/**
 * V8 12.4 accepted a lookbehind with `l` in some processes and refused the same one in others
 * (seen on Node 22.23, 2026-11-29), so a lookbehind is refused whatever V8 would say.
 */
const LOOKBEHIND = 'uses a lookbehind, which the linear-time engine does not run reliably';
const isSurrogate = (c: number) => c >= 0xd800 && c <= 0xdfff;
const ESCAPED: Record<string, number> = { n: 10, r: 13, t: 9, v: 11, f: 12, '0': 0 };

/**
 * Why a pattern that is valid with `u` uses what only `u` gives, or a lookbehind, or undefined. Scans escapes and
 * character classes for the code units they name; only class ranges need tracking (a range over
 * the surrogates, like `[\u0000-\uFFFF]`, contains lone surrogates with `u`).
 */
function unsupportedSyntax(pattern: string): string | undefined {
  let inClass = false;
  let rangeFrom: number | undefined;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    let unit: number | undefined;
    if (c === '\\') {
      const e = pattern[++i];
      if (e === 'p' || e === 'P') return `uses \\${e}{…} (a Unicode property escape), which the linear-time engine does not run`;
      if (e === 'u' && pattern[i + 1] === '{') return 'uses \\u{…} (a code point escape): write a character of the Basic Multilingual Plane as \\uXXXX';
      if (e === 'u') {
        unit = parseInt(pattern.slice(i + 1, i + 5), 16);
        i += 4;
        if (isSurrogate(unit)) return 'names a surrogate (\\uD800 to \\uDFFF), which the linear-time engine does not run';
      } else if (e === 'x') {
        unit = parseInt(pattern.slice(i + 1, i + 3), 16);
        i += 2;
      } else if (e === 'c') unit = pattern.charCodeAt(++i) % 32;
      else if (inClass && e === 'b') unit = 8;
      else if (e in ESCAPED) unit = ESCAPED[e];
      else if (!'dDsSwWbBk123456789'.includes(e)) unit = e.charCodeAt(0);
    } else if (!inClass) {
      if (c === '(' && pattern[i + 1] === '?' && pattern[i + 2] === '<' && (pattern[i + 3] === '=' || pattern[i + 3] === '!')) return LOOKBEHIND;
      if (c === '[') {
        inClass = true;
        if (pattern[i + 1] === '^') i++;
      }
      continue;
    } else if (c === ']') {
      inClass = false;
      rangeFrom = undefined;
      continue;
    } else unit = c.charCodeAt(0);
    if (!inClass || unit === undefined) continue;
    if (rangeFrom !== undefined) {
      if (rangeFrom <= 0xdfff && unit >= 0xd800) return 'has a character class range over the surrogates (\\uD800 to \\uDFFF), which the linear-time engine does not run';
      rangeFrom = undefined;
    } else if (pattern[i + 1] === '-' && pattern[i + 2] !== ']') {
      rangeFrom = unit;
      i++;
    }
  }
  return undefined;
}

/** V8's bound on a counted repetition, nested ones multiplied (`kMaxReplication` of its experimental compiler). */
const MAX_REPLICATION = 16;
/** Our bound on the count of a repetition we write out: the engine's work per input character grows with it. */
const MAX_COUNT = 256;

/**
 * The pattern with each count above 16 on a single character (a character, escape, class or `.`)
 * written out in counts of at most 16, which match the same strings: `[A-Z]{3,32}` is
 * `[A-Z]{3}[A-Z]{0,16}[A-Z]{0,13}`, `\d{20,}` is `\d{16}\d{4}\d*`. A count on a group stays (V8
 * multiplies nested counts). Undefined when a count exceeds MAX_COUNT. Takes a pattern valid with
 * `u`, where `{` outside a class always starts a count.
 */
export function expandCounts(pattern: string): string | undefined {
  let out = '';
  let atom: string | undefined;
  for (let i = 0; i < pattern.length; i++) {
    const start = i;
    const c = pattern[i];
    if (c === '\\') {
      const e = pattern[++i];
      if (e === 'u') i += 4;
      else if (e === 'x') i += 2;
      else if (e === 'c') i += 1;
      else if (e === 'k') i = pattern.indexOf('>', i);
    } else if (c === '[') {
      for (i++; pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
    } else if (c === '{') {
      const end = pattern.indexOf('}', i);
      const [min, max] = pattern.slice(i + 1, end).split(',').map((x) => (x === '' ? Infinity : Number(x)));
      i = end;
      const upper = max === undefined ? min : max;
      if (min > MAX_COUNT || (upper !== Infinity && upper > MAX_COUNT)) return undefined;
      if (atom === undefined || (upper === Infinity ? min < MAX_REPLICATION : upper <= MAX_REPLICATION)) {
        out += pattern.slice(start, i + 1);
      } else {
        out = out.slice(0, out.length - atom.length) + counts(atom, min, upper);
      }
      atom = undefined;
      continue;
    }
    const text = pattern.slice(start, i + 1);
    out += text;
    // A single character may take a count we write out; a group, an assertion or a quantifier may not.
    const single = c === '\\' ? !'bBk123456789'.includes(pattern[start + 1]) : !'^$|()*+?'.includes(c);
    atom = single ? text : undefined;
  }
  return out;
}

/** `atom{min,max}` as counts of at most 16 each (`max` Infinity: no upper bound). */
function counts(atom: string, min: number, max: number): string {
  let s = '';
  for (let left = min; left > 0; left -= MAX_REPLICATION) s += `${atom}{${Math.min(left, MAX_REPLICATION)}}`;
  if (max === Infinity) return `${s}${atom}*`;
  for (let left = max - min; left > 0; left -= MAX_REPLICATION) s += `${atom}{0,${Math.min(left, MAX_REPLICATION)}}`;
  return s;
}

/** Why a tenant's pattern is refused, or undefined when it runs on the linear-time engine. */
export function linearPatternProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
  } catch (e) {
    return `is not a valid regular expression (ECMA-262 with the u flag): ${(e as Error).message}`;
  }
  if ([...pattern].some((ch) => ch.length > 1)) return 'has a character outside the Basic Multilingual Plane, which the linear-time engine does not run';
  if ([...pattern].some((ch) => isSurrogate(ch.charCodeAt(0)))) return 'has a lone surrogate, which the linear-time engine does not run';
  const only = unsupportedSyntax(pattern);
  if (only) return only;
  const expanded = expandCounts(pattern);
  if (expanded === undefined) return `has a count above ${MAX_COUNT}: use minLength and maxLength for long strings`;
  try {
    new RegExp(expanded, 'l');
  } catch {
    return 'cannot run in linear time: backreferences, lookahead and a count on a group of more than 16 repetitions in all (nested counts multiply) are refused';
  }
  return undefined;
}

/** A tenant's pattern on the linear-time engine, as Ajv uses it (`test`, and `toString` for its cache key). */
export interface LinearPattern {
  test(s: string): boolean;
  toString(): string;
}

/**
 * Ajv's `code.regExp` (https://ajv.js.org/options.html#code): every pattern Ajv compiles from a
 * schema comes here. Ajv's `u` flag is honoured as described above, never passed to V8. Throws on
 * a pattern the engine cannot run (Ajv's compile then fails): schemas are checked with
 * `linearPatternProblem` where they are written, so only a schema stored before that check
 * meets this at a publish. A pattern safe on V8's default engine (./rules/pattern-cost.ts) runs there,
 * with the `u` flag; every test is charged to the running publish's budget before it runs.
 */
export function linearRegExp(pattern: string, _flags: string): LinearPattern {
  const problem = linearPatternProblem(pattern);
  if (problem) throw new Error(`pattern ${JSON.stringify(pattern)} ${problem}`);
  const shape = patternShape(pattern);
  if (shape.safe) {
    const fast = new RegExp(pattern, 'u');
    return {
      test: (s: string) => {
        chargePattern(pattern, shape, s, s.length);
        return fast.test(s);
      },
      toString: () => String(fast),
    };
  }
  const rx = new RegExp(expandCounts(pattern) as string, 'l');
  return {
    test: (s: string) => {
      const input = s.replace(PAIR, ASTRAL);
      chargePattern(pattern, shape, s, input.length);
      return rx.test(input);
    },
    toString: () => String(rx),
  };
}
linearRegExp.code = 'linearRegExp';
