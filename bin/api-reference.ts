/**
 * `npm run docs:api`: renders the OpenAPI document the API serves (`GET /api/v1/openapi.json`,
 * built by lambda/api-docs/openapi.ts from the route table and the request schemas) as Markdown
 * into docs/api.md, between `<!-- api-reference:start -->` and `<!-- api-reference:end -->`.
 * `--check` changes nothing and exits 1 when the page is out of date (test/unit/api-reference.test.ts
 * asserts the same in `npm test`), so the reference cannot drift from the document.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApi } from '../lambda/api-docs/openapi';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const API_PAGE = 'docs/api.md';
const START = '<!-- api-reference:start -->';
const END = '<!-- api-reference:end -->';
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

const refName = (ref: string) => ref.split('/').pop()!;
const cell = (s: unknown) => String(s ?? '').replace(/\|/g, '\\|').replace(/\n+/g, ' ');

function resolve(doc: Json, s: Json | undefined): Json | undefined {
  if (s?.$ref) return resolve(doc, s.$ref.split('/').slice(1).reduce((o: Json, k: string) => o?.[k], doc));
  return s;
}

/** A schema as a short type: `string`, `integer`, `Queue`, `QueueMessage[]`, `"none" | "fifo"`. */
export function typeOf(s: Json | undefined): string {
  if (!s) return 'any';
  if (s.$ref) return `[${refName(s.$ref)}](#${refName(s.$ref).toLowerCase()})`;
  if ('const' in s) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' \\| ');
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return alts.map(typeOf).join(' \\| ');
  if (s.allOf) return s.allOf.map(typeOf).join(' & ');
  if (Array.isArray(s.type)) return s.type.map((t: string) => (t === 'array' ? `${typeOf(s.items)}[]` : t)).join(' \\| ');
  if (s.type === 'array') return `${typeOf(s.items)}[]`;
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object') return `map of ${typeOf(s.additionalProperties)}`;
  return s.type ?? 'any';
}

function constraints(s: Json): string {
  const c: string[] = [];
  if (s.minimum !== undefined || s.maximum !== undefined) c.push(`${s.minimum ?? '…'} to ${s.maximum ?? '…'}`);
  if (s.exclusiveMinimum !== undefined) c.push(`> ${s.exclusiveMinimum}`);
  if (s.minLength !== undefined || s.maxLength !== undefined) c.push(`length ${s.minLength ?? 0} to ${s.maxLength ?? '…'}`);
  if (s.minItems !== undefined || s.maxItems !== undefined) c.push(`${s.minItems ?? 0} to ${s.maxItems ?? '…'} items`);
  if (s.pattern) c.push(`pattern \`${s.pattern}\``);
  if (s.format) c.push(`format ${s.format}`);
  if (s.description) c.push(s.description);
  return c.join('; ');
}

