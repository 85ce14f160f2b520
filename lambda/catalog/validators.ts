/**
 * JSON Schema (draft 2020-12) checks of the event catalog, with Ajv: whether a schema a tenant
 * gives is one we accept, and the compiled validator of an event type's schema, compiled once per
 * warm container and event-type version (never per message).
 *
 * One Ajv instance per container (building one with ajv-formats costs about 0.2 s; compiling a
 * schema on it about 1 ms). Tenants' schemas must not meet on it: Ajv registers schemas by their
 * `$id` (https://ajv.js.org/options.html#addusedschema), so `addUsedSchema: false` keeps a
 * top-level `$id` out of the instance, each schema is removed from Ajv's cache once compiled, and
 * a schema may not name other documents (a nested `$id`, a `$ref` that does not start with `#`):
 * nothing one tenant compiles is reachable from another's schema, and nothing is fetched.
 * Ajv treats schemas as trusted code and advises bounding untrusted ones and their regular
 * expressions (https://ajv.js.org/security.html#untrusted-schemas): size and depth are bounded in
 * ./rules/event-types.ts, every pattern runs on V8's linear-time engine (./linear-regexp.ts,
 * Ajv's `code.regExp`) and one that engine cannot run is refused here, and so is a `uniqueItems`
 * over many non-scalar items (Ajv compares them pairwise), and so are references that multiply
 * at one place of a payload (./rules/schema-expansion.ts); string formats run in linear time and are
 * charged to the same budget as patterns (./formats.ts). `$data` stays off (its default), the
 * ReDoS of CVE-2025-69873.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { FieldProblem } from '../core/rules/errors';
import { examplePayload, type SchemaViolation } from './rules/event-types';
import { MAX_PAYLOAD_BYTES } from '../core/rules/message';
import { boundFormats } from './formats';
import { linearPatternProblem, linearRegExp } from './linear-regexp';
import { expansionProblem } from './rules/schema-expansion';
export { newPatternBudget } from './rules/pattern-cost';
import { clearPatternBudget, newPatternBudget, PATTERN_BUDGET, PatternBudgetExceeded, patternCost, patternShape, withPatternBudget, type PatternBudget } from './rules/pattern-cost';
import { TimeLimitExceeded, withinTime } from './rules/time-limit';

let instance: Ajv2020 | undefined;

/** The container's Ajv, built on first use (a publish to a topic without an enforced schema never pays for it). */
function ajv(): Ajv2020 {
  if (!instance) {
    // strict: false: unknown keywords are annotations in JSON Schema, not errors (2020-12 Core, section 6.5).
    // validateSchema: false: compile does not check the schema against the meta-schema again (it
    // was checked when written, by schemaProblem's explicit call); compiling the 2020-12
    // meta-schema is most of a first compile's time (bench/catalog-validation.ts), which a
    // publish then never pays (https://ajv.js.org/options.html#validateschema).
    // code.regExp: every `pattern` and `patternProperties` key runs on the linear-time engine
    // (https://ajv.js.org/options.html#code). strict: false also keeps Ajv from running a
    // patternProperties key on the default engine at compile (its allowMatchingProperties check).
    instance = new Ajv2020({ strict: false, allErrors: false, addUsedSchema: false, validateSchema: false, code: { regExp: linearRegExp } });
    addFormats(instance);
    // Every string format in linear time and charged to the publish's budget (./formats.ts).
    boundFormats(instance);
  }
  return instance;
}

/**
 * Largest `maxItems` with `uniqueItems` over items that are not scalars: Ajv compares such items
 * pairwise (20,000 small objects took 31 s on the test machine, past API Gateway's 29 s), while
 * 100 items are 4,950 comparisons.
 */
const MAX_UNIQUE_ITEMS = 100;
/**
 * Most values of one `enum`: Ajv compares a place of the payload with each value in turn, so the
 * work is the enum's size times the payload's places (an enum of 4,500 short arrays against four
 * 252 KB payloads took 8.4 s on the test machine, 256 values 0.5 s).
 */
