/**
 * Every key of the metadata table, named by access pattern (STYLE.md habit 5). Every key of a
 * tenant's data starts with its namespace: nothing is addressable without it.
 */
/**
 * Partitions of a webhook's counter writers. One took a write per writer and batch, 0.102 write
 * units per delivery at 9.8 jobs a batch, the busiest key of a delivery; two take half each, for
 * one Query more per status read, made beside the other (no slower).
 */
export const WEBHOOK_COUNTER_PARTITIONS = 2;

const webhookCounterPartition = (ns: string, webhookId: string, i: number) => `NS#${ns}#WEBHOOK#${webhookId}#COUNTS#${i}`;

/** The writer partition of a writer id: a stable hash (FNV-1a), so a writer's updates always meet its item. */
export function writerPartition(writer: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < writer.length; i++) h = Math.imul(h ^ writer.charCodeAt(i), 0x01000193);
  return (h >>> 0) % WEBHOOK_COUNTER_PARTITIONS;
}

export const metaKeys = {
  namespace: (ns: string) => ({ pk: `NS#${ns}`, sk: '#NAMESPACE' }),
  /** Lookup of a key by its SHA-256 hash (the authorizer's one read per request). */
  apiKeyByHash: (hash: string) => ({ pk: `APIKEY#${hash}`, sk: '#APIKEY' }),
  /** A namespace's keys, for listing and revoking with the admin CLI. */
  apiKeyOfNamespace: (ns: string, keyId: string) => ({ pk: `NS#${ns}`, sk: `KEY#${keyId}` }),
  apiKeysOfNamespacePrefix: 'KEY#',
  /** A resource of a namespace by kind and name; a Query on the prefix lists them by name. */
  resource: (ns: string, kind: ResourceKind, name: string) => ({ pk: `NS#${ns}`, sk: `${kind}#${name}` }),
  resourcePrefix: (kind: ResourceKind) => `${kind}#`,
  /** How many resources of a kind the namespace has (kept in their create and delete transactions). */
  resourceCount: (ns: string, kind: ResourceKind) => ({ pk: `NS#${ns}`, sk: `#COUNT#${kind}` }),
  /** What the namespace holds for delays beyond 900 s: `n` messages, `bytes` of payload (lambda/limits/storage/held-quota.ts). */
  heldCount: (ns: string) => ({ pk: `NS#${ns}`, sk: '#HELD' }),
  /** How many resources bind one topic filter in the namespace (kept like resourceCount). */
  filterBindingCount: (ns: string, topicFilter: string) => ({ pk: `NS#${ns}`, sk: `#FILTERCOUNT#${topicFilter}` }),
  namespacePk: (ns: string) => `NS#${ns}`,
  /**
   * The namespace's versions for publish: `version` of its bindings (./resource-writes.ts) and
   * `catalog_version` of its event catalog (./event-types.ts). One item, so the one strongly
   * consistent GetItem a publish makes anyway tells it whether either cache is stale.
   */
  publishVersions: (ns: string) => ({ pk: `NS#${ns}`, sk: '#BINDINGS' }),
  /**
   * Rate-limit counter of one namespace, category and window (Unix seconds of its start). Its own
   * partition key, not `NS#{ns}`, so a hot counter never shares a partition with the namespace's
   * metadata, and each minute writes to a fresh item.
   */
  rateCounter: (ns: string, category: string, windowStart: number) => ({ pk: `NS#${ns}#RATE#${category}#${windowStart}`, sk: '#RATE' }),
  /**
   * Delivery counters of one webhook incarnation (by id, so a recreated webhook starts at zero).
   * Apart from the webhook's item, so a PUT or PATCH (a whole-item Put) never races the counters.
   */
  webhookStatus: (ns: string, webhookId: string) => ({ pk: `NS#${ns}#WEBHOOK#${webhookId}`, sk: '#STATUS' }),
  /**
   * One of the shards of those counters (./webhook-counters.ts): a partition key of its own each,
   * so a webhook's counter writes spread over as many keys.
   */
  webhookStatusShard: (ns: string, webhookId: string, shard: number) => ({ pk: `NS#${ns}#WEBHOOK#${webhookId}#STATUS#${shard}`, sk: '#STATUS' }),
  /**
   * The counters one writer (a container's flush chain) added to a webhook incarnation, in one of
   * {@link WEBHOOK_COUNTER_PARTITIONS} partitions of writers chosen by the writer's id, apart
   * from its total (`webhookStatus`, which folds idle writers in): each partition key takes about
   * half of the webhook's counter writes. A read is one Query per partition, made at once
   * (./webhook-counters.ts). Writer items written before, in the total's partition, are read there.
   */
  webhookCounterWriter: (ns: string, webhookId: string, writer: string) => ({ pk: webhookCounterPartition(ns, webhookId, writerPartition(writer)), sk: `#STATUS#W#${writer}` }),
  /** The partition keys a webhook incarnation's counters are read from: its total's, then each writer partition's. */
  webhookCounterPartitions: (ns: string, webhookId: string) => [
    `NS#${ns}#WEBHOOK#${webhookId}`,
    ...Array.from({ length: WEBHOOK_COUNTER_PARTITIONS }, (_, i) => webhookCounterPartition(ns, webhookId, i)),
  ],
  /** The sort key prefix of a webhook incarnation's total and writer items. */
  webhookCounterPrefix: '#STATUS',
  /**
   * A published message too large to travel in its webhook delivery jobs (lambda/webhooks/rules/delivery.ts
   * `ReferenceJob`), stored once for every webhook it goes to, until its `ttl`. Its own partition
   * key, so large items never crowd the namespace's partition.
   */
  webhookMessage: (ns: string, messageId: string) => ({ pk: `NS#${ns}#WHMSG#${messageId}`, sk: '#MESSAGE' }),
  /**
   * The records of one stream or subscription incarnation (by id): its head (position counter and
   * trimming state, lambda/logs/storage/log-heads.ts), its gap pages (lambda/logs/storage/log-gaps.ts), and
   * its consumer groups or subscriber cursors. Their own partition key, not `NS#{ns}`: every
   * publish writes the head, every consume a cursor, and neither may share a partition's
   * throughput with the namespace's other resources.
   */
  logPk: (ns: string, id: string) => `NS#${ns}#LOG#${id}`,
  logHead: (ns: string, id: string) => ({ pk: `NS#${ns}#LOG#${id}`, sk: '#HEAD' }),
  logMember: (ns: string, id: string, member: string) => ({ pk: `NS#${ns}#LOG#${id}`, sk: member }),
  /**
   * A stream's partition marks (lambda/logs/storage/partition-marks.ts): the last offset and message
   * count reserved in each partition, for streams of many partitions. A partition key of its own,
   * not the head's: the head then stays within one write unit (the head's key takes every
   * publish's reservation and clearing).
   */
  logMarks: (ns: string, id: string) => ({ pk: `NS#${ns}#MARKS#${id}`, sk: '#MARKS' }),
  /**
   * A log's reservation records (lambda/logs/storage/log-records.ts), one small item per publish call,
   * by the call's reservation number: a partition key of its own, so the head's key takes one
   * write per publish call and this one another.
   */
  logRecordsPk: (ns: string, id: string) => `NS#${ns}#RESV#${id}`,
  /**
   * The sweeper's place in its round over a task's resources, and (only while it is inside a
   * namespace with many resources of the kind) its place within that namespace.
   */
  sweepCursor: (task: string) => ({ pk: 'SWEEP', sk: `CURSOR#${task}` }),
  sweepNamespaceCursor: (ns: string, task: string) => ({ pk: `NS#${ns}`, sk: `#SWEEP#${task}` }),
  /**
   * The record of one delivery (a webhook incarnation and a message): how it ended, written with
   * its counters so that a repeated job or Task finds it instead of sending again. Its own
   * partition key: one small item per delivery, until its `ttl`.
   */
  webhookDelivery: (ns: string, webhookId: string, messageId: string) => ({ pk: `NS#${ns}#WEBHOOK#${webhookId}#DLV#${messageId}`, sk: '#DELIVERY' }),
  /** The claim of a delivery's POST (a replay's: ./webhook-deliveries.ts `claimSend`), beside its record. */
  webhookSendClaim: (ns: string, webhookId: string, messageId: string) => ({ pk: `NS#${ns}#WEBHOOK#${webhookId}#DLV#${messageId}`, sk: '#SEND_CLAIM' }),
  /**
   * Webhook deliveries of a namespace in flight (./webhook-share.ts): one item per namespace, with
   * an entry per batch in flight. Its own partition key, apart from the namespace's metadata.
   */
  webhookInFlight: (ns: string) => ({ pk: `NS#${ns}#WHINFLIGHT`, sk: '#INFLIGHT' }),
  /**
   * Counters of one queue incarnation (message_count, bytes, dropped, dead-lettered, expired).
   * Their own partition key per queue, so the writes of a busy queue (one per publish call and
   * per ack call) never share a partition with another queue or the namespace's metadata, and the
   * item has no `kind`, so no index entry is rewritten with it.
   */
  queueCounters: (ns: string, queueId: string) => ({ pk: `NS#${ns}#QUEUE#${queueId}`, sk: '#COUNTERS' }),
  /**
   * The expiry buckets of a queue incarnation's counters (lambda/queues/storage/queues.ts): one item per
   * bucket, sk the bucket's end (epoch ms, zero-padded so that they sort by time), on a partition
   * of their own so the counters' partition takes no more writes than before.
   */
  queueExpiryBuckets: (ns: string, queueId: string) => `NS#${ns}#QUEUE#${queueId}#EXP`,
  queueExpiryBucket: (ns: string, queueId: string, end: number) => ({ pk: `NS#${ns}#QUEUE#${queueId}#EXP`, sk: String(end).padStart(15, '0') }),
  /**
   * Per message of a queue incarnation: its ack record (sk `#ACK`, DESIGN.md section 6) and the
   * count of receives the service handed back unreturned (sk `#RELEASED`, lambda/queues/consume.ts).
   * A partition key per message: acks of one queue spread over the whole table.
   */
  queueMessage: (ns: string, queueId: string, messageId: string, what: 'ACK' | 'RELEASED') => ({ pk: `NS#${ns}#QUEUE#${queueId}#MSG#${messageId}`, sk: `#${what}` }),
  /**
   * The sweeper's lease (lambda/sweeper/storage/sweeper-lease.ts): one item for the whole deployment, so
   * at most one sweep runs at a time. Not tenant data; `SWEEPER#` can never be a namespace key.
   */
  sweeperLease: () => ({ pk: 'SWEEPER#LEASE', sk: '#LEASE' }),
  /**
   * A `webhooks/disabled` event not yet published: written in the transaction that
   * disables the webhook, deleted once the event is published; the sweeper publishes what is left
   * (lambda/webhooks/storage/webhook-health.ts). One partition for the deployment: disables are rare.
   * Not tenant data; `PENDING_EVENT` can never be a namespace key. One item per disable (keyed by
   * its event id), so a second disable before the first event went keeps both;
   * `legacyPendingWebhookEvent` is the one-per-webhook key written before, still read and deleted.
   */
  pendingWebhookEvent: (ns: string, webhookId: string, eventId: string) => ({ pk: 'PENDING_EVENT', sk: `WEBHOOK_DISABLED#${ns}#${webhookId}#${eventId}` }),
  legacyPendingWebhookEvent: (ns: string, webhookId: string) => ({ pk: 'PENDING_EVENT', sk: `WEBHOOK_DISABLED#${ns}#${webhookId}` }),
  pendingWebhookEventsPk: 'PENDING_EVENT',
  /** An application of a namespace by uid; a Query on the prefix lists them by uid. */
  application: (ns: string, uid: string) => ({ pk: `NS#${ns}`, sk: `APP#${uid}` }),
  applicationPrefix: 'APP#',
  /** How many applications the namespace has (kept in their create and delete transactions). */
  applicationCount: (ns: string) => ({ pk: `NS#${ns}`, sk: '#COUNT#APPLICATION' }),
  /** How many webhooks belong to an application (kept in the webhooks' create, update and delete transactions). */
  applicationWebhookCount: (ns: string, uid: string) => ({ pk: `NS#${ns}`, sk: `#APPWEBHOOKCOUNT#${uid}` }),
  /**
   * A portal link (by the SHA-256 hash of its token, like API keys) and a portal session (by the
   * hash of its credential): the authorizer's lookups. Their own partition key each, never the
   * namespace's: a session's requests read it on every call (lambda/applications/storage/portal.ts).
   */
  portalLink: (hash: string) => ({ pk: `PORTAL#LINK#${hash}`, sk: '#LINK' }),
  portalSession: (hash: string) => ({ pk: `PORTAL#SESSION#${hash}`, sk: '#SESSION' }),
} as const;