function fieldsTable(doc: Json, schema: Json | undefined): string[] {
  const s = resolve(doc, schema);
  const props: Json = s?.properties ?? {};
  if (!Object.keys(props).length) return [`\`${typeOf(s)}\``];
  const required = new Set<string>(s?.required ?? []);
  return [
    '| field | type | required | default | rules |',
    '|---|---|---|---|---|',
    ...Object.entries(props).map(([k, v]) => `| \`${k}\` | ${cell(typeOf(v))} | ${required.has(k) ? 'yes' : ''} | ${v.default === undefined ? '' : `\`${cell(JSON.stringify(v.default))}\``} | ${cell(constraints(v))} |`),
  ];
}

/** The `error.code` values a response names (`allOf: [ErrorEnvelope, {error: {code: {enum}}}]`). */
function errorCodes(doc: Json, response: Json): string[] {
  const r = resolve(doc, response);
  const schema = r?.content?.['application/json']?.schema;
  const parts: Json[] = schema?.allOf ?? [];
  return parts.flatMap((p) => p?.properties?.error?.properties?.code?.enum ?? []);
}

/** The `data` schema of a success response (the envelope's `data`), if any. */
function dataSchema(doc: Json, response: Json): Json | undefined {
  return resolve(doc, response)?.content?.['application/json']?.schema?.properties?.data;
}

export function renderApiReference(doc: Json = buildOpenApi() as Json): string {
  const out: string[] = [
    `The operations of \`${doc.info.title}\` ${doc.info.version}, rendered from the OpenAPI document the API serves (\`npm run docs:api\`). Every path is relative to the API root (\`/api/v1\`); every operation but \`GET /openapi.json\` needs \`Authorization: Bearer <API key>\`; every answer is the envelope \`{success, data, error}\`.`,
    '',
  ];
  const ops: { tag: string; method: string; path: string; op: Json }[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const method of METHODS) if (item[method]) ops.push({ tag: item[method].tags?.[0] ?? 'other', method, path, op: item[method] });
  }
  for (const tag of doc.tags as Json[]) {
    const mine = ops.filter((o) => o.tag === tag.name);
    if (!mine.length) continue;
    out.push(`### ${tag.name} operations`, '', `${tag.description}.`, '', '| operation | summary | scope | rate category | success |', '|---|---|---|---|---|');
    for (const { method, path, op } of mine) {
      const ok = Object.keys(op.responses).find((s) => s.startsWith('2')) ?? '';
      out.push(`| [\`${method.toUpperCase()} ${path}\`](#${op.operationId.toLowerCase()}) | ${cell(op.summary)} | ${op['x-required-scope'] ?? 'none'} | ${op['x-rate-limit-category'] ?? 'none'} | ${ok} |`);
    }
    out.push('');
    for (const { method, path, op } of mine) {
      out.push(`#### ${op.operationId}`, '', `\`${method.toUpperCase()} ${path}\`: ${op.summary}.${op.description ? ` ${op.description}` : ''}`, '');
      const params = (op.parameters ?? []).map((p: Json) => resolve(doc, p)!);
      if (params.length) {
        out.push('| parameter | in | type | required | rules |', '|---|---|---|---|---|');
        for (const p of params) out.push(`| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : ''} | ${cell([constraints(p.schema ?? {}), p.description].filter(Boolean).join('; '))} |`);
        out.push('');
      }
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) out.push(`Request body${body.$ref ? ` (\`${refName(body.$ref)}\`)` : ''}:`, '', ...fieldsTable(doc, body), '');
      const answers: string[] = [];
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        if (status.startsWith('2')) {
          const data = dataSchema(doc, response);
          answers.push(`| ${status} | ${data ? `\`data\`: ${cell(typeOf(data))}` : cell(resolve(doc, response)?.description)} |`);
        } else {
          const codes = errorCodes(doc, response);
          answers.push(`| ${status} | ${codes.length ? codes.map((c) => `\`${c}\``).join(', ') : ''}${codes.length ? ': ' : ''}${cell(resolve(doc, response)?.description)} |`);
        }
      }
      out.push('| status | answer |', '|---|---|', ...answers, '');
    }
  }
  out.push('### Schemas', '', 'The `data` of the answers and the request bodies, by name.', '');
  for (const [name, schema] of Object.entries<Json>(doc.components.schemas)) {
    out.push(`#### ${name}`, '', ...(schema.description ? [schema.description, ''] : []), ...fieldsTable(doc, schema), '');
  }
  return out.join('\n').trimEnd();
}

/** docs/api.md with the generated block replaced. */
export function withReference(page: string, reference = renderApiReference()): string {
  const i = page.indexOf(START);
  const j = page.indexOf(END);
  if (i === -1 || j < i) throw new Error(`${API_PAGE} has no ${START} ... ${END} block; add one where the operations belong`);
  return `${page.slice(0, i + START.length)}\n${reference}\n${page.slice(j)}`;
}

if (process.argv[1] && /api-reference\.ts$/.test(process.argv[1])) {
  const file = join(process.cwd(), API_PAGE);
  const page = readFileSync(file, 'utf8');
  const updated = withReference(page);
  if (process.argv.includes('--check')) {
    if (updated !== page) {
      process.stderr.write(`${API_PAGE} is out of date with the OpenAPI document: run npm run docs:api\n`);
      process.exit(1);
    }
    process.stderr.write(`${API_PAGE} matches the OpenAPI document\n`);
  } else {
    writeFileSync(file, updated);
    process.stderr.write(updated === page ? `${API_PAGE} already up to date\n` : `${API_PAGE} updated from the OpenAPI document\n`);
  }
}
