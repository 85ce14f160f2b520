/**
 * Webhooks: configuration (create, list, get, PUT, PATCH, delete), status and the test delivery
 * (DESIGN.md section 9). Thin: parsing, then the operations in ../webhooks/.
 */
import { httpHandler } from './http';
import { reply, type ApiRequest } from '../core/middleware/api-request';
import { parse, parsePaging } from '../core/rules/validation';
import { isoTime } from '../core/rules/envelope';
import { hasScope, requireScopes } from '../core/rules/auth';
import { parseWebhook, parseWebhookPatch, webhookScopes, webhookTestSchema, type WebhookConfig } from '../webhooks/rules/webhooks';
import { createWebhook, deleteWebhook, describeWebhook, listWebhooks, testWebhook, updateWebhook, webhookStatus } from '../webhooks/operations';
import { webhookExtensionOperations } from './webhooks-extensions';
import { listPage } from '../core/rules/response-budget';
import { RESOURCE_NAME } from '../core/rules/validation';
import { validationError } from '../core/rules/errors';

/**
 * A body as a portal session may send it: its webhooks belong to its application,
 * whatever the body says. Other bodies unchanged (a body that is not an object is refused by parsing).
 */
const forcedApplication = (req: ApiRequest, body: unknown = pemOnlyForSessions(req)) =>
  req.application !== undefined && typeof body === 'object' && body !== null && !Array.isArray(body) ? { ...body, application: req.application } : body;

const TLS_FIELDS = ['ca_cert', 'client_cert', 'client_key'] as const;

/**
 * A portal session's body with TLS material as PEM text only: where the runtime accepts file
 * paths (MSG_WEBHOOK_TLS_FILE_PATHS, locally), they name the namespace's folder, which holds the
 * platform's own certificates and keys (docs/portal.md). 422 naming the field, nothing written.
 */
function pemOnlyForSessions(req: ApiRequest, body: unknown = req.body): unknown {
  if (req.application === undefined || typeof body !== 'object' || body === null) return body;
  const tls = (body as { tls?: unknown }).tls;
  if (typeof tls !== 'object' || tls === null) return body;
  const paths = TLS_FIELDS.filter((f) => {
    const v = (tls as Record<string, unknown>)[f];
    return typeof v === 'string' && !v.trimStart().startsWith('-----BEGIN');
  });
  if (paths.length > 0) throw validationError(paths.map((f) => ({ field: `tls.${f}`, message: 'a portal session sends PEM text (-----BEGIN ...), never a file path' })));
  return body;
}

/** `GET /webhooks?application=<uid>`; a portal session always lists its own application's. */
function applicationFilter(req: ApiRequest): string | undefined {
  if (req.application !== undefined) return req.application;
  const uid = req.query.application;
  if (uid !== undefined && !RESOURCE_NAME.test(uid)) throw validationError([{ field: 'application', message: 'must be an application uid (1 to 128 characters of A-Z a-z 0-9 . _ -)' }]);
  return uid;
}

/** Only keys that may change a webhook see what can hold a secret (DESIGN.md section 2). */
const readerOf = (req: ApiRequest) => ({ manage: hasScope(req.scopes, 'manage') });

/** Whether a body says `"enabled": true`. */
const saysEnabled = (body: unknown) => typeof body === 'object' && body !== null && (body as { enabled?: unknown }).enabled === true;

/**
 * What re-enables a webhook health disabled (clears its health): `"enabled": true` sent as a
 * change. A PATCH names only what it changes, so `"enabled": true` in it is one; a PUT carries
 * every field, and a client writing back what GET showed (`enabled` stays true while health
 * disables) must not re-enable by accident, so a PUT re-enables only when it turns `enabled`
 * from false to true.
 */
const patchEnables = (body: unknown) => () => saysEnabled(body);
const putEnables = (body: unknown) => (stored: WebhookConfig) => saysEnabled(body) && !stored.enabled;

/**
 * What a create, PUT or PATCH would leave needs the scopes {@link webhookScopes} names beside the
 * route's `manage` (403 naming the first missing, nothing written): checked on the configuration
 * as merged, so a PATCH that names no hook still needs `publish` on a webhook that has one.
 */
const allowedFor = (req: ApiRequest) => <T extends { config: WebhookConfig }>(next: T): T => {
  requireScopes(req.scopes, webhookScopes(next.config));
  return next;
};

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('webhooks', {
  createWebhook: async (req) => reply(await createWebhook(req.namespace, allowedFor(req)(parseWebhook(forcedApplication(req))), Date.now()), { status: 201 }),

  listWebhooks: async (req) => {
    const { limit, offset } = parsePaging(req.query);
    const { items, total } = await listWebhooks(req.namespace, limit, offset, readerOf(req), applicationFilter(req));
    return reply(listPage('webhooks', items, total, limit, offset)); // under Lambda's 6 MB response limit
  },

  getWebhook: async (req) => reply(await describeWebhook(req.namespace, req.params.webhook_name, readerOf(req), req.application)),

  replaceWebhook: async (req) => {
    const name = req.params.webhook_name;
    // Parsed against the stored configuration: a body may keep its stored TLS client key.
    return reply(await updateWebhook(req.namespace, name, (stored) => allowedFor(req)(parseWebhook(forcedApplication(req), name, stored.config)), Date.now(), { enable: putEnables(req.body), owner: req.application }));
  },

  patchWebhook: async (req) => {
    const name = req.params.webhook_name;
    return reply(await updateWebhook(req.namespace, name, (stored) => allowedFor(req)(parseWebhookPatch(name, stored.config, forcedApplication(req))), Date.now(), { enable: patchEnables(req.body), owner: req.application }));
  },

  deleteWebhook: async (req) => {
    const now = Date.now();
    await deleteWebhook(req.namespace, req.params.webhook_name, now, req.application);
    return reply({ deleted_at: isoTime(now) });
  },

  webhookStatus: async (req) => reply(await webhookStatus(req.namespace, req.params.webhook_name, req.application)),

  testWebhook: async (req) => reply(await testWebhook(req.namespace, parse(webhookTestSchema, pemOnlyForSessions(req)), Date.now())),

  ...webhookExtensionOperations,
});
