/**
 * One row per route-table operation (lambda/core/rules/routes.ts): the zod schema its handler parses
 * the body with (lambda/handlers/*.ts), the name of its response `data` schema (./schemas.ts) and
 * the error codes it can answer beyond those every operation shares. ./openapi.ts refuses to build
 * a document for a route without a row here, and test/unit/openapi.test.ts fails on a row without
 * a route, so the table and the routes cannot drift apart.
 */
import type * as z from 'zod/mini';
import { batchSchema, messageSchema } from '../core/rules/message';
import { ackSchema, batchAckSchema, consumeSchema, createQueueSchema } from '../queues/rules/queues';
import { commitSchema, createStreamSchema, streamConsumeSchema } from '../streams/rules';
import { createSubscriptionSchema, subscriptionConsumeSchema } from '../subscriptions/rules';
import { webhookSchema, webhookTestSchema } from '../webhooks/rules/webhooks';
import { createScheduleSchema, patchScheduleSchema, replaceScheduleSchema } from '../schedules/rules/schedules';
import { bulkReplaySchema, rotateSchema, ROTATION_GRACE, MAX_BULK_REPLAY } from '../webhooks/rules/delivery-log';
import type { Route } from '../core/rules/routes';
import { CATALOG_OPERATIONS } from './catalog-docs';
import { CONSOLE_OPERATIONS } from './console-docs';
import { APPLICATION_OPERATIONS } from './applications-docs';
import type { JsonSchema } from './schemas';

export interface OperationDoc {
  /** Unique across the API (`consume` exists in three groups). */
  operationId: string;
  summary: string;
  description?: string;
  /** The zod schema the handler parses the JSON body with; null when the operation reads no body. */
  request: z.ZodMiniType | null;
  /** Changes to the request schema where the handler does more than parse it (PUT and PATCH). */
  adjustRequest?: (schema: JsonSchema) => JsonSchema;
  /** Name of the response `data` schema in ./schemas.ts. */
  response: string;
  /** `limit` and `offset` query parameters (DESIGN.md section 11). */
  paging?: true;
  /** 404 codes besides NAMESPACE_NOT_FOUND (the Host rule applies to every operation). */
  notFound?: string[];
  /** 409 codes. */
  conflict?: string[];
  /** The body has a topic filter: 400 INVALID_TOPIC_FILTER. */
  topicFilter?: true;
  /** Takes the `Idempotency-Key` header (publishes). */
  idempotent?: true;
  /** 413 MESSAGE_TOO_LARGE from the handler's payload limits (DESIGN.md section 5). */
  payloadLimits?: true;
  /** 413 MESSAGE_TOO_LARGE for an answer larger than one Lambda response carries: when it is given. */
  tooLargeAnswer?: string;
  /** Query parameters beyond paging (OpenAPI Parameter Objects). */
  query?: Record<string, unknown>[];
  /** 429 codes besides RATE_LIMIT_EXCEEDED, each with `Retry-After`. */
  tooMany?: string[];
}

/** Key of a route's row: operation names repeat across groups (`queues.consume`, `streams.consume`). */
export const operationKey = (r: Pick<Route, 'group' | 'operation'>) => `${r.group}.${r.operation}`;

/** PUT takes the name from the path; a body may repeat it (it must then match). */
const nameFromPath = (s: JsonSchema): JsonSchema => ({ ...s, required: (s.required as string[]).filter((f) => f !== 'name') });

/** PATCH merges the given fields into the stored configuration; `null` resets a field. */
function mergePatch(s: JsonSchema): JsonSchema {
  const props = s.properties as Record<string, JsonSchema>;
  const nullableProps = Object.fromEntries(
    Object.entries(props).map(([k, v]) => {
      const { default: _d, ...rest } = v;
      return [k, { anyOf: [rest, { type: 'null' }] }];
    }),
  );
  const { required: _r, ...rest } = s;
  return {
    ...rest,
    properties: nullableProps,
    description: 'Any subset of the configuration fields: given fields replace the stored ones (top-level merge), a field given as null returns to its default or is removed; the result is validated like a create.',
  };
}

