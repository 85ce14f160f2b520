/**
 * The features of lambda/ and where they meet: the data behind the import rules of
 * .dependency-cruiser.cjs (docs/architecture.md "Features and the shared base", whose table's
 * interface column test/unit/code-layout.test.ts compares with INTERFACES).
 */
/**
 * The features, each with the files other code may import (its interface, relative to its folder);
 * every other file of a feature is its own. `openTo`: the features built on it, which may import
 * any of its files (logs is the partitioned log that streams and subscriptions both store their
 * messages in). Who imports each file is said beside it: handlers (h), the OpenAPI document (api-docs),
 * the console's endpoints (console), lib/, local/, bin/ (the admin CLI) and bench/ included.
 */
const INTERFACES = {
  logs: {
    openTo: ['streams', 'subscriptions'],
    // The console's views of a stream's groups and a subscription's subscribers; the pending
    // reservation token that bench/stream-heads.ts writes into a head.
    files: ['storage/log-heads.ts', 'storage/log-members.ts', 'rules/log-horizon.ts'],
  },
  streams: {
    files: [
      'operations.ts', // the HTTP handler
      'rules.ts', // the request schemas (handler, OpenAPI)
      'storage/stream-log.ts', // publishing's sink appends to streams
      'storage/streams.ts', // the console reads a stream
      'sweep.ts', // the sweeper's task
    ],
  },
  subscriptions: {
    files: ['operations.ts', 'rules.ts', 'storage/subscription-log.ts', 'storage/subscriptions.ts', 'sweep.ts'],
  },
  namespaces: {
    // `GET /namespace` (h); the namespace record (the authorizer, rate limits, the admin CLI) and
    // API keys (the authorizer, the portal's credentials, the admin CLI).
    files: ['operations.ts', 'storage/namespaces.ts', 'storage/api-keys.ts'],
  },
  publishing: {
    files: [
      'publish.ts', // h, and the service's own republishing: queues' redrive and leftovers, hooks, schedule runs
      'sink.ts', // the sink interface queues, webhooks and held messages implement
      'write-budget.ts', // the namespace's fan-out writes, charged by sinks (queues, hooks)
      'rules.ts', // the dead-lettered message, republishing it (queues, hooks), a sink's settling of its writes (queues)
      'binding-index.ts', // the bindings a redrive publishes to (queues)
      'idempotency.ts', // h
    ],
  },
  limits: {
    // The middleware (h, the local gateway); the counters publishing and hooks charge; the held
    // quota publishing and schedules take (and the admin CLI reads).
    files: ['rate-limit.ts', 'storage/rate-limits.ts', 'storage/held-quota.ts'],
  },
  schedules: {
    files: [
      'operations.ts', 'rules/schedules.ts', // h, api-docs
      'delayed.ts', 'cancel.ts', // publishing's long delays (h)
      'tick.ts', 'shard-tasks.ts', 'storage/tick-tasks.ts', // the scheduler (h, its construct in lib/, local/)
      'shard-batch.ts', // the scheduler's shard worker (h)
      'storage/schedules.ts', // the admin CLI's limits
    ],
  },
  queues: {
    files: [
      'operations.ts', 'consume.ts', 'ack.ts', // h
      'rules/queues.ts', // request schemas (h, api-docs) and the topic filter streams, subscriptions and webhooks share
      'bulkhead.ts', // the long-poll bulkhead (h: queues, streams, subscriptions)
      'sink.ts', // publishing's sink to queues (also held messages handed over)
      'redrive.ts', // the admin CLI, the console
      'sweep.ts', // the sweeper's task
      'storage/queues.ts', 'storage/queue-held.ts', 'storage/service-queues.ts', // schedules' hand-over, the console, the admin CLI
      'storage/queue-oldest.ts', // the console
    ],
  },
  webhooks: {
    files: [
      'operations.ts', 'rules/webhooks.ts', 'rules/delivery-log.ts', // h, api-docs, schedules' webhook checks
      'rules/requests.ts', // h: what a request (a portal session's included) may ask
      'application-scope.ts', 'delivery-log.ts', 'replay.ts', 'rotation.ts', 'storage/webhooks.ts', // h (extensions)
      'delivery-batch.ts', 'deliver.ts', 'flush.ts', 'failed-execution.ts', // h (delivery, attempts)
      'rules/delivery.ts', 'rules/retry-input.ts', // h, the local retry workflow
      'fanout.ts', // publishing's sink to webhooks (also held messages handed over)
      'hook-budget.ts', // schedule runs' hooks
      'storage/delivery-queue.ts', // the delivery queue: queues' redrive, lib/, local/, preflight
      'storage/retry-workflow.ts', 'storage/http-delivery.ts', 'workflows/definition.ts', // lib/, local/, bin/
      'sweep.ts', // the sweeper's task
      'storage/webhook-health.ts', // the admin CLI
      'storage/webhook-counters.ts', 'rules/endpoint-health.ts', // applications' counts, the admin CLI
      'storage/sealed.ts', // what sealing costs (bench/secrets.ts)
    ],
  },
  applications: {
    files: [
      'operations.ts', 'portal.ts', 'addressees.ts', 'storage/portal.ts', 'portal-page.ts', // h
      'rules.ts', 'storage/applications.ts', // api-docs, webhooks' application checks, the admin CLI
    ],
  },
  catalog: {
    files: [
      'operations.ts', 'enforce.ts', 'rules/event-types.ts', 'storage/event-types.ts', // h, api-docs, the admin CLI
      'validators.ts', // what schema enforcement costs (bench/catalog-validation.ts)
    ],
  },
  sweeper: {
    // The sweep that runs the tasks (h, local/); its lease (h). No feature imports the sweeper:
    // a task is its feature's sweep.ts, on the shapes of lambda/core/sweep-task.ts.
    files: ['tasks.ts', 'storage/sweeper-lease.ts', 'rules.ts'], // rules.ts: the lease's expiry (h)
  },
};
/**
 * Of each feature's interface, the files other features import, and which features import each: where
 * features meet (publishing's sinks, the delivery queue, and the records one feature reads of another).
 * Each pair (file, importers) is a rule of its own (`<feature>/<file>-meets-only-named`), so a third
 * feature cannot reach a meeting point it was not named at. The rest of an interface is for the
 * handlers, the OpenAPI document, the console's endpoints, lib/, local/ and bin/. An empty object: no
 * other feature imports it (logs is open to streams and subscriptions only).
 */
