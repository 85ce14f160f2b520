/**
 * Portal access: `POST /applications/{uid}/portal-access` issues a single-use
 * link, `POST /portal/session` exchanges it for a session scoped to that application,
 * `DELETE /applications/{uid}/portal-access` ends every link and session of the application.
 */
import { ApiError, invalidApiKey } from '../core/rules/errors';
import { applicationNotFound, applicationView } from './rules';
import { isoTime } from '../core/rules/envelope';
import { DAY_MS, LINK_TTL_MS, newLinkToken, newSessionToken, portalUrl } from '../core/rules/portal';
import { bearerKey } from '../core/rules/auth';
import { bumpPortalGeneration } from './storage/applications';
import { exchangeLink, getSession, putLink } from './storage/portal';
import { getApiKeyById } from '../namespaces/storage/api-keys';
import { requireApplication } from './operations';

/** The hash of the API key `keyId` of the namespace: the usage key its portal sessions are metered under. */
async function usageKeyOf(ns: string, keyId: string): Promise<string> {
  const rec = await getApiKeyById(ns, keyId);
  // The authorizer found this key a moment ago; a key revoked since cannot create links.
  if (!rec || rec.revoked_at) throw invalidApiKey();
  return rec.hash;
}

/**
 * Where the portal page is: the origin CloudFront names on a link made through the console's
 * distribution (`x-portal-origin`, lib/constructs/console.ts), else the request's own. Whoever
 * sends the header gets a link there: only the caller, who holds the link anyway.
 */
function portalOrigin(header: string | undefined, protocol: string, host: string): string {
  try {
    if (header && new URL(header).origin === header && /^https?:$/.test(new URL(header).protocol)) return header;
  } catch {
    // not an origin: the request's own
  }
  return `${protocol}://${host}`;
}

export async function createPortalAccess(o: { ns: string; uid: string; keyId: string; sessionDays: number; protocol: string; host: string; portalOriginHeader?: string; now: number }) {
  const app = await requireApplication(o.ns, o.uid);
  const token = newLinkToken();
  const expiresAt = o.now + LINK_TTL_MS;
  await putLink(token, {
    namespace: o.ns,
    application: o.uid,
    generation: app.portal_generation ?? 0,
    ...(app.incarnation !== undefined ? { incarnation: app.incarnation } : {}),
    usage_key: await usageKeyOf(o.ns, o.keyId),
    session_days: o.sessionDays,
    created_at: o.now,
    expires_at: expiresAt,
  });
  return { url: portalUrl(portalOrigin(o.portalOriginHeader, o.protocol, o.host), o.ns, token), expires_at: isoTime(expiresAt), session_expires_after_days: o.sessionDays };
}

export async function revokePortalAccess(ns: string, uid: string, now: number) {
  if (!(await bumpPortalGeneration(ns, uid))) throw applicationNotFound(uid);
  return { revoked_at: isoTime(now) };
}

/** `POST /portal/session` with `Authorization: Bearer <link token>` (the authorizer let only a valid link through). */
export async function exchangePortalLink(ns: string, authorization: string | undefined, now: number) {
  const link = bearerKey(authorization) ?? '';
  const sessionToken = newSessionToken();
  // The days come from the link itself, read in the exchange.
  const out = await exchangeLink(link, sessionToken, (days) => days * DAY_MS, now);
  if ('refused' in out) {
    throw new ApiError(401, 'INVALID_API_KEY', out.refused === 'revoked'
      ? 'This portal link was revoked; ask for a new one.'
      : 'This portal link was already used or has expired (links are valid once, for 10 minutes); ask for a new one.');
  }
  const app = await requireApplication(ns, out.session.application);
  return {
    session_token: sessionToken,
    expires_at: isoTime(out.session.expires_at),
    namespace: ns,
    application: { uid: app.uid, name: app.name ?? null },
  };
}

/** `GET /portal/session`: who the session is (the portal page shows it). */
export async function describePortalSession(ns: string, authorization: string | undefined) {
  const s = await getSession(bearerKey(authorization) ?? '');
  if (!s) throw invalidApiKey();
  const app = await requireApplication(ns, s.application);
  return { namespace: ns, application: applicationView(app), expires_at: isoTime(s.expires_at) };
}
