/**
 * The budget of pattern work per publish (docs/catalog.md, "Patterns"): each pattern test is
 * charged its string's length times the pattern's size before it runs; a pattern that could
 * exceed the budget on one string is refused when the schema is written; safe patterns run on
 * V8's default engine.
 */
import { cacheValidator, newPatternBudget, payloadViolation, schemaProblem } from '../../lambda/catalog/validators';
import { linearRegExp } from '../../lambda/catalog/linear-regexp';
import { PATTERN_BUDGET, patternCost, patternShape } from '../../lambda/catalog/rules/pattern-cost';

const LARGEST = 256 * 1024;

describe('the pattern budget when a schema is written', () => {
  it('refuses .{0,256}y without maxLength, saying what to do, and accepts it with a maxLength that fits', () => {
    expect(schemaProblem({ type: 'object', properties: { s: { type: 'string', pattern: '.{0,256}y' } } }, undefined)).toEqual({
      field: 'schema',
      message: expect.stringMatching(/^\/properties\/s\/pattern: the pattern could cost \d+ units .*over the budget .*add maxLength to the schema, or shorten the pattern/),
    });
    expect(schemaProblem({ patternProperties: { '.{0,256}y': {} } }, undefined)).toEqual({ field: 'schema', message: expect.stringContaining('/patternProperties: the pattern ".{0,256}y" could cost') });
    expect(schemaProblem({ type: 'string', maxLength: 8000, pattern: '.{0,256}y' }, undefined)).toBeUndefined();
    expect(schemaProblem({ propertyNames: { maxLength: 8000 }, patternProperties: { '.{0,256}y': {} } }, undefined)).toBeUndefined();
  });

  it('accepts common patterns with or without maxLength', () => {
    for (const pattern of ['^[A-Z0-9-]{3,32}$', '^[0-9a-f]{32}$', '^\\d{4}-\\d{2}-\\d{2}$', '^.{1,256}$', '^\\S+@\\S+$', '^[a-z]+(-[a-z]+)*$', 'a*a*a*b']) {
      expect({ pattern, problem: schemaProblem({ type: 'string', pattern }, undefined) }).toEqual({ pattern, problem: undefined });
    }
  });

  it('refuses at the boundary: a pattern of 8 atoms passes on the largest string, 9 do not, 9 with a maxLength that fits pass', () => {
    expect(patternCost(patternShape('.{0,7}y'), LARGEST)).toBe(PATTERN_BUDGET);
    expect(schemaProblem({ type: 'string', pattern: '.{0,7}y' }, undefined)).toBeUndefined();
    expect(schemaProblem({ type: 'string', pattern: '.{0,8}y' }, undefined)?.message).toMatch(/over the budget/);
    expect(schemaProblem({ type: 'string', pattern: '.{0,8}y', maxLength: Math.floor(PATTERN_BUDGET / 9) }, undefined)).toBeUndefined();
    expect(schemaProblem({ type: 'string', pattern: '.{0,8}y', maxLength: Math.floor(PATTERN_BUDGET / 9) + 1 }, undefined)?.message).toMatch(/its maxLength of \d+, over the budget/);
  });
});

