/**
 * Every answer is the documented status and code: the table of what each route may answer is read
 * from the OpenAPI document the service serves (lambda/api-docs/, built from the route table and
 * the operation rows, DESIGN.md section 3), not written by hand, so a code the document adds or
 * drops moves the checker with it. The checker judges every ledger entry against that table.
 */
import { buildOpenApi, openApiPath } from '../../lambda/api-docs/openapi';
import { ROUTES } from '../../lambda/core/rules/routes';
import type { Violation } from './checkers';
import type { Entry } from './ledger';

/** Allowed `status` → codes (`''` for an answer without an error code, i.e. a success). */
type Allowed = Map<number, Set<string>>;

/**
 * Answers the gateway gives on any route, outside the document's per-operation responses: 504
 * INTEGRATION_TIMEOUT when a handler passes API Gateway's 29 s (docs/aws-parity.md "Timeouts and
 * crashes"; a loaded machine reaches it).
 */
const GATEWAY: [number, string][] = [[504, 'INTEGRATION_TIMEOUT']];

interface RouteRule {
  method: string;
  pattern: RegExp;
  allowed: Allowed;
}

/** The codes an OpenAPI response names (its error envelope's `error.code` enum), `''` for a success. */
function codesOf(doc: any, response: any): string[] {
  const r = response?.$ref ? doc.components.responses[String(response.$ref).split('/').pop()!] : response;
  const schema = r?.content?.['application/json']?.schema;
  const codes = schema?.allOf?.[1]?.properties?.error?.properties?.code?.enum as string[] | undefined;
  return codes ?? [''];
}

/** One rule per route: its path as a pattern (`{x+}` any levels, `{x}` one) and its documented answers. */
function documentedAnswers(): RouteRule[] {
  const doc: any = buildOpenApi();
  return ROUTES.map((route) => {
    const op = doc.paths[openApiPath(route.path)][route.method.toLowerCase()];
    const allowed: Allowed = new Map();
    for (const [status, response] of Object.entries(op.responses)) allowed.set(Number(status), new Set(codesOf(doc, response)));
    for (const [status, code] of GATEWAY) allowed.set(status, new Set([...(allowed.get(status) ?? []), code]));
    const source = route.path.replace(/\{[^}]+\+\}/g, '.+').replace(/\{[^}]+\}/g, '[^/]+');
    return { method: route.method, pattern: new RegExp(`^${source}$`), allowed };
  });
}

let rules: RouteRule[] | undefined;

/**
 * Entries whose status and code no route of their method and path documents (entries without an
 * answer or without an envelope are the envelope checker's). A path several routes match may answer what any
 * of them documents.
 */
export function answersDocumented(entries: Entry[], table: RouteRule[] = (rules ??= documentedAnswers())): Violation[] {
  const bad = new Map<string, { step: number; n: number }>();
  for (const e of entries) {
    // No answer, or an error answer without a code: the client found no proper envelope, or a 5xx
    // outside the envelope rules, and kept no body; that is the envelope checker's finding.
    if (e.status === 0 || (e.status >= 300 && e.code === undefined)) continue;
    const path = e.path.split('?')[0];
    const matching = table.filter((r) => r.method === e.method && r.pattern.test(path));
    const ok = matching.some((r) => r.allowed.get(e.status)?.has(e.code ?? ''));
    if (ok) continue;
    const route = matching.length ? `${e.method} ${matching[0].pattern.source}` : `${e.method} ${path} (no route)`;
    const k = `${route}: ${e.status}${e.code ? ` ${e.code}` : ''}`;
    const b = bad.get(k) ?? { step: e.step, n: 0 };
    b.n++;
    b.step = Math.min(b.step, e.step);
    bad.set(k, b);
  }
  if (!bad.size) return [];
  const cases = [...bad].sort((a, b) => a[1].step - b[1].step);
  const count = cases.reduce((s, [, b]) => s + b.n, 0);
  return [{ checker: 'answer-undocumented-status-code', step: cases[0][1].step, count, evidence: `${count} answers outside the OpenAPI document's responses: ${cases.slice(0, 4).map(([k, b]) => `${k} x${b.n} (first at step ${b.step})`).join('; ')}` }];
}
