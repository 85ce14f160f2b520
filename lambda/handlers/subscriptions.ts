/**
 * Subscriptions: create, list, get, delete, and consume by subscriber id with long polling
 * (DESIGN.md section 8). Thin: parsing, then the subscription operations in ../subscriptions/.
 */
import { httpHandler } from './http';
import { subscriberOperations } from './subscriptions-subscribers';
import { reply } from '../core/middleware/api-request';
import { parse, parsePaging } from '../core/rules/validation';
import { createSubscriptionSchema, subscriptionConsumeSchema } from '../subscriptions/rules';
import { isoTime } from '../core/rules/envelope';
import {
  consumeSubscription, createSubscription, deleteSubscription, describeSubscription, listSubscriptions,
} from '../subscriptions/operations';
import { countMetric, METRIC, timeConsume } from '../core/observability';
import { withLongPollSlot } from '../queues/bulkhead';
import { listPage } from '../core/rules/response-budget';

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('subscriptions', {
  createSubscription: async (req) =>
    reply(await createSubscription(req.namespace, parse(createSubscriptionSchema, req.body), Date.now()), { status: 201 }),

  listSubscriptions: async (req) => {
    const { limit, offset } = parsePaging(req.query);
    const { items, total } = await listSubscriptions(req.namespace, limit, offset, Date.now());
    return reply(listPage('subscriptions', items, total, limit, offset)); // under Lambda's 6 MB response limit
  },

  getSubscription: async (req) => reply(await describeSubscription(req.namespace, req.params.subscription_name, Date.now())),

  deleteSubscription: async (req) => {
    const now = Date.now();
    await deleteSubscription(req.namespace, req.params.subscription_name, now);
    return reply({ deleted_at: isoTime(now) });
  },

  consume: async (req) => {
    const input = parse(subscriptionConsumeSchema, req.body);
    // The long-poll bulkhead grants the wait (lambda/queues/bulkhead.ts).
    const messages = await withLongPollSlot(req, input.timeout_seconds, (timeout_seconds) => timeConsume('subscription', () => consumeSubscription(req.namespace, req.params.subscription_name, {
      ...input,
      timeout_seconds,
      deadlineMs: req.lambda ? Date.now() + req.lambda.getRemainingTimeInMillis() - 1500 : undefined,
    })), { seconds: 1, isEmpty: (got) => got.length === 0 });
    countMetric(METRIC.consumed, messages.length, { namespace: req.namespace, dimensions: { kind: 'subscription' } });
    return reply({ messages, count: messages.length });
  },
  ...subscriberOperations,
});
