/**
 * Serves the portal (issue 37, docs/portal.md): the console's build in portal mode at /portal/ on
 * the gateway's origin. Its index answers with the console's security headers, but with the CSP's
 * `frame-ancestors` and `img-src` opened to the origins its namespace allows (`?ns=` of the
 * link; none by default, so the portal cannot be framed and X-Frame-Options stays DENY). Assets
 * are the console's own files under /console/assets/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONSOLE_CSP, CONSOLE_HEADERS } from '../console/security-headers';
import { CONSOLE_DIST } from './console-static';
import { portalCsp } from '../lambda/domain/portal';
import { NAMESPACE_NAME } from '../lambda/domain/auth';
import { portalOrigins } from '../lambda/storage/namespaces';

export const PORTAL_PATH = '/portal/';

/** The headers of the portal page for a namespace's allowed origins. */
export function portalHeaders(origins: readonly string[]): Record<string, string> {
  const { 'x-frame-options': _deny, ...rest } = CONSOLE_HEADERS;
  const csp = portalCsp(CONSOLE_CSP, origins);
  // X-Frame-Options cannot name origins; with frame-ancestors set, browsers ignore it anyway
  // (https://www.w3.org/TR/CSP3/#frame-ancestors-and-frame-options), so it stays only when none are allowed.
  return { ...rest, 'content-security-policy': csp, ...(csp.includes("frame-ancestors 'none'") ? { 'x-frame-options': 'DENY' } : {}) };
}

/** Answers a request under /portal (true), or leaves it (false). */
export async function servePortal(req: IncomingMessage, res: ServerResponse, url: URL, dist = CONSOLE_DIST): Promise<boolean> {
  if (url.pathname !== '/portal' && url.pathname !== PORTAL_PATH) return false;
  const ns = url.searchParams.get('ns');
  const origins = ns && NAMESPACE_NAME.test(ns) ? await portalOrigins(ns).catch(() => []) : [];
  const headers = portalHeaders(origins);
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    res.writeHead(405, { ...headers, allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
    res.end('The portal is read with GET.\n');
    return true;
  }
  if (url.pathname === '/portal') {
    res.writeHead(308, { ...headers, location: `${PORTAL_PATH}${url.search}` });
    res.end();
    return true;
  }
  const index = join(dist, 'index.html');
  if (!existsSync(index)) {
    res.writeHead(404, { ...headers, 'content-type': 'text/plain; charset=utf-8' });
    res.end('The console is not built: run npm run console:build, then reload.\n');
    return true;
  }
  const body = readFileSync(index);
  res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length), 'cache-control': 'no-cache' });
  res.end(method === 'HEAD' ? undefined : body);
  return true;
}
