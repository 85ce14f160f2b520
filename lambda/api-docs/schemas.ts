/**
 * JSON Schemas of the API's response `data` shapes (SPEC.md "Resources and their fields",
 * DESIGN.md sections 3 to 9), written out here because the handlers build their answers with plain
 * object literals. test/integration/openapi.test.ts validates real answers of the local gateway
 * against them, so a field added to an answer without being added here fails a test.
 *
 * Request schemas are not here: they come from the zod schemas the handlers parse (./operations.ts).
 */
import * as z from 'zod/mini';
import { MAX_PARTITIONS } from '../streams/rules';
import { MAX_DELAY_SECONDS } from '../core/rules/message';
import { consoleSchemas } from './console-docs';
import { applicationSchemas } from './applications-docs';
import { CONFIG_FIELDS, WEBHOOK_METHODS, webhookSchema } from '../webhooks/rules/webhooks';

export type JsonSchema = Record<string, unknown>;

/** A reference to a schema under `components.schemas`. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const str = (description?: string): JsonSchema => ({ type: 'string', ...(description ? { description } : {}) });
const int = (description?: string, minimum = 0): JsonSchema => ({ type: 'integer', minimum, ...(description ? { description } : {}) });
const time = (description = 'ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z'): JsonSchema => ({ type: 'string', format: 'date-time', description });
const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, 'null'] });
const properties = (description = 'Custom properties of the message (string values)'): JsonSchema => ({
  type: 'object',
  additionalProperties: { type: 'string' },
  description,
});
/** An object whose every listed property is present in answers. */
const obj = (props: Record<string, JsonSchema>, description?: string): JsonSchema => ({
  type: 'object',
  ...(description ? { description } : {}),
  required: Object.keys(props),
  properties: props,
});
/** `base` with more properties that answers carry only when they apply (extensions). */
const withOptional = (base: JsonSchema, extra: Record<string, JsonSchema>): JsonSchema => ({ ...base, properties: { ...(base.properties as object), ...extra } });
const listOf = (key: string, item: string) =>
  obj({
    [key]: { type: 'array', items: ref(item) },
    total: int('Number of items in all pages'),
    limit: int('The page size used (echoes the request)', 1),
    offset: int('Items skipped (echoes the request)'),
  });

const status = str('`active`');
/** A webhook's status (docs/webhooks.md "Endpoint health"). */
const webhookStatusFields = {
  status: { type: 'string', enum: ['active', 'failing', 'disabled'], description: '`active`; `failing` while its endpoint fails (circuit open: one probe at a time); `disabled` by the user (`enabled: false`) or by health' },
  disabled_reason: { type: ['string', 'null'], enum: ['user', 'health', null], description: '`user` when `enabled` is false, `health` when health disabled it (PATCH `{"enabled": true}` re-enables); null unless disabled' },
  disabled_at: { type: ['string', 'null'], format: 'date-time', description: 'When health disabled the webhook; null otherwise' },
} satisfies Record<string, JsonSchema>;
/** Where a webhook's effective health thresholds come from (docs/webhooks.md "Endpoint health"). */
const healthSource = (field: string): JsonSchema => ({
  type: 'string',
  enum: ['webhook', 'namespace', 'default'],
  description: `Where \`${field}\` comes from: \`webhook\` (set on it), \`namespace\` (the namespace's default, set by an operator: npm run admin -- webhook-health set), \`default\``,
});
const webhookHealthSources = { failure_threshold_source: healthSource('failure_threshold'), disable_after_source: healthSource('disable_after') };
const topicFilter = str('MQTT 5 topic filter: `+` matches one level, `#` (last level only) any number of levels including none');

const queueSummary = {
  name: str(),
  topic_filter: topicFilter,
  status,
  created_at: time(),
  message_count: int('Messages stored and not yet acknowledged or expired (visible plus in flight)'),
  consumer_count: int('Distinct consumers (by key, or by `consumer_id`) that consumed in the last 5 minutes'),
};

const streamSummary = {
  name: str(),
  topic_filter: topicFilter,
  status,
  created_at: time(),
  message_count: int('Retained messages'),
  consumer_count: int('Consumer groups that have consumed or committed'),
};
/** Present (true) only when the count is a lower bound: more member records than one count reads (1,000). */
const lowerBound = (of: string): Record<string, JsonSchema> => ({
  [`${of}_is_lower_bound`]: { type: 'boolean', const: true, description: `Present only when \`${of}\` is a lower bound: the resource has more than 1,000 member records, and one count reads the first 1,000` },
});
const streamSettings = {
  retention_days: int('Days a message is retained', 1),
  max_size_gb: int('Size at which the oldest messages are trimmed', 1),
  partition_count: int('Partitions; a message with a partition_key always goes to the same one', 1),
};

