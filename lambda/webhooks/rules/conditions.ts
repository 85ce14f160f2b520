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

/**
 * Longest text read as a number. No finite double needs more characters than this to be written
 * in decimal, and the cap bounds the work a condition does on a hostile 256 KiB value: longer
 * text compares as a string.
 */
export const MAX_NUMERIC_CHARS = 64;

const isDigit = (code: number) => code >= 48 && code <= 57;

/**
 * The number a decimal string denotes (`-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?`, surrounding
 * whitespace allowed), or undefined. One pass over at most {@link MAX_NUMERIC_CHARS} characters:
 * the regex it replaces backtracked quadratically on a long digit run followed by a non-digit.
 * @example decimalValue(' 2.5e1 ') // 25
 * @example decimalValue('0x10') // undefined
 */
export function decimalValue(text: string): number | undefined {
  const t = text.trim();
  if (t.length > MAX_NUMERIC_CHARS) return undefined;
  let i = 0;
  if (t.charCodeAt(i) === 45 /* - */) i++;
  let digits = 0;
  while (isDigit(t.charCodeAt(i))) i++, digits++;
  if (t.charCodeAt(i) === 46 /* . */) {
    i++;
    while (isDigit(t.charCodeAt(i))) i++, digits++;
  }
  if (digits === 0) return undefined;
  if (t[i] === 'e' || t[i] === 'E') {
    i++;
    if (t[i] === '+' || t[i] === '-') i++;
    const from = i;
    while (isDigit(t.charCodeAt(i))) i++;
    if (i === from) return undefined;
  }
  if (i !== t.length) return undefined;
  const n = Number(t);
  // 1e999 is Infinity: not a value a condition can compare.
  return Number.isFinite(n) ? n : undefined;
}

function numeric(v: number | string): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  return decimalValue(v);
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

const NOT_JSON = Symbol('not JSON');

/**
 * A payload as conditions see it: parsed on first use, then shared by every condition judged on
 * the same message, so a publish parses each payload at most once however many webhooks match.
 */
export class ParsedPayload {
  private parsed: unknown = undefined;
  private done = false;

  constructor(readonly text: string) {}

  /** The parsed JSON, or {@link NOT_JSON}. */
  value(): unknown {
    if (!this.done) {
      try {
        this.parsed = JSON.parse(this.text);
      } catch {
        this.parsed = NOT_JSON;
      }
      this.done = true;
    }
    return this.parsed;
  }
}

/** The value a condition looks at, or undefined when there is none it can compare. */
function conditionSubject(field: string, payload: string | ParsedPayload, properties: Record<string, string>): number | string | undefined {
  if (field.startsWith(PROPERTIES_PREFIX)) {
    const name = field.slice(PROPERTIES_PREFIX.length);
    return Object.prototype.hasOwnProperty.call(properties, name) ? properties[name] : undefined;
  }
  const parsed = (typeof payload === 'string' ? new ParsedPayload(payload) : payload).value();
  if (parsed === NOT_JSON) return undefined;
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
 * Whether a message satisfies a condition (always, when there is none). Pass a
 * {@link ParsedPayload} to judge several conditions on one message with one parse.
 * @example conditionHolds({ field: 'amount', operator: '>', value: 100 }, '{"amount":150}', {}) // true
 * @example conditionHolds({ field: 'status', operator: '!=', value: 0 }, '{"x":1}', {}) // false: missing
 */
export function conditionHolds(c: Condition | undefined, payload: string | ParsedPayload, properties: Record<string, string>): boolean {
  if (!c) return true;
  const subject = conditionSubject(c.field, payload, properties);
  return subject !== undefined && compare(subject, c.operator, c.value);
}
