/**
 * Webhook conditions (DESIGN.md sections 9 and 13): `{field, operator, value}` decides whether a
 * message is delivered. `field` is a dot path into the JSON payload, or `properties.<name>`.
 * Both sides compare as numbers when both are numeric (a JSON number, or a string that is a
 * decimal number); otherwise `==` and `!=` compare as strings and the ordering operators do not
 * match. A missing field, a payload that is not JSON, and null, boolean, array or object values
 * never match, whatever the operator. Pure.
 */
export const OPERATORS = ['==', '!=', '>', '>=', '<', '<='] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Condition {
  field: string;
  operator: Operator;
  value: number | string;
}

const PROPERTIES_PREFIX = 'properties.';
const DECIMAL = /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

function numeric(v: number | string): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  return DECIMAL.test(v) ? Number(v) : undefined;
}

/** Reads `path` (dot-separated) from a parsed JSON value; undefined when any step is missing. */
function at(value: unknown, path: string[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** The value a condition looks at, or undefined when there is none it can compare. */
export function conditionSubject(field: string, payload: string, properties: Record<string, string>): number | string | undefined {
  if (field.startsWith(PROPERTIES_PREFIX)) {
    const name = field.slice(PROPERTIES_PREFIX.length);
    return Object.prototype.hasOwnProperty.call(properties, name) ? properties[name] : undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const v = at(parsed, field.split('.'));
  return typeof v === 'number' || typeof v === 'string' ? v : undefined;
}

/**
 * Compares a subject with a condition value under the rules above.
 * @example compare(150, '>', 100) // true
 * @example compare('eu', '>', 'as') // false: ordering needs numbers
 */
export function compare(subject: number | string, op: Operator, value: number | string): boolean {
  const a = numeric(subject);
  const b = numeric(value);
  if (a !== undefined && b !== undefined) {
    switch (op) {
      case '==': return a === b;
      case '!=': return a !== b;
      case '>': return a > b;
      case '>=': return a >= b;
      case '<': return a < b;
      case '<=': return a <= b;
    }
  }
  if (op === '==') return String(subject) === String(value);
  if (op === '!=') return String(subject) !== String(value);
  return false;
}

/**
 * Whether a message satisfies a condition (always, when there is none).
 * @example conditionHolds({ field: 'amount', operator: '>', value: 100 }, '{"amount":150}', {}) // true
 * @example conditionHolds({ field: 'status', operator: '!=', value: 0 }, '{"x":1}', {}) // false: missing
 */
export function conditionHolds(c: Condition | undefined, payload: string, properties: Record<string, string>): boolean {
  if (!c) return true;
  const subject = conditionSubject(c.field, payload, properties);
  return subject !== undefined && compare(subject, c.operator, c.value);
}
