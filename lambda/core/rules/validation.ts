/**
 * Request validation with zod, mapped to the API's two kinds of refusal (DESIGN.md sections 3, 13):
 * - a field of the wrong JSON type (or a body that is not an object): 400 INVALID_REQUEST;
 * - a missing required field, or a value out of range or malformed: 422 VALIDATION_ERROR with
 *   `details.fields` naming each field.
 * A refinement may carry its own API error (e.g. 400 INVALID_TOPIC_FILTER) in `params.apiError`.
 */
// zod/mini, not zod: the same engine (zod core, same issues and JSON Schema) behind a functional
// API that tree-shakes, ~63 KB less per bundle. Schemas are written `z.optional(s)`,
// `z._default(s, v)`, `s.check(z.minLength(1), z.maximum(9), z.superRefine(fn))`. The namespace
// import, not `{ z }`: esbuild then keeps only the functions used.
import * as z from 'zod/mini';
// zod/mini loads no locale, so every issue would read "Invalid input"; the English messages are
// part of the API's 400/422 answers (`details.fields[].message`). Only `en` is bundled.
import { en } from 'zod/locales';
import { ApiError, invalidRequest, validationError, type FieldProblem } from './errors';

z.config(en());

/** An integer field within [min, max]; a non-integer number or any other type is a wrong type. */
export const intIn = (min: number, max: number) => z.int().check(z.minimum(min), z.maximum(max));

/** A resource name (queue, stream, subscription, webhook, consumer group, subscriber id). */
export const RESOURCE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const resourceName = () =>
  z.string().check(z.regex(RESOURCE_NAME, 'must be 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit'));

/** Names the API error a refinement raises instead of a 422, e.g. INVALID_TOPIC_FILTER. */
export const withApiError = (error: ApiError) => ({ params: { apiError: error } });

const fieldOf = (path: PropertyKey[]) => path.map(String).join('.') || 'body';

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/** The JSON type of a value: `null`, `array`, or its `typeof`. */
const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

type Issue = z.core.$ZodIssue;

/**
 * Whether an issue means the value has the wrong JSON type (400) rather than a wrong value of the
 * right type (422). Enum-like fields (an enum, a literal) fail with `invalid_value` either way:
 * `"compression": 5` is a wrong type, `"compression": "zip"` a wrong value, told apart by the
 * JSON types of the allowed values. A union is a wrong type only when every branch failed on a
 * type: `"on_failure": "send_somewhere"` has the type of its `send_to_dlq` branch.
 */
function isWrongType(issue: Issue, input: unknown, base: PropertyKey[] = []): boolean {
  const path = [...base, ...issue.path];
  if (issue.code === 'invalid_type') return true;
  if (issue.code === 'invalid_value') {
    const v = valueAt(input, path);
    return v !== undefined && !issue.values.some((allowed) => jsonType(allowed) === jsonType(v));
  }
  if (issue.code === 'invalid_union') return issue.errors.every((branch) => branch.some((i) => isWrongType(i, input, path)));
  return false;
}

/** The message of a union's branch whose type fit, for a 422 on a union. */
function unionMessage(issue: Issue, input: unknown): string {
  if (issue.code !== 'invalid_union') return issue.message;
  const fitting = issue.errors.find((branch) => !branch.some((i) => isWrongType(i, input, issue.path)));
  return fitting?.[0]?.message ?? issue.message;
}

/** Throws the API error that describes why `input` does not satisfy `schema`. */
function toApiError(error: z.core.$ZodError, input: unknown): ApiError {
  const missing: FieldProblem[] = [];
  const invalid: FieldProblem[] = [];
  for (const issue of error.issues) {
    const custom = (issue as { params?: { apiError?: ApiError } }).params?.apiError;
    if (custom) return custom;
    const field = fieldOf(issue.path);
    if (['invalid_type', 'invalid_union', 'invalid_value'].includes(issue.code) && valueAt(input, issue.path) === undefined && issue.path.length > 0) {
      missing.push({ field, message: 'is required' });
    } else if (isWrongType(issue, input)) {
      return invalidRequest(`Field "${field}" has the wrong type: ${issue.message}.`, { fields: [{ field, message: issue.message }] });
    } else {
      invalid.push({ field, message: unionMessage(issue, input) });
    }
  }
  return validationError([...missing, ...invalid]);
}

/** Parses `input` with `schema` or throws the matching {@link ApiError}. */
export function parse<S extends z.ZodMiniType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw toApiError(result.error, input);
  return result.data;
}

/**
 * Parses list paging from query parameters (DESIGN.md section 11): `limit` 1..100 default 50,
 * `offset` >= 0 default 0; a non-integer is 400, out of range 422.
 */
export function parsePaging(query: Record<string, string | undefined> | null | undefined): { limit: number; offset: number } {
  const read = (name: string, def: number, min: number, max: number): number => {
    const raw = query?.[name];
    if (raw === undefined) return def;
    if (!/^-?\d+$/.test(raw)) throw invalidRequest(`Query parameter "${name}" must be an integer.`, { fields: [{ field: name, message: 'must be an integer' }] });
    const n = Number(raw);
    if (n < min || n > max) throw validationError([{ field: name, message: `must be between ${min} and ${max}` }]);
    return n;
  };
  return { limit: read('limit', 50, 1, 100), offset: read('offset', 0, 0, Number.MAX_SAFE_INTEGER) };
}