describe('the pattern budget at a publish', () => {
  // Strings of 16-atom `.{0,15}y` with a maxLength, so the schema is accepted; a payload of several shares the budget.
  const schema = { type: 'array', items: { type: 'string', maxLength: 65_537, pattern: '.{0,15}y' } };
  const y = (n: number) => `${'a'.repeat(n - 1)}y`;
  const half = PATTERN_BUDGET / 16 / 2;

  it('passes just under the budget and refuses just over it, naming the string and what to do', () => {
    expect(schemaProblem(schema, undefined)).toBeUndefined();
    const validate = cacheValidator('t\u0000budget\u00001', schema);
    expect(payloadViolation(validate, JSON.stringify([y(half), y(half)]))).toBeUndefined();
    expect(payloadViolation(validate, JSON.stringify([y(half), y(half + 1)]), 3)).toEqual({
      index: 3,
      instance_path: '/1',
      keyword: 'budget',
      schema_path: '',
      message: expect.stringMatching(/^would cost \d+ units of pattern matching .*add maxLength to the schema, or shorten the pattern$/),
    });
  });

  it('shares one budget between the payloads of a batch', () => {
    const validate = cacheValidator('t\u0000budget\u00002', schema);
    const budget = newPatternBudget();
    expect(payloadViolation(validate, JSON.stringify([y(half)]), 0, budget)).toBeUndefined();
    expect(payloadViolation(validate, JSON.stringify([y(half)]), 1, budget)).toBeUndefined();
    expect(payloadViolation(validate, JSON.stringify({ k: y(1) }), 2, budget)).toMatchObject({ index: 2, keyword: 'type' });
    expect(payloadViolation(validate, JSON.stringify([y(1)]), 3, budget)).toMatchObject({ index: 3, instance_path: '/0', keyword: 'budget' });
  });

  it('refuses an example over the budget on the field examples.N', () => {
    // Each example has a budget of its own: the second one's first string would exceed a budget
    // shared with the first (refused at /0), its second string exceeds its own (/1). One budget of
    // matching runs in all, where three halves ran past validation's 5 s of wall time
    // (VALIDATION_TIME_MS) on loaded cores.
    expect(schemaProblem(schema, [[y(half)], [y(half + 1), y(half)]])).toEqual({ field: 'examples.1', message: expect.stringMatching(/^\/1 would cost/) });
  });

  it('names a key that exceeds it', () => {
    const validate = cacheValidator('t\u0000budget\u00003', { type: 'object', propertyNames: { maxLength: 65_537 }, patternProperties: { '.{0,15}y': { type: 'integer' } } });
    expect(payloadViolation(validate, JSON.stringify({ [y(half)]: 1, b: { [y(half + 1)]: 1 }, [y(half + 1)]: 1 }))).toMatchObject({ instance_path: `/${y(half + 1)}`, keyword: 'budget' });
  });
});

describe('patterns safe on the default engine', () => {
  it.each(['^[A-Z0-9-]{3,32}$', '^[0-9a-f]{32}$', '^\\d{20,}$', '^(?<year>\\d{4})-(?<month>\\d{2})$', '^(?:[a-f]{4}){4}$', '^[^\\n]*$', '^a+?b$', '^.{1,3}$', '^(a+)$'])('%s runs there, with the u flag', (p) => {
    expect(patternShape(p).safe).toBe(true);
    expect(String(linearRegExp(p, 'u'))).toBe(`/${p}/u`);
  });

  it.each(['a*a*a*b', '^(\\w+\\s?)*$', '^\\S+@\\S+$', '^a|^b', '^(a|b)$', '^(a+)+$', '^(a{2}){0,3}$', '^(a{1,2}){3}$', '^a?a?$', 'abc', '\\b^a+$', '(^a+)?$'])('%s stays on the linear-time engine', (p) => {
    expect(patternShape(p).safe).toBe(false);
    expect(String(linearRegExp(p, 'u'))).toMatch(/\/l$/);
  });

  it.each(['^\\d{20,}$', '^a+?b$', '^[^\\n]*$', '^(a+)$', '^[a-z]*[a-z]{16}$', '^.*?x'])('%s judges 50,000 adversarial characters in well under 2 s on the default engine', (p) => {
    const rx = linearRegExp(p, 'u');
    for (const s of [`${'a'.repeat(50_000)}!`, `${'1'.repeat(50_000)}!`]) {
      const t = process.hrtime.bigint();
      expect(rx.test(s)).toBe(new RegExp(p, 'u').test(s));
      expect(Number(process.hrtime.bigint() - t) / 1e6).toBeLessThan(2_000);
    }
  });

  it('sizes patterns as the engine runs them', () => {
    expect(['.{0,256}y', 'a*a*a*b', '^[A-Z0-9-]{3,32}$', '^\\d{20,}$', '^(?:[a-f]{4}){4}$', 'x+'].map((p) => patternShape(p).atoms)).toEqual([257, 4, 32, 21, 16, 2]);
    expect(patternShape('^[A-Z0-9-]{3,32}$')).toMatchObject({ width: 32, anchored: true });
    expect(patternCost(patternShape('^[A-Z0-9-]{3,32}$'), LARGEST)).toBe(33);
    expect(patternCost(patternShape('^[a-z]+$'), LARGEST)).toBe(LARGEST);
    expect(patternCost(patternShape('a*a*a*b'), 1000)).toBe(4000);
  });
});