const MEETS = {
  logs: {},
  streams: { 'storage/stream-log.ts': ['publishing'], 'sweep.ts': ['sweeper'] }, // publishing's sink; the sweeper's task
  subscriptions: { 'storage/subscription-log.ts': ['publishing'], 'sweep.ts': ['sweeper'] },
  // limits' overrides; applications' keys
  namespaces: { 'storage/namespaces.ts': ['limits', 'applications'], 'storage/api-keys.ts': ['applications'] },
  publishing: {
    // republishing (and dead-lettering): queues' redrive and leftovers, hooks, schedule runs
    'publish.ts': ['queues', 'webhooks', 'schedules'], 'rules.ts': ['queues', 'webhooks'],
    // what the sinks use (queues, webhooks, schedules' hand-over); the bindings a redrive publishes to
    'sink.ts': ['queues', 'webhooks', 'schedules'], 'write-budget.ts': ['queues', 'webhooks'], 'binding-index.ts': ['queues'],
  },
  // charged by publishing and hooks; the held quota of long delays
  limits: { 'storage/rate-limits.ts': ['publishing', 'webhooks'], 'storage/held-quota.ts': ['publishing', 'schedules'] },
  schedules: {},
  queues: {
    'sink.ts': ['publishing', 'schedules'], // publishing's sink, and schedules' hand-over
    'rules/queues.ts': ['streams', 'subscriptions', 'webhooks'], // the topic filter
    // schedules' hand-over
    'storage/queues.ts': ['schedules'], 'storage/queue-held.ts': ['schedules'], 'storage/service-queues.ts': ['schedules'],
    'sweep.ts': ['sweeper'], // the sweeper's task
  },
  webhooks: {
    'fanout.ts': ['publishing', 'schedules'], // publishing's sink, and schedules' hand-over
    'storage/delivery-queue.ts': ['queues'], // the delivery queue (queues' redrive)
    // schedule runs' hooks and checks; applications' webhooks
    'hook-budget.ts': ['schedules'], 'rules/webhooks.ts': ['schedules'], 'storage/webhooks.ts': ['schedules', 'applications'],
    'storage/webhook-counters.ts': ['applications'], // applications' counts
    'sweep.ts': ['sweeper'], // the sweeper's task
  },
  applications: { 'rules.ts': ['webhooks'], 'storage/applications.ts': ['webhooks'] }, // webhooks' application checks
  catalog: {},
  sweeper: {}, // it imports the features' tasks, never the other way
};
for (const [feature, meets] of Object.entries(MEETS)) {
  for (const [f, by] of Object.entries(meets)) {
    if (!INTERFACES[feature].files.includes(f)) throw new Error(`MEETS.${feature}: ${f} is not in INTERFACES.${feature}`);
    for (const b of by) if (!(b in INTERFACES) || b === feature) throw new Error(`MEETS.${feature}['${f}']: ${b} is not another feature`);
  }
}
module.exports = { INTERFACES, MEETS };