export type ResourceKind = 'QUEUE' | 'STREAM' | 'SUBSCRIPTION' | 'WEBHOOK';

/** Epoch seconds for a DynamoDB TTL attribute. */
export const ttlSeconds = (ms: number) => Math.ceil(ms / 1000);

/**
 * Keys of the delivery log table (extension, ./delivery-log.ts). Every key starts with the
 * namespace and the webhook incarnation's id (a recreated webhook starts with an empty log).
 */
export const deliveryLogKeys = {
  /** A message's items for one webhook incarnation: its attempts (sk `A#{time key}`) and, after a failed delivery, its retained copy (sk `#RETAINED`). */
  message: (ns: string, webhookId: string, messageId: string) => `NS#${ns}#WH#${webhookId}#MSG#${messageId}`,
  attemptSk: (timeKey: string) => `A#${timeKey}`,
  attemptPrefix: 'A#',
  retainedSk: '#RETAINED',
  /** When a replay of the message was last queued (a bulk replay queues each failure once). */
  replayQueuedSk: '#REPLAY_QUEUED',
  /** Index partition of a webhook's attempts of one outcome in one shard (lambda/webhooks/rules/delivery-log.ts LOG_SHARDS). */
  byTime: (ns: string, webhookId: string, outcome: string, shard: number) => `NS#${ns}#WH#${webhookId}#${outcome}#${shard}`,
} as const;

