/**
 * What a webhook request may ask, by who sends it (DESIGN.md section 9, docs/portal.md): a portal
 * session's bodies and filters are its application's, its TLS material is PEM text only; what may
 * re-enable a webhook; and the scopes the configuration as merged needs. Pure: the handler
 * (lambda/handlers/webhooks.ts) passes the request's fields and calls the operations with the answers.
 */
import { hasScope, requireScopes } from '../../core/rules/auth';
import { RESOURCE_NAME } from '../../core/rules/validation';
import { validationError } from '../../core/rules/errors';
import { webhookScopes, type WebhookConfig } from './webhooks';

/** The fields of a request these rules read: `application` is set for a portal session only. */
export interface WebhookRequester {
  application?: string;
  scopes: readonly string[];
}

const TLS_FIELDS = ['ca_cert', 'client_cert', 'client_key'] as const;

/**
 * A portal session's body with TLS material as PEM text only: where the runtime accepts file
 * paths (MSG_WEBHOOK_TLS_FILE_PATHS, locally), they name the namespace's folder, which holds the
 * platform's own certificates and keys (docs/portal.md). 422 naming the field, nothing written.
 */
export function pemOnlyForSessions(who: WebhookRequester, body: unknown): unknown {
  if (who.application === undefined || typeof body !== 'object' || body === null) return body;
  const tls = (body as { tls?: unknown }).tls;
  if (typeof tls !== 'object' || tls === null) return body;
  const paths = TLS_FIELDS.filter((f) => {
    const v = (tls as Record<string, unknown>)[f];
    return typeof v === 'string' && !v.trimStart().startsWith('-----BEGIN');
  });
  if (paths.length > 0) throw validationError(paths.map((f) => ({ field: `tls.${f}`, message: 'a portal session sends PEM text (-----BEGIN ...), never a file path' })));
  return body;
}

/**
 * A body as a portal session may send it: its webhooks belong to its application,
 * whatever the body says. Other bodies unchanged (a body that is not an object is refused by parsing).
 */
export function forcedApplication(who: WebhookRequester, raw: unknown): unknown {
  const body = pemOnlyForSessions(who, raw);
  return who.application !== undefined && typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...body, application: who.application } : body;
}

/** `GET /webhooks?application=<uid>`; a portal session always lists its own application's. */
export function applicationFilter(who: WebhookRequester, uid: string | undefined): string | undefined {
  if (who.application !== undefined) return who.application;
  if (uid !== undefined && !RESOURCE_NAME.test(uid)) throw validationError([{ field: 'application', message: 'must be an application uid (1 to 128 characters of A-Z a-z 0-9 . _ -)' }]);
  return uid;
}

/** Only keys that may change a webhook see what can hold a secret (DESIGN.md section 2). */
export const readerOf = (who: WebhookRequester) => ({ manage: hasScope(who.scopes, 'manage') });

/** Whether a body says `"enabled": true`. */
const saysEnabled = (body: unknown) => typeof body === 'object' && body !== null && (body as { enabled?: unknown }).enabled === true;

/**
 * What re-enables a webhook health disabled (clears its health): `"enabled": true` sent as a
 * change. A PATCH names only what it changes, so `"enabled": true` in it is one; a PUT carries
 * every field, and a client writing back what GET showed (`enabled` stays true while health
 * disables) must not re-enable by accident, so a PUT re-enables only when it turns `enabled`
 * from false to true.
 */
export const patchEnables = (body: unknown) => () => saysEnabled(body);
export const putEnables = (body: unknown) => (stored: WebhookConfig) => saysEnabled(body) && !stored.enabled;

/**
 * What a create, PUT or PATCH would leave needs the scopes {@link webhookScopes} names beside the
 * route's `manage` (403 naming the first missing, nothing written): checked on the configuration
 * as merged, so a PATCH that names no hook still needs `publish` on a webhook that has one.
 */
export const allowedFor = (who: WebhookRequester) => <T extends { config: WebhookConfig }>(next: T): T => {
  requireScopes(who.scopes, webhookScopes(next.config));
  return next;
};
