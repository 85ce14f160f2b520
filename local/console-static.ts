/**
 * Serves the built console (console/dist, `npm run console:build`) at /console/ on the local
 * gateway's origin, so the browser calls the API on its own origin (no CORS), with the same
 * security headers as CloudFront in the stack (console/security-headers.ts). Builds the console
 * when it is missing (`ensureConsoleBuilt`, called by `npm start`).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONSOLE_HEADERS, CONSOLE_PATH } from '../console/security-headers';

/**
 * console/ found from the working directory upwards (this module runs as ESM under tsx and as
 * CommonJS under jest, so neither `__dirname` nor `import.meta` works in both).
 */
function findConsoleDir(from = process.cwd()): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'console', 'vite.config.ts'))) return join(dir, 'console');
    if (dirname(dir) === dir) return join(resolve(from), 'console');
  }
}

const CONSOLE_DIR = findConsoleDir();
export const CONSOLE_DIST = join(CONSOLE_DIR, 'dist');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

export const consoleBuilt = (dist = CONSOLE_DIST) => existsSync(join(dist, 'index.html'));

/** Builds the console with Vite when console/dist has no index.html; returns what it did. */
export async function ensureConsoleBuilt(dist = CONSOLE_DIST): Promise<'present' | 'built'> {
  if (consoleBuilt(dist)) return 'present';
  const { build } = await import('vite');
  await build({ configFile: join(CONSOLE_DIR, 'vite.config.ts'), logLevel: 'warn', mode: 'production' });
  return 'built';
}

/**
 * Answers a request under /console (true), or leaves it to the API (false). GET and HEAD only;
 * a path outside the build or missing is 404 with the same headers.
 */
export function serveConsole(req: IncomingMessage, res: ServerResponse, pathname: string, dist = CONSOLE_DIST): boolean {
  if (pathname !== '/console' && !pathname.startsWith(CONSOLE_PATH)) return false;
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    res.writeHead(405, { ...CONSOLE_HEADERS, allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
    res.end('The console is read with GET.\n');
    return true;
  }
  if (pathname === '/console') {
    res.writeHead(308, { ...CONSOLE_HEADERS, location: CONSOLE_PATH });
    res.end();
    return true;
  }
  let rel: string;
  try {
    rel = decodeURIComponent(pathname.slice(CONSOLE_PATH.length)) || 'index.html';
  } catch {
    rel = '\0';
  }
  const file = normalize(join(dist, rel));
  const inside = file.startsWith(dist + sep) && !rel.includes('\0');
  if (!inside || !existsSync(file) || !statSync(file).isFile()) {
    const missing = !consoleBuilt(dist);
    res.writeHead(404, { ...CONSOLE_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
    res.end(missing ? 'The console is not built: run npm run console:build, then reload.\n' : 'Not found.\n');
    return true;
  }
  const body = readFileSync(file);
  res.writeHead(200, {
    ...CONSOLE_HEADERS,
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': String(body.length),
    // Hashed asset names never change content; index.html must be read again to find new ones.
    'cache-control': rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  res.end(method === 'HEAD' ? undefined : body);
  return true;
}