export const MAX_ENUM_VALUES = 256;
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/** Whether `uniqueItems` in this schema object is checked in linear time or over few items. */
function cheapUniqueness(schema: Record<string, unknown>): boolean {
  const max = schema.maxItems;
  if (typeof max === 'number' && max <= MAX_UNIQUE_ITEMS) return true;
  const items = schema.items as { type?: unknown } | undefined;
  const t = items && typeof items === 'object' ? items.type : undefined;
  return typeof t === 'string' ? SCALAR_TYPES.has(t) : Array.isArray(t) && t.length > 0 && t.every((x) => SCALAR_TYPES.has(x as string));
}

/**
 * Why a pattern could exceed a publish's budget on one string alone, or undefined: at the string's
 * `maxLength` when the schema object gives one, else at the largest payload (a JSON string in it
 * has fewer characters than the payload has bytes). Refused when the schema is written, so a
 * tenant learns it then rather than at a publish of a long string.
 */
function overBudget(pattern: string, maxLength: unknown): string | undefined {
  const longest = typeof maxLength === 'number' && maxLength >= 0 ? Math.min(maxLength, MAX_PAYLOAD_BYTES) : MAX_PAYLOAD_BYTES;
  const cost = patternCost(patternShape(pattern), longest);
  if (cost <= PATTERN_BUDGET) return undefined;
  const given = longest < MAX_PAYLOAD_BYTES ? `its maxLength of ${longest}` : `the largest payload (no maxLength)`;
  return `could cost ${cost} units of matching on a string of ${given}, over the budget of ${PATTERN_BUDGET} per publish: add maxLength to the schema, or shorten the pattern (docs: Patterns)`;
}

/** Why a schema's references, patterns, enums or uniqueness checks are refused, with the JSON pointer of the place. */
function referenceProblem(v: unknown, path: string, top = true): string | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
    const here = `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (k === '$id' && typeof child === 'string' && !top) return `${here}: a nested $id is not supported; put shared parts in $defs and $ref them as #/$defs/...`;
    if (k === '$ref' || k === '$dynamicRef') {
      if (typeof child === 'string' && !child.startsWith('#')) return `${here}: only references within the schema (starting with #) are supported`;
    }
    if (k === 'pattern' && typeof child === 'string') {
      const problem = linearPatternProblem(child) ?? overBudget(child, (v as Record<string, unknown>).maxLength);
      if (problem) return `${here}: the pattern ${problem}`;
    }
    if (k === 'enum' && Array.isArray(child) && child.length > MAX_ENUM_VALUES) {
      return `${here}: an enum may have at most ${MAX_ENUM_VALUES} values (each is compared with the payload in turn); use a pattern or split the event type`;
    }
    if (k === 'uniqueItems' && child === true && !cheapUniqueness(v as Record<string, unknown>)) {
      return `${here}: uniqueItems compares items pairwise; give the array a maxItems of at most ${MAX_UNIQUE_ITEMS}, or items of a scalar type`;
    }
    if (k === 'patternProperties' && child && typeof child === 'object') {
      const names = (v as { propertyNames?: { maxLength?: unknown } }).propertyNames;
      for (const key of Object.keys(child)) {
        const problem = linearPatternProblem(key) ?? overBudget(key, names && typeof names === 'object' ? names.maxLength : undefined);
        if (problem) return `${here}: the pattern ${JSON.stringify(key)} ${problem}`;
      }
    }
    const deeper = referenceProblem(child, here, false);
    if (deeper) return deeper;
  }
  return undefined;
}

/** Compiles a schema on the shared instance and takes it out of Ajv's cache again. */
function compile(schema: Record<string, unknown>): ValidateFunction {
  const a = ajv();
  try {
    return a.compile(schema);
  } finally {
    a.removeSchema(schema);
  }
}

/**
 * What is wrong with a schema (on `schema`) or with an example against it (on `examples.N`), or
 * undefined when both are fine. A schema must be valid against the draft 2020-12 meta-schema,
 * compile, and reference nothing outside itself. Answers a problem rather than throwing the
 * API's error: this module is loaded as a file of its own in AWS (./load-validators.ts), and an
 * error class of its own copy would not be the handler's `ApiError`.
 */
