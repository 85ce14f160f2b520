/**
 * The OpenAPI rows and `data` schemas of the reads the console added to the API (docs/console.md):
 * `GET /namespace/access`, `GET /queues/{name}/stats`, `POST /queues/{name}/redrive`,
 * `GET /streams/{name}/groups` and `GET /subscriptions/{name}/subscribers`. Kept apart from
 * ./operations.ts and ./schemas.ts, which spread them in.
 */
import type { OperationDoc } from './operations';
import type { JsonSchema } from './schemas';
import { redriveSchema, REDRIVE_MAX_PER_CALL } from '../console/queue-stats';
import { MEMBER_LIMIT } from '../console/member-limit';

const str = (description?: string): JsonSchema => ({ type: 'string', ...(description ? { description } : {}) });
const int = (description?: string, minimum = 0): JsonSchema => ({ type: 'integer', minimum, ...(description ? { description } : {}) });
const time = (description = 'ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z'): JsonSchema => ({ type: 'string', format: 'date-time', description });
const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, 'null'] });
const obj = (props: Record<string, JsonSchema>, description?: string): JsonSchema => ({
  type: 'object',
  ...(description ? { description } : {}),
  required: Object.keys(props),
  properties: props,
});
const array = (items: JsonSchema, description?: string): JsonSchema => ({ type: 'array', items, ...(description ? { description } : {}) });
const more = { type: 'boolean', description: `More members exist than the page shows (raise \`limit\`, at most ${MEMBER_LIMIT.max})` };

export function consoleSchemas(): Record<string, JsonSchema> {
  return {
    NamespaceAccess: obj({
      namespace: str(),
      key_id: str('Id of the key that made the request (never the key)'),
      scopes: array(str(), '`publish`, `consume`, `manage` or `*`; every key may read'),
      rate_limits: array(
        obj({
          category: { type: 'string', enum: ['publish', 'consume', 'management'] },
          limit: int('Requests per minute'),
          remaining: int('Requests left in the current minute (this request counted under management)'),
          reset: int('Unix time (s) the current window ends'),
        }),
      ),
    }),
    QueueStats: obj({
      name: str(),
      visible: int('Messages a consume can receive now (SQS ApproximateNumberOfMessages)'),
      in_flight: int('Received and neither acknowledged nor visible again yet (ApproximateNumberOfMessagesNotVisible)'),
      delayed: int('Published with a delay not yet over (ApproximateNumberOfMessagesDelayed)'),
      oldest_message_age_seconds: nullable(
        int(
          'Seconds since the oldest message not yet acknowledged, dead-lettered or expired was published (in flight and delayed ones included); null when there is none. Read from the queue\'s expiry buckets, not SQS: an upper bound, at most `oldest_message_age_precision_seconds` over the true age, never under it',
        ),
      ),
      oldest_message_age_precision_seconds: int('The bound\'s width: the queue\'s expiry bucket width, a tenth of its TTL between 1 and 60 s', 1),
      measured_at: time(),
    }),
    QueueRedrive: obj({
      queue: str(),
      topic: str(),
      moved: int('Published to the topic and removed from the queue'),
      published_not_removed: int('Published, but not confirmed removed: they may move again'),
      expired: int('Found past their TTL and removed'),
      remaining: int('message_count of the queue afterwards; call again while it is above 0'),
    }),
    StreamGroups: obj({
      name: str(),
      earliest_offset: int(),
      latest_offset: int('The offset the next message gets'),
      partitions: array(obj({ partition: int(), next_offset: int('One past the last offset written to this partition') })),
      groups: array(
        obj({
          group: str(),
          committed_offset: nullable(int('The group-wide committed offset (a commit without `partition`)')),
          committed_at: nullable(time()),
          partitions: array(
            obj({
              partition: int(),
              committed_offset: nullable(int('The partition\'s own commit, else the group-wide one')),
              lag: int('Offsets between the committed offset and the partition\'s next offset: the most messages left (offsets are numbered across partitions)'),
            }),
          ),
        }),
      ),
      more,
    }),
    SubscriptionSubscribers: obj({
      name: str(),
      earliest_position: int('Oldest position retained'),
      next_position: int('The position the next message gets'),
      subscribers: array(
        obj({
          subscriber_id: str(),
          cursor: int('The next position this subscriber reads'),
          lag: int('Retained positions it has not read yet'),
          last_seen: time('Its last consume'),
        }),
      ),
      more,
    }),
  };
}

const memberLimitQuery = {
  name: 'limit',
  in: 'query',
  required: false,
  description: 'Page size; not an integer: 400, out of range: 422',
  schema: { type: 'integer', minimum: 1, maximum: MEMBER_LIMIT.max, default: MEMBER_LIMIT.default },
};

export const CONSOLE_OPERATIONS: Record<string, OperationDoc> = {
  'namespace.getAccess': {
    operationId: 'getNamespaceAccess',
    summary: "The key's scopes and the namespace's rate-limit headroom (extension)",
    description: 'What the calling key may do and, per rate-limit category, the limit and what is left of the current minute, read without counting a request of those categories (this request counts under management).',
    request: null,
    response: 'NamespaceAccess',
  },
  'queues.queueStats': {
    operationId: 'getQueueStats',
    summary: "SQS's counts of a queue: visible, in flight, delayed; and its oldest message's age (extension)",
    description: 'The counts are approximate, as SQS reports them; they settle within about a minute of a change. `oldest_message_age_seconds` comes from the queue\'s expiry buckets (one Query, whatever the depth), accurate to one bucket width (`oldest_message_age_precision_seconds`, a tenth of the TTL, 1-60 s), and drops to null once every message is acknowledged or expired.',
    request: null,
    response: 'QueueStats',
    notFound: ['QUEUE_NOT_FOUND'],
  },
  'queues.redriveQueue': {
    operationId: 'redriveQueue',
    summary: 'Move messages of a queue (a dead-letter queue) to a topic (extension)',
    description: `Receives up to \`max\` (default and at most ${REDRIVE_MAX_PER_CALL}) messages, publishes them to \`to_topic\` without their \`dlq_*\` properties, then removes them: at least once. Call again while \`remaining\` is above 0. 404 TOPIC_NOT_FOUND when nothing is bound to the topic; 422 when the queue itself matches it. Its publishes spend the namespace's fan-out budget of writes: over it the redrive stops with 429 RATE_LIMIT_EXCEEDED (\`details.category\` \`fanout\`, with \`moved\`, \`published_not_removed\` and \`expired\`: how far it got), and the messages it received and did not publish are visible again at once.`,
    request: redriveSchema,
    response: 'QueueRedrive',
    notFound: ['QUEUE_NOT_FOUND', 'TOPIC_NOT_FOUND'],
  },
  'streams.listGroups': {
    operationId: 'listStreamGroups',
    summary: 'Partitions with their next offsets, consumer groups with committed offsets and lag (extension)',
    request: null,
    response: 'StreamGroups',
    notFound: ['STREAM_NOT_FOUND'],
    query: [memberLimitQuery],
  },
  'subscriptions.listSubscribers': {
    operationId: 'listSubscriptionSubscribers',
    summary: 'Subscribers with their cursors and lag (extension)',
    request: null,
    response: 'SubscriptionSubscribers',
    notFound: ['SUBSCRIPTION_NOT_FOUND'],
    query: [memberLimitQuery],
  },
};
