/**
 * Regular expressions from tenants' schemas (`pattern`, `patternProperties` keys) run in linear
 * time, on V8's linear-time engine, with the meaning JSON Schema gives them (ECMA-262 with the
 * `u` flag); a pattern that engine cannot run is refused where the schema is written.
 */
import fc from 'fast-check';
import { cacheValidator, payloadViolation, schemaProblem } from '../../lambda/catalog/validators';
import { expandCounts, linearPatternProblem, linearRegExp } from '../../lambda/catalog/linear-regexp';

/**
 * Patterns whose backtracking time grows polynomially or exponentially with the input, an input
 * of each, and whether the pattern matches it (`(\w+\s?)*$` does: with the empty string at its end).
 */
const adversarial: [string, (n: number) => string, boolean][] = [
  ['a*a*a*b', (n) => 'a'.repeat(n), false],
  ['(a|aa)*c', (n) => 'a'.repeat(n), false],
  ['(\\w+\\s?)*$', (n) => `${'a'.repeat(n - 1)}!`, true],
  ['^(\\w+\\s?)*$', (n) => `${'a'.repeat(n - 1)}!`, false],
  ['^[a-z]+(-[a-z]+)*$', (n) => `${'a-'.repeat(n / 2 - 1)}a!`, false],
];

/** Milliseconds `f` takes; generous bounds only (the test machine is shared and loaded). */
function elapsed(f: () => void): number {
  const t = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

describe('patterns of a tenant schema', () => {
  it.each(adversarial)('%s is accepted and runs on the linear-time engine', (p) => {
    expect(schemaProblem({ type: 'string', pattern: p }, undefined)).toBeUndefined();
    expect(schemaProblem({ patternProperties: { [p]: { type: 'integer' } } }, undefined)).toBeUndefined();
    expect(String(linearRegExp(p, 'u'))).toBe(`/${p}/l`);
  });

  it.each(adversarial)('%s judges a 500- and a 50,000-character adversarial string in well under 2 s', (p, input, matches) => {
    const key = `t\u0000redos\u0000${p}`;
    const asPattern = cacheValidator(`${key}\u0000pattern`, { type: 'string', pattern: p });
    const asKey = cacheValidator(`${key}\u0000keys`, { type: 'object', patternProperties: { [p]: { type: 'integer' } }, propertyNames: { pattern: p } });
    for (const n of [500, 50_000]) {
      const s = input(n);
      expect(s).toHaveLength(n);
      let violation: ReturnType<typeof payloadViolation>;
      expect(elapsed(() => (violation = payloadViolation(asPattern, JSON.stringify(s))))).toBeLessThan(2_000);
      expect(violation).toEqual(matches ? undefined : expect.objectContaining({ keyword: 'pattern' }));
      // A matching key's value must be an integer; a key that does not match fails propertyNames.
      expect(elapsed(() => (violation = payloadViolation(asKey, JSON.stringify({ [s]: 'x' }))))).toBeLessThan(2_000);
      expect(violation).toMatchObject({ keyword: matches ? 'type' : 'pattern' });
    }
  });

  it.each([
    ['a backreference', '^(a)\\1$', /\/pattern: .*linear time/],
    ['a named backreference', '^(?<x>a)\\k<x>$', /linear time/],
    ['a lookahead', '^(?=a)\\w+$', /linear time/],
    ['a lookbehind', '(?<=a)b', /lookbehind/],
    ['a negative lookbehind', '(?<!a)b', /lookbehind/],
    ['a count above 16 on a group', '^(ab){17}$', /linear time/],
    ['nested counts above 16 in all', '^(?:[a-f]{4}){5}$', /linear time/],
    ['a count above 256', '^[a-z]{1,257}$', /count above 256/],
    ['a Unicode property escape', '^\\p{L}+$', /\\p\{/],
    ['a code point escape', '^\\u{1F600}$', /\\u\{/],
    ['a character outside the Basic Multilingual Plane', '^😀+$', /outside the Basic Multilingual Plane/],
    ['a surrogate escape', '^\\uD83D$', /surrogate/],
    ['a class range over the surrogates', '^[\\u0000-\\uFFFF]$', /surrogate/],
    ['a pattern that is not valid with the u flag', '^\\-$', /not a valid regular expression/],
  ])('refuses %s with a pointer to it', (_label, p, message) => {
    expect(schemaProblem({ type: 'string', pattern: p }, undefined)).toEqual({ field: 'schema', message: expect.stringMatching(message) });
    expect(schemaProblem({ properties: { a: { patternProperties: { [p]: {} } } } }, undefined)).toEqual({
      field: 'schema',
      message: expect.stringContaining('/properties/a/patternProperties'),
    });
  });

  it.each(['^[a-z]{16}$', '^[0-9a-f]{32}$', '^[A-Z0-9-]{3,32}$', '^\\d{20,}$', '^.{1,256}$', '^(?:[a-f]{4}){4}$', '[(?<=a)]', '\\(?<=a\\)', '^(?<year>\\d{4})-(?<month>\\d{2})$', '^[^\\n]*$', '^\\S+@\\S+$', '\\bword\\b'])(
    'accepts %s',
    (p) => expect(schemaProblem({ type: 'string', pattern: p }, undefined)).toBeUndefined(),
  );

  // The engine runs without the `u` flag; code points outside the Basic Multilingual Plane are
  // still one character each, as JSON Schema means (2020-12 Core, 6.4).
  const accepted = ['^.{1,3}$', '^.$', '^[^a]$', '^\\S\\W\\D$', '^[\\s\\S]{2}$', '^[^]$', '^\\w*$', '^a.b$', '^(?:ab|.)+$', '^[a-z\\u00e9]+.?$', '\\b.\\b'];
  const char = fc.constantFrom('a', 'b', 'z', 'é', '1', '_', ' ', '\n', '\u2028', '😀', '𝒳', '\uD83D', '\uDE00', '\uFFFF');
  it.each(accepted)('%s answers what it answers with the u flag, for strings with astral characters and lone surrogates', (p) => {
    const linear = linearRegExp(p, 'u');
    const unicode = new RegExp(p, 'u');
    expect([linear.test('😀😀😀'), unicode.test('😀😀😀')]).toEqual([unicode.test('😀😀😀'), linear.test('😀😀😀')]);
    fc.assert(
      fc.property(fc.array(char, { maxLength: 6 }), (chars) => {
        const s = chars.join('');
        expect({ s, linear: linear.test(s) }).toEqual({ s, linear: unicode.test(s) });
      }),
      { numRuns: 400, seed: 37 },
    );
  });

  it('refuses publishes with a violation, not an error, when a schema stored before these rules has a pattern the engine cannot run', () => {
    const stored = cacheValidator('t\u0000old\u00001', { type: 'object', properties: { s: { type: 'string', pattern: '^(a)\\1$' } } });
    expect(payloadViolation(stored, '{"s":"aa"}', 2)).toEqual({ index: 2, instance_path: '', keyword: 'schema', schema_path: '#', message: expect.stringMatching(/^the event type's schema cannot be applied: .*linear time.*; change the event type$/) });
  });

  it('counts an astral character as one character and a lone surrogate as one', () => {
    const upTo3 = linearRegExp('^.{1,3}$', 'u');
    expect(['😀😀😀', '😀😀😀😀', '\uD83D\uD83D😀', 'a😀\uDE00'].map((s) => upTo3.test(s))).toEqual([true, false, true, true]);
  });

  it.each(['^[a-c]{3,32}$', '^[a-c]{17}$', '^a{20,}b?$', 'x.{0,40}?y', '^(?:\\.{18}|b{2,19})$', '[^a]{16,17}', '\\u0061{17,18}'])(
    'writes out %s in counts of at most 16 that match the same strings',
    (p) => {
      const expanded = new RegExp(expandCounts(p) as string, 'u');
      const original = new RegExp(p, 'u');
      // No count (lower or upper) above 16 is left.
      expect(expandCounts(p)).not.toMatch(/\{(\d+,)?(1[7-9]|[2-9]\d|\d{3,})\}|\{(1[7-9]|[2-9]\d|\d{3,}),\}/);
      const lengths = fc.integer({ min: 0, max: 45 });
      fc.assert(
        fc.property(lengths, fc.constantFrom('a', 'b', 'x', 'y', '.'), lengths, fc.constantFrom('', 'b', 'y', 'c'), (n, c, m, tail) => {
          const s = `${'a'.repeat(n)}${c}${'a'.repeat(m)}${tail}`;
          expect({ s, expanded: expanded.test(s) }).toEqual({ s, expanded: original.test(s) });
        }),
        { numRuns: 500, seed: 40 },
      );
    },
  );

  it('accepts or refuses any pattern without throwing, and an accepted one answers what it answers with the u flag', () => {
    const token = fc.constantFrom(
      ...['a', 'b', '.', '-', '\\d', '\\w', '\\S', '\\W', '\\b', '\\.', '\\-', '[ab]', '[^a]', '[a-c\\]]', '[\\b-]', '\\u0061', '\\x62', '\\cJ', '\\0'],
      ...['(', ')', '(?:', '(?<n>', '(?=', '(?<=', '|', '*', '+', '?', '{2}', '{0,17}', '{17,}', '{1,3}', '^', '$', '\\1', '😀', '\\p{L}', '\\u{61}', '[\\u0000-\\uFFFF]'],
    );
    const unicodeValid = (p: string) => {
      try {
        return new RegExp(p, 'u') !== undefined;
      } catch {
        return false;
      }
    };
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 8 }).map((t) => t.join('')).filter(unicodeValid), fc.array(fc.array(char, { maxLength: 8 }), { maxLength: 5 }), (p, inputs) => {
        if (linearPatternProblem(p) !== undefined) return;
        const linear = linearRegExp(p, 'u');
        const unicode = new RegExp(p, 'u');
        for (const s of inputs.map((c) => c.join(''))) expect({ p, s, linear: linear.test(s) }).toEqual({ p, s, linear: unicode.test(s) });
      }),
      { numRuns: 2_000, seed: 41 },
    );
  });
});
