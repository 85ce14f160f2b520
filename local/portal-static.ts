/**
 * Serves the portal (docs/portal.md): the console's build in portal mode at /portal/ on
 * the gateway's origin, and at the API's own path for it (`/api/v1/portal-page`), both by the
 * handler the stack runs there (lambda/handlers/portal-page.ts), as CloudFront forwards /portal/
 * to that path in AWS (lib/constructs/console.ts). Its index answers with the console's security
 * headers, but with the CSP's `frame-ancestors` and `img-src` opened to the origins its namespace
 * allows (`?ns=` of the link). Assets are the console's own files under /console/assets/.
 */
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONSOLE_DIST } from './console-static';
import { API_BASE_PATH, PORTAL_PAGE_PATH } from '../lambda/core/rules/routes';
import { portalHeaders, portalPage } from '../lambda/applications/portal-page';

const PORTAL_PATH = '/portal/';

/** Answers a request under /portal or the API's portal page (true), or leaves it (false). */
export async function servePortal(req: IncomingMessage, res: ServerResponse, url: URL, dist = CONSOLE_DIST): Promise<boolean> {
  const api = url.pathname === `${API_BASE_PATH}${PORTAL_PAGE_PATH}`;
  if (url.pathname !== '/portal' && url.pathname !== PORTAL_PATH && !api) return false;
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    res.writeHead(405, { ...portalHeaders([]), allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
    res.end('The portal is read with GET.\n');
    return true;
  }
  if (url.pathname === '/portal') {
    res.writeHead(308, { ...portalHeaders([]), location: `${PORTAL_PATH}${url.search}` });
    res.end();
    return true;
  }
  // API Gateway hands query strings on as `queryStringParameters` (the last value of a repeated name).
  const r = await portalPage({ httpMethod: method, queryStringParameters: Object.fromEntries(url.searchParams) }, join(dist, 'index.html'));
  const body = Buffer.from(r.body, 'utf8');
  res.writeHead(r.statusCode, { ...(r.headers as Record<string, string>), ...(method === 'HEAD' ? {} : { 'content-length': String(body.length) }) });
  res.end(method === 'HEAD' ? undefined : body);
  return true;
}
