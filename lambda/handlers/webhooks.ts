/**
 * Webhooks: configuration (create, list, get, PUT, PATCH, delete), status and the test delivery
 * (DESIGN.md section 9). Thin: parsing, the request rules of ../webhooks/rules/requests.ts, then
 * the operations in ../webhooks/.
 */
import { httpHandler } from './http';
import { reply } from '../core/middleware/api-request';
import { parse, parsePaging } from '../core/rules/validation';
import { isoTime } from '../core/rules/envelope';
import { parseWebhook, parseWebhookPatch, webhookTestSchema } from '../webhooks/rules/webhooks';
import { allowedFor, applicationFilter, forcedApplication, patchEnables, pemOnlyForSessions, putEnables, readerOf } from '../webhooks/rules/requests';
import { createWebhook, deleteWebhook, describeWebhook, listWebhooks, testWebhook, updateWebhook, webhookStatus } from '../webhooks/operations';
import { webhookExtensionOperations } from './webhooks-extensions';
import { listPage } from '../core/rules/response-budget';

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('webhooks', {
  createWebhook: async (req) => reply(await createWebhook(req.namespace, allowedFor(req)(parseWebhook(forcedApplication(req, req.body))), Date.now()), { status: 201 }),

  listWebhooks: async (req) => {
    const { limit, offset } = parsePaging(req.query);
    const { items, total } = await listWebhooks(req.namespace, limit, offset, readerOf(req), applicationFilter(req, req.query.application));
    return reply(listPage('webhooks', items, total, limit, offset)); // under Lambda's 6 MB response limit
  },

  getWebhook: async (req) => reply(await describeWebhook(req.namespace, req.params.webhook_name, readerOf(req), req.application)),

  replaceWebhook: async (req) => {
    const name = req.params.webhook_name;
    // Parsed against the stored configuration: a body may keep its stored TLS client key.
    return reply(await updateWebhook(req.namespace, name, (stored) => allowedFor(req)(parseWebhook(forcedApplication(req, req.body), name, stored.config)), Date.now(), { enable: putEnables(req.body), owner: req.application }));
  },

  patchWebhook: async (req) => {
    const name = req.params.webhook_name;
    return reply(await updateWebhook(req.namespace, name, (stored) => allowedFor(req)(parseWebhookPatch(name, stored.config, forcedApplication(req, req.body))), Date.now(), { enable: patchEnables(req.body), owner: req.application }));
  },

  deleteWebhook: async (req) => {
    const now = Date.now();
    await deleteWebhook(req.namespace, req.params.webhook_name, now, req.application);
    return reply({ deleted_at: isoTime(now) });
  },

  webhookStatus: async (req) => reply(await webhookStatus(req.namespace, req.params.webhook_name, req.application)),

  testWebhook: async (req) => reply(await testWebhook(req.namespace, parse(webhookTestSchema, pemOnlyForSessions(req, req.body)), Date.now())),

  ...webhookExtensionOperations,
});
