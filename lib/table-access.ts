/**
 * Least privilege in one place: which function may do what on which table. The functions
 * construct applies this map with `grant*` calls only, so a function gets exactly the access
 * listed here and nothing else. A capability that adds a function, or a table to a function,
 * adds one line here; test/infra/iam.test.ts fails when a function's bundle names a table
 * (`tableName('…')`) that its row does not grant.
 */
import type { HandlerGroup } from '../lambda/core/rules/routes';
import type { TableId } from '../lambda/core/storage/tables';

/** `read`: GetItem, Query, Scan, BatchGetItem, ...; `write`: Put/Update/Delete/BatchWrite. */
export type TableAccess = 'read' | 'write' | 'readWrite';
export type TableGrants = Partial<Record<TableId, TableAccess>>;

/**
 * Every Lambda function of the stack: the HTTP handler groups of the route table plus the
 * functions with another event source. A new function (the sweeper, webhook delivery) adds its
 * name here and its row below; the compiler then insists on that row.
 */
export type FunctionId = HandlerGroup | 'authorizer' | 'sweeper' | 'webhookDelivery' | 'webhookAttempt' | 'scheduler' | 'portalPage';

export const TABLE_ACCESS: Record<FunctionId, TableGrants> = {
  // Looks the key up by its hash and the Host's namespace: reads only.
  authorizer: { meta: 'read' },
  // The portal page (lambda/handlers/portal-page.ts) reads its namespace's portal origins.
  portalPage: { meta: 'read' },
  // Every HTTP group writes the per-namespace rate-limit counters in the meta table.
  namespace: { meta: 'readWrite' },
  // Publishing fans out to every kind of sink (queue counters in meta, stream and subscription
  // logs; the messages of queues go to SQS) and records idempotency keys. The queues group reaches
  // the same sinks when it dead-letters (lambda/publishing/sinks.ts).
  // A publish with a delay beyond 900 s holds the message in the scheduler table, and
  // cancel (DELETE /messages/{id}/delivery) takes it out.
  publish: { meta: 'readWrite', streamLog: 'readWrite', subscriptionLog: 'readWrite', idempotency: 'readWrite', scheduler: 'readWrite' },
  queues: { meta: 'readWrite', streamLog: 'readWrite', subscriptionLog: 'readWrite' },
  streams: { meta: 'readWrite', streamLog: 'readWrite' },
  subscriptions: { meta: 'readWrite', subscriptionLog: 'readWrite' },
  // Webhook configuration, and (extensions) the delivery log's pages and replays, which read the
  // retained messages and keep those that a replay by reference still needs.
  webhooks: { meta: 'readWrite', deliveryLog: 'readWrite' },
  // Schedules' configuration: the schedules in the scheduler table, the namespace's
  // schedule limit and rate counters in meta.
  schedules: { meta: 'readWrite', scheduler: 'readWrite' },
  // The event catalog: event types, their count and the catalog version in meta.
  catalog: { meta: 'readWrite' },
  // Applications and portal access: applications, portal links and sessions, and the
  // webhooks an application's delete removes (items, bindings, counters), all in meta.
  applications: { meta: 'readWrite' },
  // The scheduler tick (lambda/handlers/scheduler.ts): hands held messages to queues
  // (counters and queue items in meta) and webhooks, and publishes schedule runs to every kind of
  // sink. No idempotency table: runs are made once by their claim.
  scheduler: { meta: 'readWrite', streamLog: 'readWrite', subscriptionLog: 'readWrite', scheduler: 'readWrite' },
  // Background upkeep (lambda/sweeper/tasks.ts): purge jobs and counters in meta, trimmed stream
  // and subscription logs; it publishes the `webhooks/disabled` events whose first publish failed
  // to every kind of sink. It records no idempotency keys, so it needs no idempotency table.
  sweeper: { meta: 'readWrite', streamLog: 'readWrite', subscriptionLog: 'readWrite' },
  // Webhook delivery (first attempts) and the retry workflow's attempts and hooks: webhooks,
  // their counters and stored large messages in meta; hooks (on_success, on_failure,
  // send_to_dlq) publish to every kind of sink. Idempotency records belong to the publish
  // endpoint only. Every attempt writes its delivery log entry (extension), and a replay by
  // reference reads its message from there.
  webhookDelivery: { meta: 'readWrite', streamLog: 'readWrite', subscriptionLog: 'readWrite', deliveryLog: 'readWrite' },
  webhookAttempt: { meta: 'readWrite', streamLog: 'readWrite', subscriptionLog: 'readWrite', deliveryLog: 'readWrite' },
};

/** A DynamoDB action a function's code can call. */
export type DynamoAction =
  | 'dynamodb:GetItem' | 'dynamodb:BatchGetItem' | 'dynamodb:Query'
  | 'dynamodb:PutItem' | 'dynamodb:UpdateItem' | 'dynamodb:DeleteItem' | 'dynamodb:BatchWriteItem'
  // A ConditionCheck item of TransactWriteItems needs its own action
  // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
  | 'dynamodb:ConditionCheckItem';

/** The actions each access level allows (transactions need the actions of their items). */
export const LEVEL_ACTIONS: Record<TableAccess, readonly DynamoAction[]> = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'],
  write: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  readWrite: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem'],
};

