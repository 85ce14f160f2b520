/**
 * The event catalog's pure rules: which event type applies to a topic (a model-based check of the
 * specificity rule against match sets), schema acceptance (meta-schema, references, patterns,
 * examples), the violations a payload gets, and tenants' schemas kept apart on the one Ajv.
 */
import fc from 'fast-check';
import { compareSpecificity, mostSpecific, patchedConfig } from '../../lambda/catalog/rules/event-types';
import { TopicTrie, topicMatches } from '../../lambda/core/rules/topics';
import { applicableEntry } from '../../lambda/catalog/enforce';
import { channelIds } from '../../lambda/catalog/rules/asyncapi';
import { schemaProblem, cacheValidator, payloadViolation } from '../../lambda/catalog/validators';

/** Every topic of 1 to 4 levels over {a, b}: the universe the match sets are computed over. */
const UNIVERSE: string[] = [];
for (let n = 1; n <= 4; n++) {
  const grow = (prefix: string[]): void => {
    if (prefix.length === n) {
      UNIVERSE.push(prefix.join('/'));
      return;
    }
    for (const l of ['a', 'b']) grow([...prefix, l]);
  };
  grow([]);
}
const matchSet = (name: string) => new Set(UNIVERSE.filter((t) => topicMatches(name, t)));
const strictSubset = (a: Set<string>, b: Set<string>) => a.size < b.size && [...a].every((x) => b.has(x));

const level = fc.constantFrom('a', 'b', '+');
const name = fc.tuple(fc.array(level, { minLength: 0, maxLength: 4 }), fc.boolean()).map(([levels, hash]) => (hash || levels.length === 0 ? [...levels, '#'] : levels).join('/'));
const topic = fc.constantFrom(...UNIVERSE);

describe('which event type applies to a topic', () => {
  it.each([
    [['orders/#', 'orders/created', '#'], 'orders/created', 'orders/created'],
    [['orders/#', 'orders/+'], 'orders/created', 'orders/+'],
    [['orders/#', 'orders/created/#'], 'orders/created/eu', 'orders/created/#'],
    [['a/+', '+/b'], 'a/b', 'a/+'],
    [['a/#', 'a'], 'a', 'a'],
    [['#', 'a/#'], 'a', 'a/#'],
    [['a/+/c', 'a/#'], 'a/b/c', 'a/+/c'],
  ])('of %j for %s picks %s', (names, t, want) => {
    const matching = names.filter((n) => topicMatches(n, t));
    expect(mostSpecific(matching)).toBe(want);
    expect(mostSpecific([...matching].reverse())).toBe(want);
  });

  it('picks one of the matching names that no other matching name is strictly narrower than, whatever the order (model: match sets)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 8 }), topic, (names, t) => {
        const trie = new TopicTrie<{ name: string }>();
        for (const n of names) trie.add(n, { name: n });
        const matching = names.filter((n) => topicMatches(n, t));
        const chosen = applicableEntry(trie, t)?.name;
        if (matching.length === 0) return chosen === undefined;
        expect(chosen).toBeDefined();
        expect(matching).toContain(chosen);
        // The exact topic, when it is an event type, always applies.
        if (matching.includes(t)) expect(chosen).toBe(t);
        const own = matchSet(chosen as string);
        for (const other of matching) expect({ other, narrower: strictSubset(matchSet(other), own) }).toEqual({ other, narrower: false });
        // The trie's pick is the reference's (a plain scan), and the same for any order of creation.
        expect(chosen).toBe(mostSpecific(matching));
        expect(mostSpecific([...matching].reverse())).toBe(chosen);
        return true;
      }),
      { numRuns: 500, seed: 37 },
    );
  });

  it('never ties two different names that match the same topic', () => {
    fc.assert(
      fc.property(name, name, topic, (a, b, t) => {
        fc.pre(a !== b && topicMatches(a, t) && topicMatches(b, t));
        expect(Math.sign(compareSpecificity(a, b))).toBe(-Math.sign(compareSpecificity(b, a)));
        expect(compareSpecificity(a, b)).not.toBe(0);
      }),
      { numRuns: 500, seed: 38 },
    );
  });
});