export function schemaProblem(schema: Record<string, unknown> | undefined, examples: unknown[] | undefined): FieldProblem | undefined {
  if (schema === undefined) return undefined;
  const $schema = schema.$schema;
  if ($schema !== undefined && $schema !== 'https://json-schema.org/draft/2020-12/schema') {
    return { field: 'schema', message: 'must be JSON Schema draft 2020-12 ($schema "https://json-schema.org/draft/2020-12/schema", or no $schema)' };
  }
  const a = ajv();
  if (!a.validateSchema(schema)) {
    const e = a.errors?.[0];
    return { field: 'schema', message: `is not a valid JSON Schema (draft 2020-12): ${e ? `${e.instancePath || '/'} ${e.message}` : 'invalid'}` };
  }
  const ref = referenceProblem(schema, '') ?? expansionProblem(schema);
  if (ref) return { field: 'schema', message: ref };
  let validate: ValidateFunction;
  try {
    validate = compile(schema);
  } catch (e) {
    return { field: 'schema', message: `does not compile: ${(e as Error).message}` };
  }
  // The examples under the same clock as a publish's payloads (payloadsViolations): what the
  // static bounds miss must not hold a create either.
  let at = 0;
  try {
    return withinTime(VALIDATION_TIME_MS, () => {
      for (; at < (examples ?? []).length; at++) {
        const problem = exampleProblem(validate, (examples ?? [])[at], at);
        if (problem) return problem;
      }
      return undefined;
    });
  } catch (e) {
    if (!(e instanceof TimeLimitExceeded)) throw e;
    clearPatternBudget();
    return { field: `examples.${at}`, message: `took over ${VALIDATION_TIME_MS} ms to validate against the schema: simplify the schema (references that apply again at each level of the payload multiply its work) or the example` };
  }
}

/** Why example `i` does not pass `validate`, or undefined. */
function exampleProblem(validate: ValidateFunction, ex: unknown, i: number): FieldProblem | undefined {
  const payload = examplePayload(ex);
  if (!payload.ok) return { field: `examples.${i}`, message: 'is a string that is not JSON (a string example is a payload as published)' };
  let valid: boolean;
  try {
    valid = withPatternBudget(newPatternBudget(), () => validate(payload.value) as boolean);
  } catch (e) {
    if (!(e instanceof PatternBudgetExceeded)) throw e;
    return { field: `examples.${i}`, message: `${pathOf(payload.value, e.input) || '(the payload)'} ${overBudgetMessage(e)}` };
  }
  if (!valid) {
    const err = validate.errors?.[0];
    return { field: `examples.${i}`, message: `does not satisfy the schema: ${err?.instancePath || '(the payload)'} ${err?.message ?? ''} (${err?.keyword ?? ''})` };
  }
  return undefined;
}

/** Validators by event type revision (`{ns}\0{name}\0{revision}`, ./enforce.ts), oldest dropped past the bound. */
const validators = new Map<string, ValidateFunction>();
const MAX_VALIDATORS = 1000;

/**
 * The compiled validator of one event type version, if this container has it.
 * @public ./enforce.ts loads it through ./load-validators.ts, by a specifier knip cannot follow.
 */
export const cachedValidator = (key: string) => validators.get(key);

/**
 * A validator refusing every payload, for a schema that no longer compiles: one stored before a
 * rule of schemaProblem's (a pattern the linear-time engine cannot run). Enforcement was asked
 * for and cannot be done, so publishes are refused with the reason, never answered 500.
 */
function unapplicable(reason: string): ValidateFunction {
  const message = `the event type's schema cannot be applied: ${reason}; change the event type`;
  const refuse = (() => {
    refuse.errors = [{ instancePath: '', schemaPath: '#', keyword: 'schema', params: {}, message }];
    return false;
  }) as unknown as ValidateFunction;
  return refuse;
}

/** Compiles and keeps the validator of one event type version. */
export function cacheValidator(key: string, schema: Record<string, unknown>): ValidateFunction {
  let v: ValidateFunction;
  // A schema stored before the bound on references (./rules/schema-expansion.ts) is refused here too:
  // applying it could hold the publish past API Gateway's timeout.
  const expansion = expansionProblem(schema);
  try {
    v = expansion ? unapplicable(expansion) : compile(schema);
  } catch (e) {
    v = unapplicable((e as Error).message);
  }
  validators.delete(key);
  if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value as string);
  validators.set(key, v);
  return v;
}

