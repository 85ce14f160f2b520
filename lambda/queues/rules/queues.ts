/**
 * Queue rules (SPEC.md "Queues", DESIGN.md sections 6 and 13): request schemas with the settled
 * ranges and defaults, and retry accounting. Pure. Receipt handles: ./receipt-handles.ts.
 */
import { ApiError } from '../../core/rules/errors';
import { topicFilterProblem, topicNameProblem } from '../../core/rules/topics';
import { intIn, resourceName, withApiError } from '../../core/rules/validation';
import { MAX_DELAY_SECONDS } from '../../core/rules/message';
import { QUEUE_ORDERINGS } from '../../core/rules/ordering';
import * as z from 'zod/mini';
import type { Scope } from '../../core/rules/routes';

export const QUEUE_DEFAULTS = { max_size_mb: 1024, message_ttl_seconds: 86400, max_retries: 3, delay_seconds: 0, ordering: 'none' } as const;
export const CONSUME_DEFAULTS = { max_messages: 1, timeout_seconds: 30, visibility_timeout_seconds: 300 } as const;
/** Consumers seen within this window count in `consumer_count`. */
export const CONSUMER_WINDOW_MS = 5 * 60 * 1000;

const invalidTopicFilter = (filter: string, why: string) =>
  new ApiError(400, 'INVALID_TOPIC_FILTER', `topic_filter "${filter}" is invalid: ${why}. Use MQTT filters like orders/# or orders/+/created.`, {
    field: 'topic_filter',
  });

/** A topic filter field: a string, else 400; MQTT syntax, else 400 INVALID_TOPIC_FILTER. */
export const topicFilterField = () =>
  z.string().check(
    z.superRefine((f, ctx) => {
      const why = topicFilterProblem(f);
      if (why) ctx.addIssue({ code: 'custom', message: why, ...withApiError(invalidTopicFilter(f, why)) });
    }),
  );

/** A topic name field (e.g. a dead-letter topic): invalid names are 422. */
export const topicNameField = () =>
  z.string().check(
    z.superRefine((t, ctx) => {
      const why = topicNameProblem(t);
      if (why) ctx.addIssue({ code: 'custom', message: why });
    }),
  );

export const createQueueSchema = z.object({
  name: resourceName(),
  topic_filter: topicFilterField(),
  max_size_mb: z._default(intIn(1, 102400), QUEUE_DEFAULTS.max_size_mb),
  message_ttl_seconds: z._default(intIn(1, 1209600), QUEUE_DEFAULTS.message_ttl_seconds),
  max_retries: z._default(intIn(0, 1000), QUEUE_DEFAULTS.max_retries),
  dead_letter_topic: z.optional(topicNameField()),
  /** Extension: the delay of every message a publish does not give one (SQS's queue DelaySeconds). */
  delay_seconds: z._default(intIn(0, MAX_DELAY_SECONDS), QUEUE_DEFAULTS.delay_seconds),
  /**
   * Extension: `fifo` makes an SQS FIFO queue (order per partition_key, deduplication by
   * Idempotency-Key). A string first, so another type is 400 and an unknown value 422.
   */
  ordering: z._default(z.pipe(z.string(), z.enum(QUEUE_ORDERINGS)), QUEUE_DEFAULTS.ordering),
});

export const consumeSchema = z.object({
  max_messages: z._default(intIn(1, 100), CONSUME_DEFAULTS.max_messages),
  timeout_seconds: z._default(intIn(0, 30), CONSUME_DEFAULTS.timeout_seconds),
  visibility_timeout_seconds: z._default(intIn(0, 43200), CONSUME_DEFAULTS.visibility_timeout_seconds),
  consumer_id: z.optional(resourceName()),
});

export const ackSchema = z.object({ receipt_handle: z.string().check(z.minLength(1)) });

export const batchAckSchema = z.object({
  entries: z.array(z.object({ message_id: z.string(), receipt_handle: z.string() })).check(z.minLength(1), z.maxLength(100)),
});

/**
 * Whether a message received `receiveCount` times may be delivered again: at most
 * `1 + maxRetries` deliveries in all.
 * @example mayDeliverAgain(2, 1) // false: two deliveries used up one retry
 */
export const mayDeliverAgain = (receiveCount: number, maxRetries: number) => receiveCount < 1 + maxRetries;

/**
 * The scopes a queue create needs beside `manage` (docs/security.md "What each scope allows"): a
 * `dead_letter_topic` makes the service publish to that topic later on the key's behalf, so
 * `publish`, as a webhook's hooks, schedules and redrive do.
 * @example queueScopes({ dead_letter_topic: 'orders/dead' }) // ['publish']
 */
export const queueScopes = (q: { dead_letter_topic?: string }): Scope[] => (q.dead_letter_topic ? ['publish'] : []);

/**
 * A consume answers within this long of its start whatever it finds: API Gateway cuts an answer at
 * 29 s (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html, integration
 * timeout), and the margin covers a cold start and the authorizer.
 */
export const CONSUME_ANSWER_MS = 26_000;

/** Kept back from the invocation's remaining time to write the answer. */
const ANSWER_MARGIN_MS = 1_500;

/**
 * When a consume request must answer, whether the long-poll bulkhead runs the consume once or
 * twice: {@link CONSUME_ANSWER_MS} from `now`, and under Lambda before the invocation ends
 * (`remainingMs`, none locally).
 * @example consumeAnswerDeadline(0, 10_000) // 8500
 */
export const consumeAnswerDeadline = (now: number, remainingMs?: number): number =>
  Math.min(now + CONSUME_ANSWER_MS, remainingMs === undefined ? Infinity : now + remainingMs - ANSWER_MARGIN_MS);