const QUEUE_404 = ['QUEUE_NOT_FOUND'];
const STREAM_404 = ['STREAM_NOT_FOUND'];
const SUBSCRIPTION_404 = ['SUBSCRIPTION_NOT_FOUND'];
const WEBHOOK_404 = ['WEBHOOK_NOT_FOUND'];

/**
 * The publish field `application` (docs/portal.md), described here rather than in its zod schema:
 * `z.describe` would bring zod's registries into the publish function's bundle.
 */
function describeApplication(message: JsonSchema): JsonSchema {
  const props = message.properties as Record<string, JsonSchema>;
  props.application = {
    ...props.application,
    description:
      'Extension: the uid of the application the message is for. Webhooks of that application receive it; webhooks of another application never do (nor any message without `application`); webhooks of no application receive it as usual. Kept as the property `x-application`. An application that does not exist: 404 APPLICATION_NOT_FOUND, nothing stored',
  };
  return message;
}

export const OPERATIONS: Record<string, OperationDoc> = {
  'namespace.getNamespace': { operationId: 'getNamespace', summary: 'Get the namespace of the API key', request: null, response: 'Namespace' },

  'publish.publish': {
    operationId: 'publish',
    summary: 'Publish a message to a topic',
    description:
      'Stores the message in every queue, stream and subscription whose filter matches the topic and queues it for every matching webhook before answering 201 (read-your-writes). A topic nothing matches answers 404 TOPIC_NOT_FOUND and stores nothing. When the event type that applies to the topic enforces its schema, a payload that is not JSON or fails it is 422 VALIDATION_ERROR with `details.violations` (`instance_path`, `keyword`), and nothing is stored.',
    request: messageSchema,
    adjustRequest: describeApplication,
    response: 'PublishResult',
    notFound: ['TOPIC_NOT_FOUND', 'APPLICATION_NOT_FOUND'],
    // LIMIT_EXCEEDED: the namespace's quotas on messages held for delays beyond 900 s.
    conflict: ['IDEMPOTENCY_KEY_IN_USE', 'LIMIT_EXCEEDED'],
    idempotent: true,
    payloadLimits: true,
  },
  'publish.publishBatch': {
    operationId: 'publishBatch',
    summary: 'Publish 1 to 100 messages to a topic, all or nothing',
    description: 'Every item is validated before anything is stored. The body may be at most 1 MiB, each payload at most 256 KiB. An enforced event-type schema refuses the whole batch (422) when any payload fails it; `details.violations[].index` names each such message.',
    request: batchSchema,
    adjustRequest: (schema) => {
      const items = (schema.properties as Record<string, JsonSchema>).messages.items as JsonSchema;
      describeApplication(items);
      return schema;
    },
    response: 'BatchPublishResult',
    notFound: ['TOPIC_NOT_FOUND', 'APPLICATION_NOT_FOUND'],
    // LIMIT_EXCEEDED: the namespace's quotas on messages held for delays beyond 900 s.
    conflict: ['IDEMPOTENCY_KEY_IN_USE', 'LIMIT_EXCEEDED'],
    idempotent: true,
    payloadLimits: true,
  },

  'publish.cancelDelivery': {
    operationId: 'cancelDelivery',
    summary: 'Cancel a message held for a delay beyond 900 s (extension)',
    description:
      'A message published with `delay_seconds` above 900 or a `deliver_at` more than 15 minutes ahead is held by the service until 14 minutes before its time. Until then it can be cancelled: its queues never see it and their `message_count` drops. A repeated cancel answers the same. 409 ALREADY_DELIVERED once it was handed over; 404 MESSAGE_NOT_FOUND for a message that was never held (shorter delays live in SQS and cannot be cancelled).',
    request: null,
    response: 'DeliveryCancelled',
    notFound: ['MESSAGE_NOT_FOUND'],
    conflict: ['ALREADY_DELIVERED'],
  },

  'queues.createQueue': { operationId: 'createQueue', summary: 'Create a queue', request: createQueueSchema, response: 'QueueSummary', conflict: ['QUEUE_ALREADY_EXISTS', 'LIMIT_EXCEEDED'], topicFilter: true },
  'queues.listQueues': { operationId: 'listQueues', summary: 'List queues by name', request: null, response: 'QueueList', paging: true },
  'queues.getQueue': { operationId: 'getQueue', summary: 'Get a queue with its settings and counters', request: null, response: 'Queue', notFound: QUEUE_404 },
  'queues.deleteQueue': {
    operationId: 'deleteQueue',
    summary: 'Delete a queue and all its messages',
    description: 'The name is reusable at once; the messages are purged in the background and a recreated queue never sees them.',
    request: null,
    response: 'Deleted',
    notFound: QUEUE_404,
  },
  'queues.consume': {
    operationId: 'consumeQueue',
    summary: 'Receive messages from a queue (long polling)',
    description:
      'Claims up to max_messages visible messages, oldest first, and hides them for visibility_timeout_seconds. Waits up to timeout_seconds for a first message (the AWS deployment caps the wait below API Gateway\'s 29 s integration timeout). A message is delivered at most 1 + max_retries times, then dead-lettered or dropped.',
    request: consumeSchema,
    response: 'QueueConsumeResult',
    notFound: QUEUE_404,
    // SQS's in-flight quota (about 120,000 per standard queue) reached before anything was collected.
    tooMany: ['TOO_MANY_IN_FLIGHT'],
  },
  'queues.ackBatch': {
    operationId: 'ackQueueMessages',
    summary: 'Acknowledge up to 100 messages (extension)',
    description: 'Each entry is judged like a single ack; the answer is 200 with one result per entry in request order.',
    request: batchAckSchema,
    response: 'BatchAckResult',
    notFound: QUEUE_404,
  },
  'queues.ack': {
    operationId: 'ackQueueMessage',
    summary: 'Acknowledge (delete) a received message',
    request: ackSchema,
    response: 'AckResult',
    notFound: [...QUEUE_404, 'MESSAGE_NOT_FOUND'],
    conflict: ['INVALID_RECEIPT_HANDLE'],
  },

  'streams.createStream': { operationId: 'createStream', summary: 'Create a stream', request: createStreamSchema, response: 'StreamCreated', conflict: ['STREAM_ALREADY_EXISTS', 'LIMIT_EXCEEDED'], topicFilter: true },
  'streams.listStreams': { operationId: 'listStreams', summary: 'List streams by name', request: null, response: 'StreamList', paging: true },
  'streams.getStream': { operationId: 'getStream', summary: 'Get a stream with its settings, counters and offsets', request: null, response: 'Stream', notFound: STREAM_404 },
  'streams.deleteStream': { operationId: 'deleteStream', summary: 'Delete a stream and all its messages', request: null, response: 'Deleted', notFound: STREAM_404 },
  'streams.consume': {
    operationId: 'consumeStream',
    summary: 'Read messages from a stream by offset (long polling)',
    description:
      'Returns messages with offset >= the start: start_offset (`earliest`, `latest` or an offset), else the group\'s committed offset, else `earliest`. Does not commit. `partition` limits the read to one partition.',
    request: streamConsumeSchema,
    response: 'StreamConsumeResult',
    notFound: STREAM_404,
  },
  'streams.commitOffset': {
    operationId: 'commitStreamOffset',
    summary: "Commit a consumer group's position",
    description: 'The offset is the next one to read; above latest_offset is 422.',
    request: commitSchema,
    response: 'CommitResult',
    notFound: STREAM_404,
  },

  'subscriptions.createSubscription': {
    operationId: 'createSubscription',
    summary: 'Create a subscription',
    request: createSubscriptionSchema,
    response: 'SubscriptionSummary',
    conflict: ['SUBSCRIPTION_ALREADY_EXISTS', 'LIMIT_EXCEEDED'],
    topicFilter: true,
  },
  'subscriptions.listSubscriptions': { operationId: 'listSubscriptions', summary: 'List subscriptions by name', request: null, response: 'SubscriptionList', paging: true },
  'subscriptions.getSubscription': { operationId: 'getSubscription', summary: 'Get a subscription with its settings and counters', request: null, response: 'Subscription', notFound: SUBSCRIPTION_404 },
  'subscriptions.deleteSubscription': { operationId: 'deleteSubscription', summary: 'Delete a subscription', request: null, response: 'Deleted', notFound: SUBSCRIPTION_404 },
  'subscriptions.consume': {
    operationId: 'consumeSubscription',
    summary: "Receive the messages after a subscriber's cursor (long polling)",
    description: 'Every subscriber id has its own cursor and receives every retained message once; the cursor advances atomically with the read.',
    request: subscriptionConsumeSchema,
    response: 'SubscriptionConsumeResult',
    notFound: SUBSCRIPTION_404,
  },

  'webhooks.createWebhook': {
    operationId: 'createWebhook',
    summary: 'Create a webhook (extension)',
    description: 'The answer is the only one that carries the signing secret. Targets that resolve to private, loopback or link-local addresses are refused with 422 on `url` unless the operator allows them.',
    request: webhookSchema,
    response: 'WebhookCreated',
    conflict: ['WEBHOOK_ALREADY_EXISTS', 'LIMIT_EXCEEDED'],
    topicFilter: true,
  },
  'webhooks.listWebhooks': {
    operationId: 'listWebhooks',
    summary: 'List webhooks by name (extension)',
    request: null,
    response: 'WebhookList',
    paging: true,
    query: [{ name: 'application', in: 'query', required: false, description: 'Only the webhooks of this application (its uid); a portal session always sees only its own', schema: { type: 'string' } }],
  },
  'webhooks.testWebhook': {
    operationId: 'testWebhook',
    summary: 'Send one synthetic delivery to a URL',
    description: "Signed with a throwaway secret, no retries; the answer never echoes the target's body.",
    request: webhookTestSchema,
    response: 'WebhookTestResult',
    topicFilter: true,
  },
  'webhooks.getWebhook': { operationId: 'getWebhook', summary: 'Get a webhook configuration (extension)', request: null, response: 'Webhook', notFound: WEBHOOK_404 },
  'webhooks.replaceWebhook': {
    operationId: 'replaceWebhook',
    summary: 'Replace a webhook configuration (extension)',
    description: 'Fields left out return to their defaults. The stored secret stays unless the body gives a new one; `name`, when given, must match the path.',
    request: webhookSchema,
    adjustRequest: nameFromPath,
    response: 'Webhook',
    notFound: WEBHOOK_404,
    conflict: ['CONFLICT', 'LIMIT_EXCEEDED'],
    topicFilter: true,
  },
  'webhooks.patchWebhook': {
    operationId: 'patchWebhook',
    summary: 'Change some fields of a webhook configuration (extension)',
    request: webhookSchema,
    adjustRequest: mergePatch,
    response: 'Webhook',
    notFound: WEBHOOK_404,
    conflict: ['CONFLICT', 'LIMIT_EXCEEDED'],
    topicFilter: true,
  },
  'webhooks.deleteWebhook': { operationId: 'deleteWebhook', summary: 'Delete a webhook (extension)', request: null, response: 'Deleted', notFound: WEBHOOK_404 },
  'webhooks.webhookStatus': { operationId: 'getWebhookStatus', summary: 'Get delivery counters of a webhook', request: null, response: 'WebhookStatus', notFound: WEBHOOK_404 },

  'schedules.createSchedule': {
    operationId: 'createSchedule',
    summary: 'Create a schedule (extension)',
    description:
      'Publishes `payload` (with `{{.scheduled_time}}` and `{{.schedule}}` filled in) to `topic` at every time of a 5-field `cron` in `timezone` (IANA, default UTC), or `every` N seconds (at least 60), between `start_at` and `end_at`. At most 1,000 schedules per namespace by default (409 SCHEDULE_LIMIT_EXCEEDED).',
    request: createScheduleSchema,
    response: 'Schedule',
    conflict: ['SCHEDULE_ALREADY_EXISTS', 'SCHEDULE_LIMIT_EXCEEDED'],
    payloadLimits: true,
  },
  'schedules.listSchedules': {
    operationId: 'listSchedules',
    summary: 'List schedules by name (extension)',
    request: null,
    response: 'ScheduleList',
    query: [
      { name: 'limit', in: 'query', required: false, description: 'Page size; not an integer: 400, out of range: 422', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
      { name: 'cursor', in: 'query', required: false, description: '`next_cursor` of the previous page; another value is 422', schema: { type: 'string' } },
    ],
  },
  'schedules.getSchedule': { operationId: 'getSchedule', summary: 'Get a schedule with its next and last run (extension)', request: null, response: 'Schedule', notFound: ['SCHEDULE_NOT_FOUND'] },
  'schedules.replaceSchedule': {
    operationId: 'replaceSchedule',
    summary: 'Replace a schedule (extension)',
    description: 'Fields left out return to their defaults; the next run is computed again from now, except a run already due and not made yet, which is kept. `name`, when given, must match the path.',
    request: replaceScheduleSchema,
    response: 'Schedule',
    notFound: ['SCHEDULE_NOT_FOUND'],
    conflict: ['CONFLICT'],
    payloadLimits: true,
  },
  'schedules.patchSchedule': {
    operationId: 'patchSchedule',
    summary: 'Change some fields of a schedule (extension)',
    description: 'Given fields replace the stored ones; `cron` replaces `every` and the other way round; null clears `start_at` or `end_at`. The result is validated like a create.',
    request: patchScheduleSchema,
    response: 'Schedule',
    notFound: ['SCHEDULE_NOT_FOUND'],
    conflict: ['CONFLICT'],
    payloadLimits: true,
  },
  'schedules.deleteSchedule': { operationId: 'deleteSchedule', summary: 'Delete a schedule (extension)', request: null, response: 'Deleted', notFound: ['SCHEDULE_NOT_FOUND'] },

  'webhooks.listDeliveries': {
    operationId: 'listWebhookDeliveries',
    summary: 'List delivery attempts, newest first (extension)',
    description:
      'One entry per attempt of the last 7 days, bodies never stored: message id, attempt number, time, duration, HTTP status, the one-line reason of a failure and whether it was the last attempt. Pages by `cursor` (the `next_cursor` of the previous page). An entry shows a moment after its attempt. A portal session sees only the attempts of messages addressed to its application, so its page may hold fewer than `limit`.',
    request: null,
    response: 'WebhookDeliveryList',
    notFound: WEBHOOK_404,
    query: [
      { name: 'limit', in: 'query', required: false, description: 'Page size; not an integer: 400, out of range: 422', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
      { name: 'cursor', in: 'query', required: false, description: '`next_cursor` of the previous page; another value is 400', schema: { type: 'string' } },
      { name: 'status', in: 'query', required: false, description: 'Only attempts that failed, or that succeeded; another value is 400', schema: { type: 'string', enum: ['failed', 'succeeded'] } },
      { name: 'message_id', in: 'query', required: false, description: 'Only the attempts of this message', schema: { type: 'string' } },
    ],
  },
  'webhooks.replayDelivery': {
    operationId: 'replayWebhookDelivery',
    summary: 'Deliver a message again (extension)',
    description:
      'Queues a new delivery of a message whose delivery to this webhook failed in the last 7 days: same body and `webhook-id`, signed afresh, with the SSRF guard, retry policy, hooks and status counters of any delivery. 404 MESSAGE_NOT_FOUND when no failed delivery of it is retained, or when the webhook as it is now does not carry it (a webhook of an application replays only messages addressed to that application).',
    request: null,
    response: 'WebhookReplay',
    notFound: [...WEBHOOK_404, 'MESSAGE_NOT_FOUND'],
  },
  'webhooks.replayFailed': {
    operationId: 'replayWebhookFailures',
    summary: 'Deliver again every delivery that failed since a time (extension)',
    description: `Queues a new delivery of each message whose delivery to this webhook ended in failure at or after \`since\` (within the last 7 days) and has not been delivered by a replay since, oldest first, at most ${MAX_BULK_REPLAY} per call; \`next_since\` says where to continue when more are left. Messages the webhook as it is now does not carry (addressed to another application) are left out.`,
    request: bulkReplaySchema,
    response: 'WebhookBulkReplay',
    notFound: WEBHOOK_404,
  },
  'webhooks.rotateSecret': {
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the signing secret (extension)',
    description: `Answers a new secret, once. For \`grace_seconds\` (default ${ROTATION_GRACE.default}, at most ${ROTATION_GRACE.max}) every delivery carries a signature with the new and one with the old secret in \`webhook-signature\`, so a receiver switches without a failed delivery.`,
    request: rotateSchema,
    response: 'WebhookSecretRotated',
    notFound: WEBHOOK_404,
    conflict: ['CONFLICT'],
  },
  ...CATALOG_OPERATIONS,
  ...CONSOLE_OPERATIONS,
  ...APPLICATION_OPERATIONS,
};
