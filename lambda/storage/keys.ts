/**
 * Every key of the metadata table, named by access pattern (STYLE.md habit 5). Every key of a
 * tenant's data starts with its namespace: nothing is addressable without it.
 */
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
  namespacePk: (ns: string) => `NS#${ns}`,
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
   * A published message too large to travel in its webhook delivery jobs (lambda/domain/delivery.ts
   * `ReferenceJob`), stored once for every webhook it goes to, until its `ttl`. Its own partition
   * key, so large items never crowd the namespace's partition.
   */
  webhookMessage: (ns: string, messageId: string) => ({ pk: `NS#${ns}#WHMSG#${messageId}`, sk: '#MESSAGE' }),
  /**
   * The record of one delivery (a webhook incarnation and a message): how it ended, written with
   * its counters so that a repeated job or Task finds it instead of sending again. Its own
   * partition key: one small item per delivery, until its `ttl`.
   */
  webhookDelivery: (ns: string, webhookId: string, messageId: string) => ({ pk: `NS#${ns}#WEBHOOK#${webhookId}#DLV#${messageId}`, sk: '#DELIVERY' }),
  /**
   * Webhook deliveries of a namespace in flight, counted per minute (Unix seconds of its start),
   * so a count a crashed invocation never gave back is gone a minute later. Its own partition
   * key per namespace and minute, like the rate counters.
   */
  webhookInFlight: (ns: string, minuteStart: number) => ({ pk: `NS#${ns}#WHINFLIGHT#${minuteStart}`, sk: '#INFLIGHT' }),
  /**
   * Counters of one queue incarnation (message_count, bytes, dropped, dead-lettered, expired).
   * Their own partition key per queue, so the writes of a busy queue (one per publish call and
   * per ack call) never share a partition with another queue or the namespace's metadata, and the
   * item has no `kind`, so no index entry is rewritten with it.
   */
  queueCounters: (ns: string, queueId: string) => ({ pk: `NS#${ns}#QUEUE#${queueId}`, sk: '#COUNTERS' }),
  /**
   * Per message of a queue incarnation: its ack record (sk `#ACK`, DESIGN.md section 6) and the
   * count of receives the service handed back unreturned (sk `#RELEASED`, lambda/queues/consume.ts).
   * A partition key per message: acks of one queue spread over the whole table.
   */
  queueMessage: (ns: string, queueId: string, messageId: string, what: 'ACK' | 'RELEASED') => ({ pk: `NS#${ns}#QUEUE#${queueId}#MSG#${messageId}`, sk: `#${what}` }),
  /**
   * The sweeper's lease (lambda/storage/sweeper-lease.ts): one item for the whole deployment, so
   * at most one sweep runs at a time. Not tenant data; `SWEEPER#` can never be a namespace key.
   */
  sweeperLease: () => ({ pk: 'SWEEPER#LEASE', sk: '#LEASE' }),
} as const;

export type ResourceKind = 'QUEUE' | 'STREAM' | 'SUBSCRIPTION' | 'WEBHOOK';

/** Epoch seconds for a DynamoDB TTL attribute. */
export const ttlSeconds = (ms: number) => Math.ceil(ms / 1000);
