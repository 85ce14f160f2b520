/**
 * Bounds on the work a schema can make a publish do, checked when the schema is written:
 * references that multiply at one place of the payload (lambda/catalog/rules/schema-expansion.ts) and
 * the size of an `enum` (lambda/catalog/validators.ts).
 */
import { expansionProblem, MAX_VISITS_PER_LOCATION } from '../../lambda/catalog/rules/schema-expansion';
import { cacheValidator, MAX_ENUM_VALUES, payloadViolation, schemaProblem } from '../../lambda/catalog/validators';

/** A chain of `depth` definitions, each applying the one below `fan` times with `keyword`. */
function chain(depth: number, fan: number, keyword = 'allOf') {
  const $defs: Record<string, object> = { d0: { type: 'string' } };
  for (let i = 1; i <= depth; i++) $defs[`d${i}`] = { [keyword]: Array.from({ length: fan }, () => ({ $ref: `#/$defs/d${i - 1}` })) };
  return { $ref: `#/$defs/d${depth}`, $defs };
}

describe('references that multiply at one place of the payload', () => {
  // Each level is its node and two {$ref} nodes: 11 doublings are 8,189 subschemas, 12 are 16,381.
  it('counts paths with memoisation: 11 doublings pass, 12 are refused, 40 answer at once naming the place', () => {
    expect(expansionProblem(chain(11, 2))).toBeUndefined();
    expect(expansionProblem(chain(12, 2))).toMatch(/16381 subschemas/);
    const problem = expansionProblem(chain(40, 2, 'anyOf'));
    expect(problem).toMatch(/^\/\$defs\/d\d+\/anyOf\/\d+: .*over the bound of 10000/);
    expect(MAX_VISITS_PER_LOCATION).toBe(10_000);
  });

  it('refuses a cycle of references that never descends into the payload, also through anchors and not', () => {
    expect(expansionProblem({ $dynamicRef: '#meta', $dynamicAnchor: 'meta' })).toMatch(/refers to itself/);
    expect(expansionProblem({ $defs: { a: { $anchor: 'a', not: { $ref: '#/$defs/b' } }, b: { allOf: [{ $ref: '#a' }] } } })).toMatch(/refers to itself/);
    expect(schemaProblem({ $ref: '#/$defs/a', $defs: { a: { oneOf: [{ $ref: '#/$defs/a' }] } } }, undefined)?.field).toBe('schema');
  });

  it('accepts recursion through properties and items (each step consumes the payload) and wide fan-out of one level', () => {
    expect(expansionProblem({ type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } }, next: { $ref: '#' } } })).toBeUndefined();
    expect(expansionProblem({ anyOf: Array.from({ length: 500 }, (_, i) => ({ const: i })) })).toBeUndefined();
  });

  it('a schema stored before the bound refuses publishes with a reason instead of holding them', () => {
    const v = cacheValidator('bounds\0old\x001', chain(34, 2));
    const t = Date.now();
    const violation = payloadViolation(v, '"x"');
    expect(violation?.keyword).toBe('schema');
    expect(violation?.message).toMatch(/cannot be applied: .*over the bound/);
    expect(Date.now() - t).toBeLessThan(60_000); // 2^34 evaluations would take minutes
  });
});

describe('enum size', () => {
  it(`accepts ${MAX_ENUM_VALUES} values and refuses one more on schema, naming the place`, () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => [i, 'v']);
    expect(schemaProblem({ items: { enum: values(MAX_ENUM_VALUES) } }, undefined)).toBeUndefined();
    const problem = schemaProblem({ items: { enum: values(MAX_ENUM_VALUES + 1) } }, undefined);
    expect(problem?.field).toBe('schema');
    expect(problem?.message).toMatch(/^\/items\/enum: .*at most 256/);
  });
});

describe('references spelled differently', () => {
  it('are one subschema: a cycle through an escaped pointer is still found', () => {
    expect(expansionProblem({ $defs: { a: { allOf: [{ $ref: '#/%24defs/a' }] } } })).toMatch(/refers to itself/);
  });
});