const subscriptionSummary = {
  name: str(),
  topic_filter: topicFilter,
  status,
  created_at: time(),
  message_count: int('Retained messages'),
  subscriber_count: int('Subscriber ids seen within the message TTL'),
};

/**
 * The webhook configuration as GET shows it, derived from the create request's schema: every
 * configurable field is present, `null` where it is unset (lambda/webhooks/rules/webhooks.ts `configView`).
 */
function webhookConfigView(): Record<string, JsonSchema> {
  const input = z.toJSONSchema(webhookSchema, { io: 'input' }) as { properties: Record<string, JsonSchema>; required: string[] };
  // Set even when the request leaves them out: `headers` shows `{}`, `retry_count` its default.
  const alwaysSet = new Set<string>(['headers', 'retry_count', 'failure_threshold', 'disable_after', ...input.required]);
  const out: Record<string, JsonSchema> = {};
  for (const field of CONFIG_FIELDS) {
    const { default: _default, ...schema } = input.properties[field];
    const shown = field === 'method' ? { type: 'string', enum: [...WEBHOOK_METHODS] } : schema;
    out[field] = alwaysSet.has(field) || 'default' in input.properties[field] ? shown : { anyOf: [shown, { type: 'null' }] };
  }
  return out;
}

const consumedBase = {
  payload: str(),
  content_type: str('MIME type given at publish (default application/json)'),
  properties: properties(),
  publish_time: time(),
};

