/**
 * The portal page (lambda/handlers/portal-page.ts, docs/portal.md): the console's index.html with
 * the console's security headers, the CSP opened to the origins the namespace allows, and its
 * theme. One GetItem (a projection of the namespace's item).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { CONSOLE_CSP, CONSOLE_HEADERS } from '../../console/security-headers';
import { NAMESPACE_NAME } from '../core/rules/auth';
import { portalCsp, withTheme, type PortalTheme } from '../core/rules/portal';
import { portalSettings } from '../namespaces/storage/namespaces';
import { logger } from '../core/observability';

/** The headers of the portal page for a namespace's allowed origins. */
export function portalHeaders(origins: readonly string[]): Record<string, string> {
  const { 'x-frame-options': _deny, ...rest } = CONSOLE_HEADERS;
  const csp = portalCsp(CONSOLE_CSP, origins);
  // X-Frame-Options cannot name origins; with frame-ancestors set, browsers ignore it anyway
  // (https://www.w3.org/TR/CSP3/#frame-ancestors-and-frame-options), so it stays only when none are allowed.
  return { ...rest, 'content-security-policy': csp, ...(csp.includes("frame-ancestors 'none'") ? { 'x-frame-options': 'DENY' } : {}) };
}

/**
 * The built index.html: beside the bundle in Lambda (lib/constructs/functions.ts copies it there
 * as `portal-index.html`; LAMBDA_TASK_ROOT is the bundle's directory), the file the local runtime
 * names, or the console's build in this checkout. Read per request: a few hundred bytes.
 */
function indexHtml(file = resolve(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), process.env.MSG_PORTAL_INDEX_FILE ?? 'console/dist/index.html')): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The origins and theme of `ns`; none when the name is not a namespace's or the read fails (closed: no framing). */
async function settingsOf(ns: string | undefined): Promise<{ origins: string[]; theme?: PortalTheme }> {
  if (!ns || !NAMESPACE_NAME.test(ns)) return { origins: [] };
  try {
    return await portalSettings(ns);
  } catch (e) {
    logger.warn('portal settings unread; the page is served unframeable and unthemed', { namespace: ns, error: (e as Error).message });
    return { origins: [] };
  }
}

type PageRequest = Pick<APIGatewayProxyEvent, 'httpMethod' | 'queryStringParameters'>;

/** The page's answer; `indexFile` names the built index.html (the local runtime's build). */
export async function portalPage(event: PageRequest, indexFile?: string): Promise<APIGatewayProxyResult> {
  const { origins, theme } = await settingsOf(event.queryStringParameters?.ns ?? undefined);
  const headers = portalHeaders(origins);
  const built = indexHtml(indexFile);
  const html = built === undefined ? undefined : withTheme(built, theme);
  if (html === undefined) {
    return { statusCode: 503, headers: { ...headers, 'content-type': 'text/plain; charset=utf-8', 'retry-after': '30' }, body: 'The portal page is not built: run npm run console:build.\n' };
  }
  // no-cache: the page's headers follow the namespace's origins as soon as they change.
  return { statusCode: 200, headers: { ...headers, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' }, body: event.httpMethod === 'HEAD' ? '' : html };
}

