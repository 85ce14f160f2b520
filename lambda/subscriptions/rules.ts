/**
 * Subscription rules (SPEC.md "Subscriptions", DESIGN.md sections 8 and 13): request schemas with
 * the settled ranges and defaults. Pure.
 */
import { topicFilterField } from '../queues/rules/queues';
import { intIn, resourceName } from '../core/rules/validation';
import * as z from 'zod/mini';

const SUBSCRIPTION_DEFAULTS = { max_size_mb: 512, message_ttl_seconds: 3600 } as const;
const SUBSCRIPTION_CONSUME_DEFAULTS = { max_messages: 10, timeout_seconds: 30 } as const;

export const createSubscriptionSchema = z.object({
  name: resourceName(),
  topic_filter: topicFilterField(),
  max_size_mb: z._default(intIn(1, 102400), SUBSCRIPTION_DEFAULTS.max_size_mb),
  message_ttl_seconds: z._default(intIn(1, 1209600), SUBSCRIPTION_DEFAULTS.message_ttl_seconds),
});

export const subscriptionConsumeSchema = z.object({
  subscriber_id: resourceName(),
  max_messages: z._default(intIn(1, 100), SUBSCRIPTION_CONSUME_DEFAULTS.max_messages),
  timeout_seconds: z._default(intIn(0, 30), SUBSCRIPTION_CONSUME_DEFAULTS.timeout_seconds),
});

/**
 * How stale a subscriber's `last_seen` may get before a consume rewrites it: a tenth of the TTL
 * (at most 30 s), so `subscriber_count` stays right within the TTL without a write per empty poll.
 * @example lastSeenRefreshMs(3600) // 30000
 */
export const lastSeenRefreshMs = (ttlSeconds: number) => Math.min(30_000, ttlSeconds * 100);