/**
 * The DynamoDB actions each function's bundle can call: granted on each
 * of its tables as far as the table's access level allows, and nothing else (no Scan, no
 * DescribeTable, no stream actions: nothing calls them). test/infra/iam.test.ts derives the list
 * from the built bundle (SDK command classes, paginators and transaction items) and fails when it
 * differs from this one.
 */
export const DYNAMODB_ACTIONS: Record<FunctionId, readonly DynamoAction[]> = {
  authorizer: ['dynamodb:GetItem'],
  portalPage: ['dynamodb:GetItem'],
  namespace: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
  publish: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  queues: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  streams: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
  subscriptions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
  // ConditionCheckItem: a webhook of an application is written only while the application exists.
  webhooks: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem'],
  sweeper: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  webhookDelivery: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  webhookAttempt: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  schedules: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
  catalog: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
  // ConditionCheckItem: a link is exchanged only while its application keeps its portal generation.
  applications: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
  scheduler: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
};

/**
 * The indexes (lambda/core/storage/tables.ts) each function's code queries, by table: Query is granted
 * on `<table ARN>/index/<name>` for these only, never on `/index/*`. test/infra/iam.test.ts reads
 * the `IndexName`s of each bundle and fails when the grants differ.
 */
export const INDEX_QUERIES: Partial<Record<FunctionId, TableIndexes>> = {
  // The tick reads what comes due, shard by shard (lambda/schedules/storage/scheduler.ts).
  scheduler: { scheduler: ['due'] },
  // Purges find every resource of a kind without a scan (lambda/core/storage/sweep-sources.ts).
  sweeper: { meta: ['resourcesByKind'] },
};
export type TableIndexes = Partial<Record<TableId, string[]>>;

/** The actions function `id` gets on a table it has `access` to. */
export const tableActions = (id: FunctionId, access: TableAccess): DynamoAction[] => DYNAMODB_ACTIONS[id].filter((a) => LEVEL_ACTIONS[access].includes(a));

/**
 * SQS actions a function may use on the SQS queues of service queues (only on
 * `arn:aws:sqs:<region>:<account>:<stack prefix>*`, lib/constructs/service-queues.ts). Batch
 * calls need the single action (SendMessageBatch: sqs:SendMessage), and CreateQueue with tags
 * needs sqs:TagQueue. test/infra/iam.test.ts fails when a function's bundle calls an SQS command
 * on the service queues that this row does not grant (or grants one nothing calls); the webhook
 * delivery queue has its own grant (WebhookDelivery.allowEnqueue).
 */
export type ServiceQueueAction =
  | 'sqs:SendMessage'
  | 'sqs:ReceiveMessage'
  | 'sqs:DeleteMessage'
  | 'sqs:ChangeMessageVisibility'
  | 'sqs:CreateQueue'
  | 'sqs:TagQueue'
  | 'sqs:DeleteQueue'
  | 'sqs:GetQueueAttributes';

export const SERVICE_QUEUE_ACCESS: Record<FunctionId, ServiceQueueAction[]> = {
  authorizer: [],
  portalPage: [],
  namespace: [],
  // Publishing stores messages in every bound queue (and dead-letters a full queue's).
  publish: ['sqs:SendMessage'],
  // Create (and, when the name was taken meanwhile, delete again), consume (receive, hand back,
  // delete expired and dead-lettered messages), ack, the dead-letter publishes, and SQS's counts
  // for GET /queues/{name}/stats (lambda/console/queue-stats.ts).
  queues: ['sqs:CreateQueue', 'sqs:TagQueue', 'sqs:DeleteQueue', 'sqs:SendMessage', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueAttributes'],
  streams: [],
  subscriptions: [],
  webhooks: [],
  schedules: [],
  catalog: [],
  applications: [],
  // Hands held messages to their queues; schedule runs publish to them.
  scheduler: ['sqs:SendMessage'],
  // Removes deleted queues' SQS queues and reconciles counters with SQS's counts; publishes
  // pending `webhooks/disabled` events to the queues bound to them.
  sweeper: ['sqs:DeleteQueue', 'sqs:GetQueueAttributes', 'sqs:SendMessage'],
  // Hooks publish to topics that queues may be bound to.
  webhookDelivery: ['sqs:SendMessage'],
  webhookAttempt: ['sqs:SendMessage'],
};

/** Functions that sign or verify receipt handles, and so read the signing-key secret. */
export const RECEIPT_KEY_READERS: readonly FunctionId[] = ['queues'];

/**
 * KMS actions on the stack's secrets key (webhook secrets at rest, lambda/core/adapters/data-keys.ts),
 * always with the encryption context `purpose=webhook-secrets`. Only the webhook API writes
 * secrets (GenerateDataKey); delivery and retry attempts only read them (Decrypt). Functions not
 * listed get neither the grant nor the key's ARN.
 */
export type SecretsKeyAction = 'kms:GenerateDataKey' | 'kms:Decrypt';

export const SECRETS_KEY_ACCESS: Partial<Record<FunctionId, SecretsKeyAction[]>> = {
  webhooks: ['kms:GenerateDataKey', 'kms:Decrypt'],
  webhookDelivery: ['kms:Decrypt'],
  webhookAttempt: ['kms:Decrypt'],
  // Long-delayed messages handed over to webhooks read the webhook (its secrets opened on read).
  scheduler: ['kms:Decrypt'],
};