/** The JSON pointer of the first place `s` is a string or a key in `value` (depth first), else ''. */
function pathOf(value: unknown, s: string): string {
  const stack: [unknown, string][] = [[value, '']];
  const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
  while (stack.length) {
    const [v, at] = stack.pop() as [unknown, string];
    if (v === s) return at;
    if (v === null || typeof v !== 'object') continue;
    const entries = Object.entries(v as Record<string, unknown>);
    for (const [k] of entries) if (!Array.isArray(v) && k === s) return `${at}/${esc(k)}`;
    for (let j = entries.length - 1; j >= 0; j--) stack.push([entries[j][1], `${at}/${esc(entries[j][0])}`]);
  }
  return '';
}

const overBudgetMessage = (e: PatternBudgetExceeded) =>
  `would cost ${e.cost} units of pattern matching (${JSON.stringify(e.pattern)} on ${e.input.length} characters), over the ${e.left} left of the budget of ${PATTERN_BUDGET} per publish: add maxLength to the schema, or shorten the pattern`;

/**
 * Why a payload fails `validate`, or undefined when it passes; the payload must be JSON. Its
 * pattern tests are charged to `budget` (./rules/pattern-cost.ts), which a batch's payloads share; one
 * that would exceed it is refused before it runs, with the keyword `budget`.
 */
export function payloadViolation(validate: ValidateFunction, payload: string, index?: number, budget: PatternBudget = newPatternBudget()): SchemaViolation | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return { ...(index === undefined ? {} : { index }), instance_path: '', keyword: 'json', schema_path: '', message: 'is not valid JSON' };
  }
  let valid: boolean;
  try {
    valid = withPatternBudget(budget, () => validate(value) as boolean);
  } catch (e) {
    if (e instanceof PatternBudgetExceeded) {
      return { ...(index === undefined ? {} : { index }), instance_path: pathOf(value, e.input), keyword: 'budget', schema_path: '', message: overBudgetMessage(e) };
    }
    // A recursive schema meets a payload nested deeper than the stack: JSON.parse takes any
    // depth, Ajv's generated code recurses per level.
    if (e instanceof RangeError) return { ...(index === undefined ? {} : { index }), instance_path: '', keyword: 'depth', schema_path: '', message: 'nests too deeply to be validated' };
    throw e;
  }
  if (valid) return undefined;
  const e = validate.errors?.[0];
  return { ...(index === undefined ? {} : { index }), instance_path: e?.instancePath ?? '', keyword: e?.keyword ?? 'schema', schema_path: e?.schemaPath ?? '', message: e?.message ?? 'does not satisfy the schema' };
}

/**
 * The time one request's payloads may take to validate (docs/catalog.md, "Time limit"): what the
 * static bounds miss (references that multiply across levels of the payload) is stopped here.
 * Well above what the pattern budget allows on a loaded machine (about 3.6 s at its worst), and
 * well inside API Gateway's 29 s.
 */
export const VALIDATION_TIME_MS = 5_000;

/**
 * Every refused payload of one request, with one pattern budget and one clock for them all: a
 * batch holds the function no longer than one payload may. Over the clock, the payload being
 * validated is refused (keyword `time`) and the rest are not judged.
 */
export function payloadsViolations(validate: ValidateFunction, payloads: string[], batch: boolean, limitMs = VALIDATION_TIME_MS): SchemaViolation[] {
  const violations: SchemaViolation[] = [];
  const budget = newPatternBudget();
  let at = 0;
  try {
    withinTime(limitMs, () => {
      for (; at < payloads.length; at++) {
        const bad = payloadViolation(validate, payloads[at], batch ? at : undefined, budget);
        if (bad) violations.push(bad);
      }
    });
  } catch (e) {
    if (!(e instanceof TimeLimitExceeded)) throw e;
    clearPatternBudget();
    violations.push({
      ...(batch ? { index: at } : {}),
      instance_path: '',
      keyword: 'time',
      schema_path: '',
      message: `validating this payload took over ${limitMs} ms, the limit of one publish request: simplify the event type's schema (references that apply again at each level of the payload multiply its work) or bound the payload (maxProperties, maxItems, maxLength)`,
    });
  }
  return violations;
}
