/**
 * Per-namespace caps: one tenant within its limits cannot starve the others.
 *
 * - How many queues, streams, subscriptions and webhooks a namespace may have. Each resource costs
 *   the namespace's bindings load on every publish (publish reads every binding of the namespace
 *   into its cache) and a share of the sweeper's round, so an unbounded count in one namespace
 *   slows every publish of that namespace and the sweeper for all.
 * - How many resources may bind one topic filter (wildcards included: `#` is one filter). Without
 *   it 10,000 queues on `#` turn every publish into 10,000 writes.
 * - How many resources one publish may reach across every filter it matches (./fanout-budget.ts):
 *   filters that match the same topic add up, each within its own cap.
 *
 * - What a namespace holds for delays beyond 900 s (messages and payload bytes, held in DynamoDB
 *   for up to 365 days), and how many schedule runs it makes a minute (each a publish the shared
 *   tick makes): without them one namespace fills the table and the tick for all.
 *
 * Defaults are generous for real use and small enough that the worst single publish stays bounded;
 * an operator raises them per namespace with `npm run admin -- resource-limit set`. Counting is
 * exact: a conditional counter item kept in the create and delete transactions
 * (lambda/core/storage/resource-limits.ts), never a list-and-count.
 */
import { ApiError } from './errors';

export type LimitedKind = 'QUEUE' | 'STREAM' | 'SUBSCRIPTION' | 'WEBHOOK';

