/**
 * The event catalog, pure: request schemas of event types, their limits, and
 * which event type applies to a published topic.
 *
 * An event type's name is a topic (`orders/created`) or an MQTT topic filter (`orders/#`,
 * `+/created`), so one entry can describe a whole family of topics. When several event types
 * match a topic, the most specific applies ({@link specificity}): levels are compared from the
 * left, and at the first level where two names differ, a literal level beats `+`, and `+` beats
 * `#`. An exact topic therefore beats every filter, `orders/+` beats `orders/#`, and
 * `orders/created/#` beats `orders/#`; `a/+` beats `+/b` (the leftmost literal wins). Two
 * different names that match the same topic never tie, so the rule picks exactly one.
 */
import * as z from 'zod/mini';
import { ApiError, validationError } from '../../core/rules/errors';
import { topicFilterProblem } from '../../core/rules/topics';

/** Longest description, in characters. */
const MAX_DESCRIPTION_CHARS = 2048;
/** Most examples per event type. */
export const MAX_EXAMPLES = 10;
/**
 * Largest schema, as JSON text in UTF-8 bytes, and its deepest nesting. Ajv treats schemas as
 * trusted code; for schemas from tenants its docs advise limiting their size and depth
 * (https://ajv.js.org/security.html#untrusted-schemas).
 */
const MAX_SCHEMA_BYTES = 32 * 1024;
const MAX_SCHEMA_DEPTH = 32;
/** Largest set of examples, as JSON text in UTF-8 bytes. */
const MAX_EXAMPLES_BYTES = 32 * 1024;
/**
 * Deepest nesting of one example (the examples array is one level more). 32 KiB of JSON text can
 * nest 16,384 levels, which JSON.stringify and the other recursive walks of an example (the
 * AsyncAPI document, the response) are not built for; 1,000 is far beyond any real payload.
 */
const MAX_EXAMPLES_DEPTH = 1000;

const jsonObject = () => z.record(z.string(), z.unknown());

export const createEventTypeSchema = z.object({
  name: z.string(),
  description: z.optional(z.string().check(z.maxLength(MAX_DESCRIPTION_CHARS))),
  schema: z.optional(jsonObject()),
  enforce: z.optional(z.boolean()),
  examples: z.optional(z.array(z.unknown()).check(z.maxLength(MAX_EXAMPLES))),
});

/** PATCH: any field; `null` clears description, schema or examples. */
export const patchEventTypeSchema = z.object({
  description: z.optional(z.nullable(z.string().check(z.maxLength(MAX_DESCRIPTION_CHARS)))),
  schema: z.optional(z.nullable(jsonObject())),
  enforce: z.optional(z.boolean()),
  examples: z.optional(z.nullable(z.array(z.unknown()).check(z.maxLength(MAX_EXAMPLES)))),
});

export type PatchEventTypeInput = z.infer<typeof patchEventTypeSchema>;

/** What a user sets on an event type. */
export interface EventTypeConfig {
  description?: string;
  schema?: Record<string, unknown>;
  enforce: boolean;
  examples?: unknown[];
}

/** The configuration after a PATCH. */
export function patchedConfig(stored: EventTypeConfig, patch: PatchEventTypeInput): EventTypeConfig {
  const pick = <K extends 'description' | 'schema' | 'examples'>(k: K) => (patch[k] === undefined ? stored[k] : (patch[k] ?? undefined));
  return definedOnly({ description: pick('description'), schema: pick('schema'), examples: pick('examples'), enforce: patch.enforce ?? stored.enforce }) as unknown as EventTypeConfig;
}

const definedOnly = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * Checks an event type's name: a topic or a topic filter (400 INVALID_TOPIC_FILTER, like a
 * resource's `topic_filter`, DESIGN.md section 3).
 */
export function assertEventTypeName(name: string): void {
  const why = topicFilterProblem(name);
  if (why) throw new ApiError(400, 'INVALID_TOPIC_FILTER', `Event type name "${name}" is not a valid topic or topic filter: ${why}.`, { fields: [{ field: 'name', message: why }] });
}

/**
 * Whether a JSON value nests objects and arrays more than `max` levels deep. Iterative, and
 * asked before anything walks the value recursively: a request body may nest 100,000 levels
 * (JSON.parse takes any depth), past the call stack of a recursive walk or of JSON.stringify.
 * @example nestsDeeper({ a: [1] }, 1) // true
 */