/**
 * Keys of the scheduler table (./scheduler.ts). Items start with their namespace; the
 * `due` index keys are service-wide shards, because the tick looks for everything due at once
 * (like the meta table's resourcesByKind index); they carry no tenant data.
 */
export const schedulerKeys = {
  /** A message held for a long delay, by id (cancel finds it by the id the publish answered). */
  delayed: (ns: string, messageId: string) => ({ pk: `NS#${ns}#DELAYED#${messageId}`, sk: '#DELAYED' }),
  /** The held message itself, beside its small state item (./scheduler.ts): the tick's claim and finish never rewrite it. */
  delayedBody: (ns: string, messageId: string) => ({ pk: `NS#${ns}#DELAYED#${messageId}`, sk: '#BODY' }),
  /** The schedules of a namespace: one partition, sorted by name (a list is a Query). */
  schedulesPk: (ns: string) => `NS#${ns}#SCHEDULES`,
  schedule: (ns: string, name: string) => ({ pk: `NS#${ns}#SCHEDULES`, sk: `S#${name}` }),
  schedulePrefix: 'S#',
  /** How many schedules the namespace has (kept in the create and delete transactions). */
  scheduleCount: (ns: string) => ({ pk: `NS#${ns}#SCHEDULES`, sk: '#COUNT' }),
  /** Index partition of held messages (`M#{shard}`) or schedules (`S#{shard}`). */
  dueShard: (kind: 'M' | 'S', shard: number) => `${kind}#${shard}`,
  /** Index sort key: the due time first, then what makes it unique. */
  dueSk: (timeKey: string, ns: string, id: string) => `${timeKey}#${ns}#${id}`,
} as const;

/**
 * Keys of the event catalog (./event-types.ts), in the metadata table: one partition
 * per namespace holding its event types sorted by name (a list is a Query) and their count.
 */
export const catalogKeys = {
  eventTypesPk: (ns: string) => `NS#${ns}#EVENTTYPES`,
  eventType: (ns: string, name: string) => ({ pk: `NS#${ns}#EVENTTYPES`, sk: `E#${name}` }),
  eventTypePrefix: 'E#',
  /** How many event types the namespace has (kept in the create and delete transactions). */
  eventTypeCount: (ns: string) => ({ pk: `NS#${ns}#EVENTTYPES`, sk: '#COUNT' }),
} as const;
