/**
 * The defect guarded against: the catalog's validation clock did not cover an event type's examples. A create or
 * update (PUT /event-types/{name}) validates each example against the schema in schemaProblem
 * (lambda/catalog/validators.ts) under the pattern budget only, not under withinTime; the schema
 * whose references apply twice at each level passes the create-time analysis, and an example 40
 * levels deep (examples may nest 1000 levels, MAX_EXAMPLES_DEPTH) takes 2^40 evaluations: the
 * request holds its function until Lambda's timeout (and the local runtime's whole process).
 * The example should be refused (field examples.0) within the clock, as a publish payload is.
 */
import { schemaProblem, VALIDATION_TIME_MS } from '../../lambda/catalog/validators';
import { TimeLimitExceeded, withinTime } from '../../lambda/catalog/rules/time-limit';

const doubling = { $defs: { n: { allOf: [{ $ref: '#/$defs/a' }, { $ref: '#/$defs/a' }] }, a: { properties: { c: { $ref: '#/$defs/n' } } } }, $ref: '#/$defs/n' };
const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { c: v };
  return v;
};

test('an example that would take 2^40 evaluations is refused within the validation clock', () => {
  // The test's own watchdog, four times the service's clock: a schemaProblem that answers by
  // its clock returns under it; one without a clock is stopped by it (TimeLimitExceeded).
  let problem: unknown;
  let stopped = false;
  try {
    problem = withinTime(4 * VALIDATION_TIME_MS, () => schemaProblem(doubling, [nested(40)]));
  } catch (e) {
    if (!(e instanceof TimeLimitExceeded)) throw e;
    stopped = true;
  }
  expect(stopped).toBe(false);
  expect(problem).toEqual(expect.objectContaining({ field: 'examples.0' }));
});