describe('schemas an event type may have', () => {
  const order = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 }, email: { type: 'string', format: 'email' } } };

  it('accepts a draft 2020-12 schema and examples that satisfy it, as JSON text or values', () => {
    expect(schemaProblem(order, ['{"id":1}', { id: 2, email: 'a@example.com' }])).toBeUndefined();
    expect(schemaProblem({ $schema: 'https://json-schema.org/draft/2020-12/schema', $defs: { id: { type: 'integer' } }, prefixItems: [{ $ref: '#/$defs/id' }] }, undefined)).toBeUndefined();
  });

  it.each([
    ['not a valid schema', { type: 'nope' }, /not a valid JSON Schema/],
    ['another draft', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }, /draft 2020-12/],
    ['a reference to another document', { properties: { a: { $ref: 'https://example.com/a.json' } } }, /\/properties\/a\/\$ref: only references within the schema/],
    ['a nested $id', { $defs: { a: { $id: 'a.json', type: 'string' } } }, /nested \$id/],
    ['a reference that does not resolve', { $ref: '#/$defs/missing' }, /does not compile/],
    // More patterns: test/unit/catalog-patterns.test.ts.
    ['a pattern the linear-time engine cannot run', { type: 'string', pattern: '^(a)\\1$' }, /\/pattern: the pattern cannot run in linear time/],
    ['a patternProperties key the linear-time engine cannot run', { patternProperties: { '(?=x)y': {} } }, /\/patternProperties: the pattern "\(\?=x\)y" cannot run in linear time/],
    // Ajv compares object items pairwise: 20,000 objects took 31 s (https://ajv.js.org/security.html).
    ['uniqueItems over objects without a small maxItems', { type: 'array', uniqueItems: true, maxItems: 5000 }, /uniqueItems.*maxItems/],
  ])('refuses %s on the field schema', (_label, schema, message) => {
    expect(schemaProblem(schema as Record<string, unknown>, undefined)).toEqual({ field: 'schema', message: expect.stringMatching(message) });
  });

  it('accepts uniqueItems over scalar items, or bounded by a small maxItems', () => {
    expect(schemaProblem({ type: 'array', uniqueItems: true, items: { type: 'string' } }, undefined)).toBeUndefined();
    expect(schemaProblem({ type: 'array', uniqueItems: true, maxItems: 100 }, undefined)).toBeUndefined();
  });

  it('refuses an example that fails the schema, or a string example that is not JSON, naming it', () => {
    expect(schemaProblem(order, [{ id: 1 }, { id: 0 }])).toEqual({ field: 'examples.1', message: expect.stringContaining('/id must be >= 1 (minimum)') });
    expect(schemaProblem(order, ['{id:1}'])).toEqual({ field: 'examples.0', message: expect.stringContaining('not JSON') });
  });

  it('keeps schemas with the same $id apart, and leaves nothing of them on the shared Ajv', () => {
    const a = cacheValidator('t1\u0000x\u00001', { $id: 'https://example.com/same.json', type: 'string' });
    const b = cacheValidator('t2\u0000x\u00001', { $id: 'https://example.com/same.json', type: 'integer' });
    expect([a('s'), a(1), b(1), b('s')]).toEqual([true, false, true, false]);
    // A third tenant referring to that $id finds nothing: the reference is refused outright.
    expect(schemaProblem({ $ref: 'https://example.com/same.json' }, undefined)).toMatchObject({ field: 'schema' });
  });
});

describe('payload violations', () => {
  const v = cacheValidator('t\u0000orders/#\u00001', { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, lines: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer', minimum: 1 } } } } } });

  it('names the JSON path (instancePath) and keyword of the first failure', () => {
    expect(payloadViolation(v, '{"id":1,"lines":[{"qty":1},{"qty":0}]}')).toEqual({ instance_path: '/lines/1/qty', keyword: 'minimum', schema_path: '#/properties/lines/items/properties/qty/minimum', message: 'must be >= 1' });
    expect(payloadViolation(v, '{}', 3)).toMatchObject({ index: 3, instance_path: '', keyword: 'required' });
    expect(payloadViolation(v, 'not json')).toMatchObject({ keyword: 'json', message: 'is not valid JSON' });
    expect(payloadViolation(v, '{"id":7}')).toBeUndefined();
  });

  it('answers a violation, not a stack overflow, for a payload nested too deeply for a recursive schema', () => {
    const nested = cacheValidator('t\u0000deep\u00001', { $defs: { n: { type: 'array', items: { $ref: '#/$defs/n' } } }, $ref: '#/$defs/n' });
    const depth = 120_000;
    expect(payloadViolation(nested, '['.repeat(depth) + ']'.repeat(depth), 4)).toEqual({ index: 4, instance_path: '', keyword: 'depth', schema_path: '', message: 'nests too deeply to be validated' });
  });
});

describe('PATCH of an event type', () => {
  it('keeps what the patch leaves out and clears what it sets to null', () => {
    const stored = { description: 'd', schema: { type: 'object' }, enforce: true, examples: [1] };
    expect(patchedConfig(stored, { enforce: false })).toEqual({ ...stored, enforce: false });
    expect(patchedConfig(stored, { schema: null, enforce: false, examples: null })).toEqual({ description: 'd', enforce: false });
  });
});

describe('AsyncAPI channel ids', () => {
  it('are unique and within the AsyncAPI key pattern for any set of names', () => {
    const level = fc.oneof(fc.constantFrom('+', '#', 'a', 'a_b', 'a-b', 'a.b', 'ü', '_', '-'), fc.string({ minLength: 1, maxLength: 4 }).filter((l) => !l.includes('/')));
    fc.assert(
      fc.property(fc.uniqueArray(fc.array(level, { minLength: 1, maxLength: 3 }).map((l) => l.join('/')), { maxLength: 12 }), (names) => {
        const ids = channelIds(names);
        expect(new Set(ids.values()).size).toBe(names.length);
        for (const id of ids.values()) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
      }),
      { numRuns: 300, seed: 39 },
    );
  });
});