function nestsDeeper(v: unknown, max: number): boolean {
  const todo: [unknown, number][] = [[v, 0]];
  for (let next = todo.pop(); next; next = todo.pop()) {
    const [x, depth] = next;
    if (x === null || typeof x !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(x as object)) todo.push([child, depth + 1]);
  }
  return false;
}

/** Size and depth bounds of a schema and of the examples (422 naming the field); depth first (see nestsDeeper). */
export function assertConfigBounds(c: EventTypeConfig): void {
  if (c.schema !== undefined) {
    if (nestsDeeper(c.schema, MAX_SCHEMA_DEPTH)) throw validationError([{ field: 'schema', message: `must nest at most ${MAX_SCHEMA_DEPTH} levels deep` }]);
    if (Buffer.byteLength(JSON.stringify(c.schema), 'utf8') > MAX_SCHEMA_BYTES) throw validationError([{ field: 'schema', message: `must be at most ${MAX_SCHEMA_BYTES} bytes of JSON` }]);
  }
  if (c.examples !== undefined) {
    if (nestsDeeper(c.examples, MAX_EXAMPLES_DEPTH + 1)) throw validationError([{ field: 'examples', message: `must nest at most ${MAX_EXAMPLES_DEPTH} levels deep each` }]);
    if (Buffer.byteLength(JSON.stringify(c.examples), 'utf8') > MAX_EXAMPLES_BYTES) throw validationError([{ field: 'examples', message: `must be at most ${MAX_EXAMPLES_BYTES} bytes of JSON together` }]);
  }
  if (c.enforce && c.schema === undefined) throw validationError([{ field: 'enforce', message: 'needs a schema to enforce' }]);
}

/**
 * The payload an example stands for: a string example is a payload as published (JSON text),
 * any other JSON value is the payload already parsed.
 * @example examplePayload('{"id":1}') // { ok: true, value: { id: 1 } }
 */
export function examplePayload(example: unknown): { ok: true; value: unknown } | { ok: false } {
  if (typeof example !== 'string') return { ok: true, value: example };
  try {
    return { ok: true, value: JSON.parse(example) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * The specificity key of a name that matches some topic: one rank per level (0 a literal, 1 `+`,
 * 2 `#`). Of the names that match one topic, the one with the smallest key (compared level by
 * level, a name that ended counting as a literal) is the most specific.
 */
function specificity(name: string): number[] {
  return name.split('/').map((l) => (l === '#' ? 2 : l === '+' ? 1 : 0));
}

/** Negative when `a` is more specific than `b` (both matching the same topic). */
export function compareSpecificity(a: string, b: string): number {
  const ka = specificity(a);
  const kb = specificity(b);
  for (let i = 0; i < Math.max(ka.length, kb.length); i++) {
    const d = (ka[i] ?? 0) - (kb[i] ?? 0);
    if (d !== 0) return d;
  }
  // Same ranks at every level: for names matching one topic that means the same name; order the
  // rest by name so the choice never depends on the order they were found in.
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The most specific of the names matching a topic, or undefined when there is none.
 * @example mostSpecific(['orders/#', 'orders/created', '#']) // 'orders/created'
 */
export function mostSpecific(names: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const n of names) if (best === undefined || compareSpecificity(n, best) < 0) best = n;
  return best;
}

/** One way a payload fails its event type's schema, as the API reports it. */
export interface SchemaViolation {
  /** The message's index in a batch request. */
  index?: number;
  /** JSON Pointer into the payload (Ajv's `instancePath`; empty for the payload itself). */
  instance_path: string;
  /** The JSON Schema keyword that failed (`required`, `type`, ...), or `json` when the payload is not JSON, `budget` when its patterns would exceed the publish's budget of pattern work (docs/catalog.md). */
  keyword: string;
  /** JSON Pointer into the schema (Ajv's `schemaPath`). */
  schema_path: string;
  message: string;
}

/** 422 VALIDATION_ERROR for payloads refused by their event type's schema. */
export function payloadRefused(eventType: string, violations: SchemaViolation[]): ApiError {
  const fields = violations.map((v) => ({
    field: v.index === undefined ? 'payload' : `messages.${v.index}.payload`,
    message: v.keyword === 'json' ? v.message : `${v.instance_path || '(the payload)'} ${v.message} (${v.keyword})`,
  }));
  const first = fields[0];
  return new ApiError(
    422,
    'VALIDATION_ERROR',
    `The payload does not satisfy the schema of event type "${eventType}" (${first ? `${first.field}: ${first.message}` : 'invalid'}); nothing was published.`,
    { fields, event_type: eventType, violations },
  );
}
