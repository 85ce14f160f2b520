/**
 * Powertools logger and metrics shared by every function.
 *
 * Logs: structured JSON with the request id and, once the request is authorized, its namespace.
 * Payloads, API keys, secrets and webhook URLs are never logged, except the webhook request and
 * response lines a webhook's own `log_requests` / `log_responses` / `debug` asks for.
 *
 * Metrics: CloudWatch EMF (one JSON line on stdout that CloudWatch Logs turns into metrics), in
 * the POWERTOOLS_METRICS_NAMESPACE namespace with the default dimension `service`. Every metric
 * below is a count with at most one more dimension of bounded cardinality (a kind, a category, a
 * reason: a handful of values each). The tenant's namespace is never a dimension (one metric per
 * namespace would grow cost with the number of tenants); it rides along as EMF metadata, so Logs
 * Insights can still break a metric down by namespace.
 *
 * Tracing: the stack turns on active X-Ray tracing for every function, the API stage and the
 * retry workflow, so every invocation has its segment. The Powertools Tracer (SDK subsegments per
 * DynamoDB/SQS call) is not used: it adds about 130 KB to every bundle, which would take the
 * publish bundle over the 300 KB budget of test/infra/bundles.test.ts, while the per-call
 * latencies it would show are already in the DynamoDB and SQS CloudWatch metrics.
 *
 * Locally (npm start, tests) metrics are off (POWERTOOLS_METRICS_DISABLED=true in
 * local/environment.ts); set POWERTOOLS_METRICS_DISABLED=false to see the EMF lines on stdout.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRIC, type MetricDimensions, type MetricName } from './rules/metric-names';

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'messaging' });

export { METRIC, type MetricDimensions, type MetricName } from './rules/metric-names';

/**
 * Publishing an empty buffer makes Powertools warn "No application metrics to publish" on every
 * invocation that recorded nothing (a GET, a 404): that line is noise here, everything else goes
 * to the logger.
 */
const metricsLogger = {
  trace: (...a: unknown[]) => logger.trace(String(a[0]), ...a.slice(1).map((x) => ({ detail: x }))),
  debug: (...a: unknown[]) => logger.debug(String(a[0]), ...a.slice(1).map((x) => ({ detail: x }))),
  info: (...a: unknown[]) => logger.info(String(a[0]), ...a.slice(1).map((x) => ({ detail: x }))),
  warn: (...a: unknown[]) => {
    if (String(a[0]).startsWith('No application metrics to publish')) return;
    logger.warn(String(a[0]), ...a.slice(1).map((x) => ({ detail: x })));
  },
  error: (...a: unknown[]) => logger.error(String(a[0]), ...a.slice(1).map((x) => ({ detail: x }))),
};

/**
 * The one Metrics instance: the handlers' `logMetrics` middleware flushes it after each
 * invocation and adds the cold-start metric (dimension `function_name`).
 */
export const metrics = new Metrics({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'messaging',
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'Messaging',
  logger: metricsLogger,
});

/** Options of the handlers' `logMetrics` middleware. */
export const LOG_METRICS_OPTIONS = { captureColdStartMetric: true, throwOnEmptyMetrics: false } as const;

/**
 * Counts `value` of `name` now (its own EMF line, so its dimensions never mix with another
 * metric's, and concurrent records of one batch keep their own namespace metadata).
 * Zero counts are not written.
 */
export function countMetric(name: MetricName, value: number, opts: { namespace?: string; dimensions?: MetricDimensions } = {}): void {
  if (!(value > 0)) return;
  emit(name, MetricUnit.Count, value, opts);
}

/**
 * Records a gauge-like value (depth, age) of `name` now. `metadata` rides along on the EMF line
 * (not dimensions: unbounded names cost nothing there), so Logs Insights can break it down.
 */
export function gaugeMetric(name: MetricName, unit: 'Count' | 'Seconds', value: number, opts: { namespace?: string; metadata?: Record<string, string> } = {}): void {
  emit(name, unit === 'Count' ? MetricUnit.Count : MetricUnit.Seconds, value, opts);
}

/** Long-poll waits of the consume running in this async context (see {@link timeConsume}). */
const consumeWaits = new AsyncLocalStorage<{ waitedMs: number }>();

/**
 * Runs one consume and records its handler time without the long-poll wait
 * (`METRIC.consumeTime`, milliseconds, dimension `kind`): the time `consume` took, less every
 * wait reported by {@link waitedFor} from inside it. A consume that throws records nothing.
 *
 * @example
 * const messages = await timeConsume('subscription', () => consumeSubscription(ns, name, input));
 */
export async function timeConsume<T>(kind: NonNullable<MetricDimensions['kind']>, consume: () => Promise<T>): Promise<T> {
  const waits = { waitedMs: 0 };
  const started = performance.now();
  const result = await consumeWaits.run(waits, consume);
  emit(METRIC.consumeTime, MetricUnit.Milliseconds, Math.max(0, performance.now() - started - waits.waitedMs), { dimensions: { kind } });
  return result;
}

/**
 * Reports `ms` spent waiting for messages to arrive (a long-poll sleep, or an SQS receive that
 * waited and came back empty) to the {@link timeConsume} around it; a no-op outside one.
 */
export function waitedFor(ms: number): void {
  const waits = consumeWaits.getStore();
  if (waits && ms > 0) waits.waitedMs += ms;
}

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

function emit(name: MetricName, unit: Unit, value: number, opts: { namespace?: string; dimensions?: MetricDimensions; metadata?: Record<string, string> }) {
  try {
    const single = metrics.singleMetric();
    for (const [k, v] of Object.entries(opts.dimensions ?? {})) if (v !== undefined) single.addDimension(k, v);
    if (opts.namespace) single.addMetadata('namespace', opts.namespace);
    for (const [k, v] of Object.entries(opts.metadata ?? {})) single.addMetadata(k, v);
    single.addMetric(name, unit, value);
  } catch (e) {
    // A metric must never fail the request it describes.
    logger.warn('metric not recorded', { metric: name, error: (e as Error).message });
  }
}
