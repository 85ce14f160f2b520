/**
 * The webhook group's extension operations (docs/webhooks.md): the delivery log, replay and
 * secret rotation. Thin, like ./webhooks.ts, which serves them beside the configuration
 * operations (one Lambda function per endpoint group).
 */
import type { Operation } from './http';
import { reply } from '../middleware/api-request';
import { parse } from '../domain/validation';
import { bulkReplaySchema, parseListQuery, rotateSchema } from '../domain/delivery-log';
import { listDeliveries } from '../webhooks/delivery-log';
import { replayFailedSince, replayOne } from '../webhooks/replay';
import { rotateSecret } from '../webhooks/rotation';
import { assertWebhookOwned, ownedWebhookConfig } from '../webhooks/operations';
import { requireScopes } from '../domain/auth';
import { replayScopes } from '../domain/webhooks';
import type { ApiRequest } from '../middleware/api-request';

/** A replay runs the webhook's hooks as a delivery does: 403 unless the key may publish (nothing queued). */
const assertMayReplay = async (req: ApiRequest) =>
  requireScopes(req.scopes, replayScopes(await ownedWebhookConfig(req.namespace, req.params.webhook_name, req.application)));

export const webhookExtensionOperations: Record<string, Operation> = {
  // A portal session (issue 37) reaches only its application's webhooks: another's is a 404.
  listDeliveries: async (req) => {
    await assertWebhookOwned(req.namespace, req.params.webhook_name, req.application);
    return reply(await listDeliveries(req.namespace, req.params.webhook_name, parseListQuery(req.query)));
  },

  replayDelivery: async (req) => {
    await assertMayReplay(req);
    return reply(await replayOne(req.namespace, req.params.webhook_name, req.params.message_id, Date.now()));
  },

  replayFailed: async (req) => {
    await assertMayReplay(req);
    const { since } = parse(bulkReplaySchema, req.body);
    return reply(await replayFailedSince(req.namespace, req.params.webhook_name, Date.parse(since), Date.now()));
  },

  rotateSecret: async (req) => {
    await assertWebhookOwned(req.namespace, req.params.webhook_name, req.application);
    const { grace_seconds } = parse(rotateSchema, req.body);
    return reply(await rotateSecret(req.namespace, req.params.webhook_name, grace_seconds, Date.now()));
  },
};
