/**
 * The webhook group's extension operations (docs/webhooks.md): the delivery log, replay and
 * secret rotation. Thin, like ./webhooks.ts, which serves them beside the configuration
 * operations (one Lambda function per endpoint group).
 */
import type { Operation } from './http';
import { reply } from '../core/middleware/api-request';
import { parse } from '../core/rules/validation';
import { bulkReplaySchema, MAX_BULK_REPLAY, parseListQuery, rotateSchema } from '../webhooks/rules/delivery-log';
import { listDeliveries } from '../webhooks/delivery-log';
import { replayFailedSince, replayOne } from '../webhooks/replay';
import { rotateSecret } from '../webhooks/rotation';
import { ownedWebhook } from '../webhooks/application-scope';
import { requireScopes } from '../core/rules/auth';
import { replayScopes } from '../webhooks/rules/webhooks';
import type { ApiRequest } from '../core/middleware/api-request';
import type { WebhookItem } from '../webhooks/storage/webhooks';

/**
 * What a replay asks of the webhook it read: a portal session's application owns it
 * (another's is a 404), and, since a replay runs the webhook's hooks as a delivery does, the key
 * may publish when it has one (403, nothing queued). Judged on the replay's own read.
 */
const mayReplay = (req: ApiRequest) => (w: WebhookItem) => requireScopes(req.scopes, replayScopes(ownedWebhook(w, req.params.webhook_name, req.application).config));

// A portal session reaches only its application's webhooks (`req.application`), judged on the
// read each operation acts on: the platform may move a webhook between two reads.
export const webhookExtensionOperations: Record<string, Operation> = {
  listDeliveries: async (req) => reply(await listDeliveries(req.namespace, req.params.webhook_name, parseListQuery(req.query), req.application)),

  replayDelivery: async (req) => reply(await replayOne(req.namespace, req.params.webhook_name, req.params.message_id, Date.now(), mayReplay(req))),

  replayFailed: async (req) => {
    const { since } = parse(bulkReplaySchema, req.body);
    return reply(await replayFailedSince(req.namespace, req.params.webhook_name, Date.parse(since), Date.now(), MAX_BULK_REPLAY, mayReplay(req)));
  },

  rotateSecret: async (req) => {
    const { grace_seconds } = parse(rotateSchema, req.body);
    return reply(await rotateSecret(req.namespace, req.params.webhook_name, grace_seconds, Date.now(), req.application));
  },
};