/** What an operator can cap, as the admin CLI names it. */
export const LIMIT_NAMES = ['queues', 'streams', 'subscriptions', 'webhooks', 'bindings-per-topic-filter', 'bindings-per-publish', 'held-messages', 'held-bytes', 'schedule-runs-per-minute', 'event-types', 'applications', 'webhooks-per-application'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

export const KIND_OF_LIMIT: Record<Exclude<LimitName, 'bindings-per-topic-filter' | 'bindings-per-publish' | HeldQuota | 'schedule-runs-per-minute' | 'event-types' | 'applications' | 'webhooks-per-application'>, LimitedKind> = {
  queues: 'QUEUE',
  streams: 'STREAM',
  subscriptions: 'SUBSCRIPTION',
  webhooks: 'WEBHOOK',
};

/**
 * Defaults. Queues, streams and subscriptions: 1,000 each, like schedules (a list of 1,000 is
 * still one page of reads; the publish cache of 3,000 bindings is under 1 MB). Webhooks: 100,
 * because every webhook delivery is an outbound HTTP call with its own retry workflow, far
 * dearer per publish than a queue's or a log's write. Bindings per topic filter: 100, so one
 * publish fans out to at most 100 resources per matching filter (a publish to `a.b` matches at
 * most the filters `a.b`, `a.*`, `*.b`, `*.*`, `a.#`, `#`, ... each capped). Bindings per publish:
 * 200, twice one full filter, so the filters one topic matches together reach at most 200
 * resources (the review's 100 on `#`, 60 on `+/#`, 60 on `t/+` and 1 on `t/#` reached 221).
 */
export const DEFAULT_LIMITS: Record<LimitName, number> = {
  queues: 1000,
  streams: 1000,
  subscriptions: 1000,
  webhooks: 100,
  'bindings-per-topic-filter': 100,
  'bindings-per-publish': 200,
  // Held messages (delays beyond 900 s) live in DynamoDB until they are due, up to 365 days:
  // a million of 1 KiB, about 1 GiB of storage ($0.25 a month), per namespace.
  'held-messages': 1_000_000,
  'held-bytes': 1024 * 1024 * 1024,
  // Each run is a publish through the tick; 1,000 schedules of one minute each is 1,000 a minute.
  'schedule-runs-per-minute': 1000,
  // Event types of the catalog: publish keeps every name of the namespace's catalog in
  // its cache (not the schemas), and GET /asyncapi.json reads them all.
  'event-types': 500,
  // Applications: an item of at most ~2.5 KB each (metadata is capped at 2 KiB), so
  // a list, which reads them all for its total, stays within a few pages like 1,000 queues.
  applications: 1000,
  // Webhooks that belong to one application, whoever creates them (its portal session
  // or an API key): one customer cannot take the namespace's 100 webhooks, nor the bindings of
  // `#`, from the platform and the others. 20 is five of the portal's pages of endpoints.
  'webhooks-per-application': 20,
};

/** The quotas on what a namespace holds for long delays. */
export type HeldQuota = 'held-messages' | 'held-bytes';

/** 409 LIMIT_EXCEEDED: a publish would hold more messages or bytes for long delays than the namespace may. */
export function heldLimitExceeded(quota: HeldQuota, limit: number, held: number): ApiError {
  const what = quota === 'held-messages' ? 'messages' : 'bytes of payload';
  return new ApiError(
    409,
    'LIMIT_EXCEEDED',
    `This publish would hold more than ${limit} ${what} for delays beyond 900 seconds in this namespace (it holds ${held}); nothing was published. Wait for held messages to be delivered, cancel some (DELETE /messages/{message_id}/delivery), or ask an operator to raise it (npm run admin -- resource-limit set <namespace> ${quota} <n>).`,
    { limit, resource: quota, held },
  );
}

/** 409 LIMIT_EXCEEDED: the namespace has as many event types as it may. */
export function eventTypeLimitExceeded(limit: number): ApiError {
  return new ApiError(
    409,
    'LIMIT_EXCEEDED',
    `This namespace has reached its limit of ${limit} event types; delete one first, use a topic filter that covers several topics, or ask an operator to raise it (npm run admin -- resource-limit set <namespace> event-types <n>).`,
    { limit, resource: 'event-types' },
  );
}

/** 409 LIMIT_EXCEEDED: the namespace made as many schedule runs this minute as it may (the run is retried the next minute, within its window). */
export function scheduleRunsLimitExceeded(limit: number): ApiError {
  return new ApiError(
    409,
    'LIMIT_EXCEEDED',
    `This namespace made its ${limit} schedule runs of this minute; the run is retried the next minute (for up to 5 minutes after its time). An operator can raise it (npm run admin -- resource-limit set <namespace> schedule-runs-per-minute <n>).`,
    { limit, resource: 'schedule-runs-per-minute' },
  );
}

export const limitNameOf = (kind: LimitedKind): LimitName => (Object.entries(KIND_OF_LIMIT).find(([, k]) => k === kind)?.[0] ?? 'queues') as LimitName;

/** Attribute of the namespace item that holds an operator's setting (absent: the default). */
export const limitAttribute = (name: LimitName) => `${name.replace(/-/g, '_')}_limit`;

/** A stored setting, or the default when absent or not a whole number. */
export function effectiveLimit(name: LimitName, stored: unknown): number {
  const n = Number(stored);
  return stored !== undefined && stored !== null && Number.isSafeInteger(n) && n >= 0 ? n : DEFAULT_LIMITS[name];
}

/** 409 LIMIT_EXCEEDED: the namespace has as many resources of the kind as it may. */
export function resourceLimitExceeded(kind: LimitedKind, limit: number): ApiError {
  const name = limitNameOf(kind);
  return new ApiError(
    409,
    'LIMIT_EXCEEDED',
    `This namespace has reached its limit of ${limit} ${name}; delete one first, or ask an operator to raise it (npm run admin -- resource-limit set <namespace> ${name} <n>).`,
    { limit, resource: name },
  );
}

/** 409 LIMIT_EXCEEDED: the namespace has as many applications as it may. */
export function applicationLimitExceeded(limit: number): ApiError {
  return new ApiError(
    409,
    'LIMIT_EXCEEDED',
    `This namespace has reached its limit of ${limit} applications; delete one first, or ask an operator to raise it (npm run admin -- resource-limit set <namespace> applications <n>).`,
    { limit, resource: 'applications' },
  );
}

/** 409 LIMIT_EXCEEDED: the application has as many webhooks as one application may. */
export function applicationWebhookLimitExceeded(uid: string, limit: number): ApiError {
  return new ApiError(
    409,
    'LIMIT_EXCEEDED',
    `Application ${uid} has reached its limit of ${limit} webhooks; delete one of its webhooks first, or ask an operator to raise it (npm run admin -- resource-limit set <namespace> webhooks-per-application <n>).`,
    { limit, resource: 'webhooks-per-application', application: uid },
  );
}

/** 409 LIMIT_EXCEEDED: the topic filter already has as many bindings as one filter may. */
export function topicFilterLimitExceeded(topicFilter: string, limit: number): ApiError {
  return new ApiError(
    409,
    'LIMIT_EXCEEDED',
    `The topic filter "${topicFilter}" already has ${limit} queues, streams, subscriptions and webhooks bound to it, the limit per topic filter; use a narrower filter, delete one of them, or ask an operator to raise it (npm run admin -- resource-limit set <namespace> bindings-per-topic-filter <n>).`,
    { limit, resource: 'bindings-per-topic-filter', topic_filter: topicFilter },
  );
}
