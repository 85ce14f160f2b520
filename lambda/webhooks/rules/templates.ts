/**
 * Webhook templates (SPEC.md "Template placeholders", DESIGN.md sections 9 and 13): `{{.name}}`
 * placeholders in header values, `body_template` string values and hook payloads. Pure.
 */

/** Values a template may use; a placeholder without a value is left as written. */
export interface TemplateVars {
  topic?: string;
  /** The raw payload string. */
  payload?: string;
  /** ISO 8601 time of the publish. */
  timestamp?: string;
  message_id?: string;
  /** The message properties as JSON text. */
  properties?: string;
  signature?: string;
  /** The receiver's response body as text, cut at {@link MAX_RESPONSE_CHARS}. */
  response?: string;
  /** A one-line reason of the failure (`HTTP 500`, `timeout after 10 s`, ...). */
  error?: string;
}

/** `{{.response}}` is cut at 4 KiB (DESIGN.md section 13). */
export const MAX_RESPONSE_BYTES = 4096;

const PLACEHOLDER_RE = /\{\{\s*\.([a-z_]+)\s*\}\}/g;

/**
 * Replaces every `{{.name}}` in `template` whose value is known, in one pass (a substituted
 * value is never scanned again, so a payload containing `{{.signature}}` stays literal text).
 * @example renderTemplate('order.{{.topic}}', { topic: 'a/b' }) // 'order.a/b'
 */
export function renderTemplate(template: string, vars: TemplateVars): string {
  return template.replace(PLACEHOLDER_RE, (whole, name: string) => {
    // Own properties only: `{{.constructor}}` must not render Object's constructor (a name the
    // size estimate, which counts own values only, would take at its written length).
    const v = Object.hasOwn(vars, name) ? (vars as Record<string, string | undefined>)[name] : undefined;
    return typeof v === 'string' ? v : whole;
  });
}

/**
 * The most bytes a delivery's configured headers (names and rendered values, in UTF-8) may add
 * up to: 16 KiB, within what common receivers accept for a whole request head (Node.js's
 * `--max-http-header-size` defaults to 16 KiB; nginx's `large_client_header_buffers` to 4 × 8 KiB).
 * The service's own headers (content type, user agent, Standard Webhooks) add under 1 KiB.
 */
export const MAX_RENDERED_HEADERS_BYTES = 16 * 1024;

/** The placeholders a delivery's headers and body are given (`response` and `error` only hooks). */
export const DELIVERY_PLACEHOLDERS: readonly string[] = ['topic', 'payload', 'timestamp', 'message_id', 'properties', 'signature'];

/** The UTF-8 bytes of each known value, measured once (a template may name it thousands of times). */
export function varSizes(vars: TemplateVars): Map<string, number> {
  return new Map(Object.entries(vars).filter(([, v]) => typeof v === 'string').map(([k, v]) => [k, Buffer.byteLength(v as string, 'utf8')]));
}

/**
 * The UTF-8 bytes of `template` rendered with `vars`, counted without rendering it, so a template
 * that would build a huge string is refused before it is built.
 * @example renderedBytes('{{.payload}}{{.payload}}!', { payload: 'xyz' }) // 7
 */
export function renderedBytes(template: string, vars: TemplateVars, sizes = varSizes(vars)): number {
  let n = Buffer.byteLength(template, 'utf8');
  for (const m of template.matchAll(PLACEHOLDER_RE)) {
    const v = sizes.get(m[1]);
    if (v !== undefined) n += v - Buffer.byteLength(m[0], 'utf8');
  }
  return n;
}

/**
 * The least `template` can render to: its bytes with every placeholder of `known` rendered empty.
 * @example leastRenderedBytes('Bearer {{.payload}}', DELIVERY_PLACEHOLDERS) // 7
 */
export const leastRenderedBytes = (template: string, known: readonly string[]) =>
  renderedBytes(template, {}, new Map(known.map((k) => [k, 0])));

/**
 * Renders `template` if it fits `max` bytes; otherwise says how large it would be, without
 * building it (hook payloads: a 64 KiB template of `{{.payload}}` would be over a gigabyte).
 * @example renderWithin('a={{.payload}}', { payload: 'b' }, 10) // 'a=b'
 */
export function renderWithin(template: string, vars: TemplateVars, max: number): string | { tooLarge: number } {
  const size = renderedBytes(template, vars);
  return size > max ? { tooLarge: size } : renderTemplate(template, vars);
}

/**
 * A lower bound of the UTF-8 bytes of a rendered body template's JSON, without rendering it: the
 * bytes of every string (keys included) with each known placeholder counted as its value's bytes.
 * JSON escaping only adds bytes, so a floor above `max_payload_size` means the body is too large.
 * @example bodyTemplateFloor({ d: '{{.payload}}{{.payload}}' }, { payload: 'xyz' }) // 7
 */
export function bodyTemplateFloor(template: unknown, vars: TemplateVars, sizes = varSizes(vars)): number {
  if (typeof template === 'string') return renderedBytes(template, vars, sizes);
  if (Array.isArray(template)) return template.reduce((n: number, v) => n + bodyTemplateFloor(v, vars, sizes), 0);
  if (template !== null && typeof template === 'object') {
    return Object.entries(template).reduce((n, [k, v]) => n + Buffer.byteLength(k, 'utf8') + bodyTemplateFloor(v, vars, sizes), 0);
  }
  return 0;
}

/**
 * Renders a body template: every string value (at any depth, arrays included) goes through
 * {@link renderTemplate}; numbers, booleans and null stay as they are; keys are not rendered.
 * @example renderBodyTemplate({ data: '{{.payload}}', n: 5 }, { payload: 'x' }) // { data: 'x', n: 5 }
 */
export function renderBodyTemplate(template: unknown, vars: TemplateVars): unknown {
  if (typeof template === 'string') return renderTemplate(template, vars);
  if (Array.isArray(template)) return template.map((v) => renderBodyTemplate(v, vars));
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, renderBodyTemplate(v, vars)]));
  }
  return template;
}

/**
 * A header value after substitution, made safe for the wire: CR, LF and NUL (which would start a
 * new header line, DESIGN.md section 13) and other control characters except tab are removed,
 * and surrounding whitespace is trimmed.
 * @example headerValue('Bearer {{.payload}}', { payload: 'x\r\nX-Evil: 1' }) // 'Bearer xX-Evil: 1'
 */
export function headerValue(template: string, vars: TemplateVars): string {
  // eslint-disable-next-line no-control-regex
  return renderTemplate(template, vars).replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '').trim();
}

/**
 * Cuts a response body at {@link MAX_RESPONSE_BYTES} of UTF-8 without splitting a character.
 * @example cutResponse('é'.repeat(3000)).length // 2048
 */
export function cutResponse(text: string): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= MAX_RESPONSE_BYTES) return text;
  return buf.subarray(0, MAX_RESPONSE_BYTES).toString('utf8').replace(/\uFFFD$/, '');
}
