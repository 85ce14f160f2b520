/**
 * Portal access: a single-use link that signs its holder in to a session scoped to one
 * application of a namespace. Pure rules: credential formats, lifetimes, and which routes a
 * session may call. Link tokens and session credentials are stored only as SHA-256 hashes, like
 * API keys (./auth.ts `hashApiKey`).
 */
import { randomBytes } from 'node:crypto';
import * as z from 'zod/mini';
import { intIn } from './validation';
import type { Route } from './routes';

/**
 * Prefixes that tell the authorizer a bearer credential is a portal link or session, not an API
 * key. A `.` never appears in a generated API key (`{namespace}_{base64url}`: a DNS label, `_`,
 * then base64url).
 */
const LINK_PREFIX = 'plink.';
const SESSION_PREFIX = 'psess.';

export const newLinkToken = () => `${LINK_PREFIX}${randomBytes(32).toString('base64url')}`;
export const newSessionToken = () => `${SESSION_PREFIX}${randomBytes(32).toString('base64url')}`;

export type PortalCredential = 'link' | 'session';
export const credentialKind = (token: string): PortalCredential | undefined =>
  token.startsWith(LINK_PREFIX) ? 'link' : token.startsWith(SESSION_PREFIX) ? 'session' : undefined;

/** A link is valid for 10 minutes and once; the session it opens for `session_days` (default 7, 1 to 30). */
export const LINK_TTL_MS = 10 * 60 * 1000;
export const SESSION_DAYS = { default: 7, min: 1, max: 30 } as const;
export const DAY_MS = 24 * 60 * 60 * 1000;

/** `POST /applications/{uid}/portal-access`. */
export const portalAccessSchema = z.object({
  session_days: z._default(intIn(SESSION_DAYS.min, SESSION_DAYS.max), SESSION_DAYS.default),
});

/**
 * The portal page's address with the link token in its fragment: a fragment never reaches a
 * server, a log or a Referer header (RFC 3986 section 3.5), so the token stays in the browser
 * until the page exchanges it. `ns` lets the page's server answer the namespace's CSP.
 * @example portalUrl('https://api.example.com', 'acme', 'plink.abc') // 'https://api.example.com/portal/?ns=acme#token=plink.abc'
 */
export const portalUrl = (origin: string, namespace: string, token: string) =>
  `${origin}/portal/?ns=${encodeURIComponent(namespace)}#token=${encodeURIComponent(token)}`;

/** A route's shape without its parameter names: `GET /webhooks/{}/status`. */
const shape = (method: string, path: string) => `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;

/**
 * What a portal session may call: its application's webhooks (list, get,
 * create, patch, delete, status, delivery log, replay, secret rotation, test delivery), the event
 * catalog (read), and its own session. Everything else answers 403. Matched by shape, so the
 * event catalog's routes are allowed whatever their parameter is named.
 */
const SESSION_ROUTES = new Set([
  'GET /event-types',
  'GET /event-types/{}',
  'GET /webhooks',
  'POST /webhooks',
  'POST /webhooks/test',
  'GET /webhooks/{}',
  'PATCH /webhooks/{}',
  'DELETE /webhooks/{}',
  'GET /webhooks/{}/status',
  'GET /webhooks/{}/deliveries',
  'POST /webhooks/{}/deliveries/{}/replay',
  'POST /webhooks/{}/replay',
  'POST /webhooks/{}/secret/rotate',
  'GET /portal/session',
]);

/** The one route a link may call: its exchange for a session. */
const LINK_ROUTES = new Set(['POST /portal/session']);

/** Whether a portal credential of `kind` may call `route`; API keys are judged by scopes instead. */
export const portalMayCall = (kind: PortalCredential, route: Pick<Route, 'method' | 'path'>): boolean =>
  (kind === 'link' ? LINK_ROUTES : SESSION_ROUTES).has(shape(route.method, route.path));

/**
 * The scopes a portal credential holds: a session manages its application's webhooks (its routes
 * are {@link SESSION_ROUTES}) and receives and replays their deliveries (`consume`: an enabled
 * webhook and a replay send payloads to its URL, docs/security.md), but publishes nothing (no
 * `publish`, so no hooks); a link holds none.
 */
export const portalScopes = (kind: PortalCredential): string[] => (kind === 'session' ? ['manage', 'consume'] : []);

/** Routes only a portal credential may call (an API key gets 403 on them). */
export const portalOnly = (route: Pick<Route, 'method' | 'path'>) => shape(route.method, route.path).endsWith(' /portal/session');

/**
 * Why `origin` cannot be a portal origin (CSP frame-ancestors and img-src source), or undefined:
 * an https origin (scheme, host, optional port) with nothing after it; http only for loopback.
 * @example portalOriginProblem('https://app.acme.example') // undefined
 */
export function portalOriginProblem(origin: string): string | undefined {
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return `${origin} is not an origin: give https://host[:port]`;
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
  if (u.origin !== origin || !(u.protocol === 'https:' || (loopback && u.protocol === 'http:'))) return `${origin} is not an https origin (https://host[:port], no path)`;
  return undefined;
}

