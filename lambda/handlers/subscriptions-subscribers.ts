/** `GET /subscriptions/{name}/subscribers` (docs/console.md), served by ./subscriptions.ts. Thin: ../console/subscribers.ts. */
import type { Operation } from './http';
import { reply } from '../core/middleware/api-request';
import { memberLimit } from '../console/member-limit';
import { subscriptionSubscribers } from '../console/subscribers';

export const subscriberOperations: Record<string, Operation> = {
  listSubscribers: async (req) => reply(await subscriptionSubscribers(req.namespace, req.params.subscription_name, memberLimit(req.query.limit))),
};