/** Every named `data` shape; operations refer to them by name (./operations.ts). */
export function responseSchemas(): Record<string, JsonSchema> {
  const webhook = { name: str(), ...webhookConfigView(), ...webhookHealthSources, ...webhookStatusFields, created_at: time(), updated_at: time() };
  return {
    Namespace: obj({ name: str(), endpoint: { type: 'string', format: 'uri', description: 'Base URL clients of this namespace use' }, created_at: time(), status }),

    PublishResult: obj({ message_id: str(), topic: str(), timestamp: time(), size: int('Payload length in UTF-8 bytes') }),
    BatchPublishResult: obj({ published_count: int(), message_ids: { type: 'array', items: str(), description: 'In request order' }, timestamp: time() }),

    QueueSummary: obj(queueSummary, 'A queue as create and list answer it'),
    Queue: withOptional(
      obj({
        ...queueSummary,
        max_size_mb: int(undefined, 1),
        message_ttl_seconds: int(undefined, 1),
        max_retries: int('A message is delivered at most 1 + max_retries times'),
        dead_letter_topic: nullable(str('Topic that receives messages whose deliveries are used up; null when they are dropped')),
      }),
      {
        delay_seconds: { type: 'integer', minimum: 1, maximum: MAX_DELAY_SECONDS, description: 'Extension, present only when set: delay of messages published without their own delay_seconds' },
        ordering: { type: 'string', enum: ['fifo'], description: 'Extension, present only for an ordered queue: each partition_key is delivered in publish order (an SQS FIFO queue)' },
      },
    ),
    QueueList: listOf('queues', 'QueueSummary'),
    QueueMessage: obj({
      message_id: str(),
      ...consumedBase,
      receive_count: int('Deliveries of this message, this one included', 1),
      receipt_handle: str('Acknowledges this delivery; a later delivery gets a new handle'),
    }),
    QueueConsumeResult: obj({ messages: { type: 'array', items: ref('QueueMessage') }, count: int() }),
    AckResult: obj({ acknowledged_at: time() }),
    BatchAckResult: obj({
      results: {
        type: 'array',
        description: 'One result per entry, in request order',
        items: {
          oneOf: [
            obj({ message_id: str(), acknowledged: { const: true }, acknowledged_at: time() }),
            obj({
              message_id: str(),
              acknowledged: { const: false },
              error: obj({ code: { type: 'string', enum: ['MESSAGE_NOT_FOUND', 'INVALID_RECEIPT_HANDLE'] }, message: str() }),
            }),
          ],
        },
      },
      acknowledged_count: int(),
    }),

    StreamCreated: obj({ name: str(), topic_filter: topicFilter, ...streamSettings, status, created_at: time(), message_count: int(), consumer_count: int() }),
    StreamSummary: withOptional(obj(streamSummary, 'A stream as list answers it'), lowerBound('consumer_count')),
    Stream: withOptional(
      obj({
        ...streamSummary,
        ...streamSettings,
        earliest_offset: int('Oldest retained offset'),
        latest_offset: int('The offset the next message will get (last assigned + 1; 0 for an empty stream)'),
      }),
      lowerBound('consumer_count'),
    ),
    StreamList: listOf('streams', 'StreamSummary'),
    StreamMessage: obj({ offset: int(), partition: { type: 'integer', minimum: 0, maximum: MAX_PARTITIONS - 1 }, ...consumedBase }),
    StreamConsumeResult: obj({
      messages: { type: 'array', items: ref('StreamMessage') },
      next_offset: int('Last returned offset + 1, or the start position when nothing was returned'),
      count: int(),
    }),
    CommitResult: obj({ committed_at: time() }),

    SubscriptionSummary: withOptional(obj(subscriptionSummary, 'A subscription as create and list answer it'), lowerBound('subscriber_count')),
    Subscription: withOptional(obj({ ...subscriptionSummary, max_size_mb: int(undefined, 1), message_ttl_seconds: int(undefined, 1) }), lowerBound('subscriber_count')),
    SubscriptionList: listOf('subscriptions', 'SubscriptionSummary'),
    SubscriptionMessage: obj({ message_id: str(), ...consumedBase }),
    SubscriptionConsumeResult: obj({ messages: { type: 'array', items: ref('SubscriptionMessage') }, count: int() }),

    // Keys without `manage` see only what cannot hold a secret (DESIGN.md section 2).
    Webhook: {
      ...obj(webhook, 'A webhook configuration; never carries the secret. Keys with the `manage` scope see every field; other keys see only `name`, `topic_filter`, `enabled`, `url` (its origin: scheme, host and port), `status`, `disabled_reason`, `disabled_at`, `created_at` and `updated_at`'),
      required: ['name', 'url', 'topic_filter', 'enabled', ...Object.keys(webhookStatusFields), 'created_at', 'updated_at'],
    },
    WebhookCreated: obj(
      { ...webhook, secret: str('Signing secret (`whsec_` + base64 of 32 bytes); returned only by create, store it') },
      'The created webhook, with its signing secret (shown only here)',
    ),
    WebhookList: listOf('webhooks', 'Webhook'),
    WebhookStatus: obj({
      name: str(),
      ...webhookStatusFields,
      last_delivery: nullable(time()),
      success_count: int('Successful deliveries (per delivery, not per attempt)'),
      failure_count: int('Deliveries that failed after their last retry'),
      last_error: nullable(str()),
      next_retry: nullable(time('When the next retry of a pending delivery is due')),
      hook_failure_count: int('Hooks (on_success, on_failure, send_to_dlq) the namespace publish rate limit refused: they published nothing'),
      last_hook_error: nullable(str('Why the latest refused hook published nothing')),
    }),
    WebhookDeliveryList: obj({
      deliveries: { type: 'array', items: ref('WebhookDeliveryAttempt'), description: 'Newest first' },
      next_cursor: nullable(str('Pass as `cursor` for the next page; null on the last page')),
      limit: int('The page size used', 1),
    }),
    WebhookDeliveryAttempt: obj({
      message_id: str('The message delivered (also the `webhook-id` header)'),
      attempt: int('1 for the first attempt of a delivery, counting its retries', 1),
      attempted_at: time('When the request started'),
      duration_ms: int(),
      status_code: nullable(int('Status the receiver answered; null when none came')),
      outcome: { type: 'string', enum: ['succeeded', 'failed'] },
      error: nullable(str('One-line reason of a failure: `HTTP 500`, `timeout after 10 s`, `connection refused`, `redirect refused`, `payload too large`')),
      final: { type: 'boolean', description: 'No attempt of this delivery follows (it succeeded, or its retries are used up)' },
      replay: { type: 'boolean', description: 'The attempt belongs to a replay' },
    }),
    WebhookReplay: obj({ message_id: str(), replay_id: str('Names this replay'), queued_at: time() }),
    WebhookBulkReplay: obj({
      queued: int('Deliveries queued'),
      next_since: nullable(time('Call again with this `since` to queue the rest; null when none are left')),
    }),
    WebhookSecretRotated: obj({
      name: str(),
      secret: str('The new signing secret; shown only here, store it'),
      rotated_at: time(),
      previous_secret_expires_at: nullable(time('Until then the old secret signs too; null when the grace period is 0')),
    }),
    WebhookTestResult: obj({
      success: { type: 'boolean', description: 'Whether the target answered 2xx' },
      status_code: nullable(int('Status the target answered')),
      response_time_ms: int(),
      error: nullable(str('One-line reason of a failure')),
    }),

    Deleted: obj({ deleted_at: time() }),
    DeliveryCancelled: obj({ message_id: str(), status: { type: 'string', enum: ['cancelled'] }, cancelled_at: time(), deliver_at: time('When the message would have been delivered') }),
    Schedule: withOptional(
      obj({
        name: str(),
        timezone: str('IANA time zone of the cron'),
        topic: str(),
        payload: str('With `{{.scheduled_time}}` and `{{.schedule}}` placeholders; `[redacted]` for keys without `manage`, as are property values and `partition_key`'),
        properties: properties(),
        start_at: nullable(time()),
        end_at: nullable(time()),
        enabled: { type: 'boolean' },
        next_run_at: nullable(time('null when disabled or past end_at')),
        last_run_at: nullable(time('The scheduled time of the last run made')),
        last_message_id: nullable(str('Message id of the last run that published')),
        last_error: nullable(str('Why the last run published nothing (e.g. TOPIC_NOT_FOUND, or RATE_LIMIT_EXCEEDED still refused 5 minutes after its time); null when it published')),
        last_skipped: nullable(
          obj(
            { from: time('The first scheduled time skipped'), until: nullable(time('The first time made again after the skipped ones (not skipped); null when none (end_at)')) },
            'The last scheduled times a tick reached more than 5 minutes late (an outage) and skipped: the first missed time is made once, the times after it up to `until` are not',
          ),
        ),
        created_at: time(),
        updated_at: time(),
      }),
      {
        cron: str('5 fields: minute hour day-of-month month day-of-week (one of cron and every)'),
        every: int('Seconds between runs (one of cron and every)', 60),
        content_type: str(),
        partition_key: str(),
      },
    ),
    ScheduleList: obj({ schedules: { type: 'array', items: ref('Schedule') }, limit: int(undefined, 1), next_cursor: nullable(str('Pass as `cursor` for the next page; null on the last')) }),

    EventType: obj({
      name: str('A topic or MQTT topic filter'),
      description: nullable(str()),
      schema: { type: ['object', 'null'], description: 'JSON Schema (draft 2020-12) of the payload, or null' },
      enforce: { type: 'boolean', description: 'Whether a publish this event type applies to must satisfy the schema (422 otherwise)' },
      examples: { type: 'array', items: {}, description: 'Example payloads: a string is a payload as published, any other value the parsed payload' },
      version: int('1 at create, one more at every change', 1),
      created_at: time(),
      updated_at: time(),
    }),
    EventTypeList: listOf('event_types', 'EventType'),
    AsyncApiDocument: {
      type: 'object',
      required: ['asyncapi', 'info', 'channels', 'operations', 'components'],
      properties: { asyncapi: { const: '3.0.0' }, info: { type: 'object' }, defaultContentType: str(), channels: { type: 'object' }, operations: { type: 'object' }, components: { type: 'object' } },
      description: 'An AsyncAPI 3.0 document (https://www.asyncapi.com/docs/reference/specification/v3.0.0)',
    },
    Error: obj({
      code: str('Machine-readable error code, e.g. QUEUE_NOT_FOUND'),
      message: str('What went wrong and what to do'),
      details: {
        type: 'object',
        description: 'Always an object; validation errors carry `fields`, rate limits `category`, `limit` and `reset`',
        properties: { fields: { type: 'array', items: ref('FieldProblem') } },
      },
    }),
    FieldProblem: obj({ field: str('Dotted path of the field, e.g. messages.3.payload'), message: str() }),
    ErrorEnvelope: obj({ success: { const: false }, data: { type: 'null' }, error: ref('Error') }, 'The envelope of every error answer'),
    ...consoleSchemas(),
    ...applicationSchemas(),
  };
}
