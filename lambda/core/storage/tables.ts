/**
 * DynamoDB table definitions: the single source of truth for the CDK stack
 * (lib/constructs/tables.ts) and the local bootstrap (local/dynamodb.ts). Key attribute names are
 * declared here once; storage modules build keys with the helpers in ./keys.ts.
 */
type AttributeType = 'S' | 'N';
export interface KeyAttribute {
  name: string;
  type: AttributeType;
}
/**
 * What an index copies from the item; ALL when omitted. LSI copies count toward the table item's
 * 400 KB limit, so indexes over large items project only the attributes their queries decide on.
 */
export type Projection = { type: 'KEYS_ONLY' } | { type: 'INCLUDE'; attributes: string[] } | { type: 'ALL' };

export interface TableDefinition {
  id: TableId;
  /** Environment variable that carries the physical table name to the functions. */
  envVar: string;
  /** Table name used by the local runtime and the integration tests. */
  localName: string;
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  /** Local secondary indexes: strongly consistent reads within one partition key. */
  localIndexes?: { indexName: string; sortKey: KeyAttribute; projection?: Projection }[];
  globalIndexes?: { indexName: string; partitionKey: KeyAttribute; sortKey?: KeyAttribute; projection?: Projection }[];
  /** Epoch-seconds attribute that DynamoDB TTL deletes items by (a backstop to the sweeper). */
  ttlAttribute: string;
}

/**
 * What `resourcesByKind` copies: attributes set at create and never updated (a namespace's `limits`
 * change only by the admin CLI), enough to list namespaces without reading their items.
 */
const RESOURCES_BY_KIND_ATTRIBUTES = ['id', 'name', 'namespace', 'status', 'created_at', 'limits'];

export type TableId = 'meta' | 'idempotency' | 'streamLog' | 'subscriptionLog' | 'deliveryLog' | 'scheduler';

export const TABLES: Record<TableId, TableDefinition> = {
  /**
   * Single-table metadata: namespaces, API keys, resources (queues, streams, subscriptions,
   * webhooks), topic bindings and their version, consumer records, counters, queue ack records.
   * Queue messages themselves live in SQS (DESIGN.md section 6).
   */
  meta: {
    id: 'meta',
    envVar: 'MSG_META_TABLE',
    localName: 'msg-meta',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    globalIndexes: [
      // Sparse: only items with `kind` (namespaces and resources) appear, so the sweeper finds every
      // resource of a kind, namespace by namespace (sort key `NS#{ns}`), without scanning the table.
      // Its partition key is shared by every resource of a kind in every namespace, so only create
      // and delete may write it: counters live on items without `kind` (queue counters, log heads),
      // and the index projects only attributes that never change after create, so an update of any
      // other attribute of a resource item writes nothing to it either (DynamoDB writes an index
      // entry only when one of its key or projected attributes changes).
      {
        indexName: 'resourcesByKind',
        partitionKey: { name: 'kind', type: 'S' },
        sortKey: { name: 'pk', type: 'S' },
        projection: { type: 'INCLUDE', attributes: RESOURCES_BY_KIND_ATTRIBUTES },
      },
    ],
    ttlAttribute: 'ttl',
  },
  /**
   * Stream logs, one item collection per partition of a stream incarnation (`log` = `{stream id}#
   * {partition}`), so a stream's writes spread over `partition_count` partition keys. An item is a
   * chunk: the messages one publish call put in that partition (as many as fit well under the
   * 400 KB item limit), keyed by the chunk's last offset (`last`), so `last >= from` finds the chunk
   * holding `from` and everything after it, in offset order. No local index: without one an item
   * collection has no 10 GB limit, and a partition-filtered read is a Query on that partition's key.
   * Storage is reclaimed by TTL (free) once a chunk is past retention (lambda/streams/storage/stream-log.ts).
   */
  streamLog: {
    id: 'streamLog',
    envVar: 'MSG_STREAM_LOG_TABLE',
    localName: 'msg-stream-log',
    partitionKey: { name: 'log', type: 'S' },
    sortKey: { name: 'last', type: 'N' },
    ttlAttribute: 'ttl',
  },
  /**
   * Subscription logs: one item collection per subscription incarnation (`log` = subscription id),
   * chunks of one publish call keyed by their last sequence number, shared by every subscriber (each
   * reads from its own cursor in the metadata table). Reclaimed by TTL like stream logs.
   */
  subscriptionLog: {
    id: 'subscriptionLog',
    envVar: 'MSG_SUBSCRIPTION_LOG_TABLE',
    localName: 'msg-subscription-log',
    partitionKey: { name: 'log', type: 'S' },
    sortKey: { name: 'last', type: 'N' },
    ttlAttribute: 'ttl',
  },
  /**
   * Webhook delivery log (extension, lambda/webhooks/storage/delivery-log.ts): one item per attempt and one
   * per failed delivery's message kept for replay, keyed by webhook incarnation and message (so
   * writes spread over the whole table and a message's attempts are one Query). The index lists a
   * webhook's attempts newest first, by outcome, over a few shards per outcome
   * (lambda/webhooks/rules/delivery-log.ts LOG_SHARDS); only attempts carry its keys. Kept 7 days (TTL).
   */
  deliveryLog: {
    id: 'deliveryLog',
    envVar: 'MSG_DELIVERY_LOG_TABLE',
    localName: 'msg-delivery-log',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    globalIndexes: [
      // Sparse: the retained messages carry no `lpk`, so the index holds only the small attempt
      // items (all of whose attributes a page shows).
      { indexName: 'attemptsByTime', partitionKey: { name: 'lpk', type: 'S' }, sortKey: { name: 'at', type: 'S' } },
    ],
    ttlAttribute: 'ttl',
  },
  /**
   * Time (lambda/schedules/storage/scheduler.ts): messages held for a delay beyond SQS's 900 s,
   * and schedules. Every item's key starts with its namespace. The sparse `due` index finds what
   * comes due without a scan: its partition key is one of DUE_SHARDS shards per kind
   * (lambda/core/rules/delays.ts), its sort key starts with the due time, so the tick reads each
   * shard's due range in time order. Only items waiting for their time carry the index keys
   * (a handed-over, cancelled or disabled one drops out of the index). KEYS_ONLY: the tick reads
   * the items themselves, strongly consistent, by key.
   */
  scheduler: {
    id: 'scheduler',
    envVar: 'MSG_SCHEDULER_TABLE',
    localName: 'msg-scheduler',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    globalIndexes: [{ indexName: 'due', partitionKey: { name: 'due_shard', type: 'S' }, sortKey: { name: 'due_sk', type: 'S' }, projection: { type: 'KEYS_ONLY' } }],
    ttlAttribute: 'ttl',
  },
  /** Idempotency records of Powertools for AWS Lambda (`Idempotency-Key` on publish). */
  idempotency: {
    id: 'idempotency',
    envVar: 'MSG_IDEMPOTENCY_TABLE',
    localName: 'msg-idempotency',
    partitionKey: { name: 'id', type: 'S' },
    ttlAttribute: 'expiration',
  },
};