/**
 * The portal page's CSP: the console's, but framing and logos allowed for the namespace's origins
 * (none by default: `frame-ancestors 'none'`). CSP Level 3, frame-ancestors:
 * https://www.w3.org/TR/CSP3/#directive-frame-ancestors
 */
export function portalCsp(base: string, origins: readonly string[]): string {
  const ok = origins.filter((o) => !portalOriginProblem(o));
  return base
    .replace("frame-ancestors 'none'", `frame-ancestors ${ok.length ? ok.join(' ') : "'none'"}`)
    .replace("img-src 'self'", `img-src 'self'${ok.length ? ` ${ok.join(' ')}` : ''}`);
}

/**
 * A namespace's portal theme (docs/portal.md "Theme"): `brand`, a hex colour (`#rgb` or
 * `#rrggbb`) for buttons, links and focus rings, and `logo`, an https URL shown in the header
 * (the page's CSP shows it only from an origin the namespace allows).
 */
export interface PortalTheme {
  brand?: string;
  logo?: string;
}

const BRAND = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/**
 * Why a theme cannot be stored, or undefined.
 * @example portalThemeProblem({ brand: '#c2410c', logo: 'https://app.acme.example/logo.svg' }) // undefined
 * @example portalThemeProblem({ brand: 'red' }) // 'brand red is not a hex colour (#rgb or #rrggbb)'
 */
export function portalThemeProblem(t: PortalTheme): string | undefined {
  if (t.brand !== undefined && !BRAND.test(t.brand)) return `brand ${t.brand} is not a hex colour (#rgb or #rrggbb)`;
  if (t.logo !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(t.logo);
    } catch {
      u = undefined;
    }
    const loopback = u && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
    if (!u || !(u.protocol === 'https:' || (loopback && u.protocol === 'http:')) || t.logo.length > 2048) return `logo ${t.logo} is not an https URL (at most 2048 characters)`;
  }
  return undefined;
}

const escapeAttribute = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The portal's index.html with the namespace's theme in a `<meta name="portal-theme">` of its
 * head (JSON in `content`), which the page reads at start (console/src/theme.ts): no inline style
 * or script, so the CSP stays `'self'`. Unchanged without a theme.
 * @example withTheme('<head></head>', { brand: '#c2410c' }) // '<head><meta name="portal-theme" content="{&quot;brand&quot;:&quot;#c2410c&quot;}"></head>'
 */
export function withTheme(html: string, theme: PortalTheme | undefined): string {
  const t = { ...(theme?.brand ? { brand: theme.brand } : {}), ...(theme?.logo ? { logo: theme.logo } : {}) };
  if (!Object.keys(t).length) return html;
  return html.replace('</head>', `<meta name="portal-theme" content="${escapeAttribute(JSON.stringify(t))}"></head>`);
}
