/**
 * The clock behind the catalog's static bounds: a schema whose references multiply across levels
 * of the payload (each level applies the root twice) passes the create-time analysis, which counts
 * subschemas at one place only, and a payload 40 levels deep would take 2^40 evaluations (22
 * levels took 140 ms, each level doubling it: hours at 40). The
 * publish must answer, refusing that payload, within the time limit.
 */
import { cacheValidator, payloadsViolations, schemaProblem } from '../../lambda/catalog/validators';

const doubling = { $defs: { n: { allOf: [{ $ref: '#/$defs/a' }, { $ref: '#/$defs/a' }] }, a: { properties: { c: { $ref: '#/$defs/n' } } } }, $ref: '#/$defs/n' };
const nested = (depth: number): string => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { c: v };
  return JSON.stringify(v);
};

test('a payload that would take 2^40 evaluations is refused within the time limit, naming the message', () => {
  expect(schemaProblem(doubling, undefined)).toBeUndefined();
  const validate = cacheValidator('time-limit-doubling', doubling);
  const t0 = Date.now();
  const violations = payloadsViolations(validate, ['{"c":1}', nested(40)], true, 300);
  expect(Date.now() - t0).toBeLessThan(20_000);
  expect(violations).toEqual([expect.objectContaining({ index: 1, keyword: 'time', instance_path: '' })]);
  expect(violations[0].message).toMatch(/over 300 ms.*maxProperties|simplify/);
});

test('payloads within the limit are judged as before, and the pattern budget still applies after a timeout', () => {
  const validate = cacheValidator('time-limit-doubling-2', doubling);
  expect(payloadsViolations(validate, [nested(40)], false, 100)).toEqual([expect.objectContaining({ keyword: 'time' })]);
  expect(payloadsViolations(validate, [nested(3), '{"c":1}'], true, 5_000)).toEqual([]);
  const strict = cacheValidator('time-limit-pattern', { type: 'object', properties: { s: { type: 'string', pattern: '.{0,7}y' } } });
  const s = 'a'.repeat(300_000);
  expect(payloadsViolations(strict, [JSON.stringify({ s })], false, 5_000)).toEqual([expect.objectContaining({ keyword: 'budget' })]);
});
