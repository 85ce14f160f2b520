/**
 * DynamoDB table definitions: the single source of truth for the CDK stack
 * (lib/constructs/tables.ts) and the local bootstrap (local/dynamodb.ts). Key attribute names are
 * declared here once; storage modules build keys with the helpers in ./keys.ts.
 */
export type AttributeType = 'S' | 'N';
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

export type TableId = 'meta' | 'idempotency' | 'streamLog' | 'subscriptionLog';

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
      // Sparse: only items with `kind` (resources) appear, so the sweeper finds every queue
      // without scanning the table.
      { indexName: 'resourcesByKind', partitionKey: { name: 'kind', type: 'S' }, sortKey: { name: 'pk', type: 'S' } },
    ],
    ttlAttribute: 'ttl',
  },
  /**
   * Stream logs: one item per message per stream, keyed by `{stream id}#{bucket}` (a bucket holds
   * 10,000 consecutive offsets, so no partition key nears the 10 GB limit that the LSI imposes) and
   * the offset. A consume is one strongly consistent Query by offset range.
   */
  streamLog: {
    id: 'streamLog',
    envVar: 'MSG_STREAM_LOG_TABLE',
    localName: 'msg-stream-log',
    partitionKey: { name: 'bucket', type: 'S' },
    sortKey: { name: 'offset', type: 'N' },
    localIndexes: [
      // One partition's messages of a bucket, in offset order (`poff` = partition * 10000 +
      // offset % 10000): a partition-filtered consume reads only that partition's keys, then the
      // items by key. Keys only: a copy of a 256 KiB payload would not fit the 400 KB item limit.
      { indexName: 'streamLogByPartition', sortKey: { name: 'poff', type: 'N' }, projection: { type: 'KEYS_ONLY' } },
    ],
    ttlAttribute: 'ttl',
  },
  /**
   * Subscription logs: one item per message per subscription (shared by all its subscribers),
   * keyed by the subscription's internal id and a sequence number; each subscriber's cursor is a
   * sequence number in the metadata table.
   */
  subscriptionLog: {
    id: 'subscriptionLog',
    envVar: 'MSG_SUBSCRIPTION_LOG_TABLE',
    localName: 'msg-subscription-log',
    partitionKey: { name: 'subscription_id', type: 'S' },
    sortKey: { name: 'seq', type: 'N' },
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
