/**
 * The sweeper Lambda, invoked by an EventBridge schedule: runs every task of ../sweeper/tasks.ts.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { gaugeMetric, LOG_METRICS_OPTIONS, logger, METRIC, metrics } from '../observability';
import { sweep } from '../sweeper/tasks';

export const handler = middy({ timeoutEarlyInMillis: 0 })
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics, LOG_METRICS_OPTIONS))
  .handler(async () => {
    const stats = await sweep(Date.now(), (msg, data) => logger.error(msg, data as Record<string, unknown>));
    logger.info('sweep done', { stats });
    const queues = stats.queues;
    if (queues && !('error' in queues)) {
      gaugeMetric(METRIC.queueDepth, 'Count', queues.depth ?? 0);
      gaugeMetric(METRIC.queueOldestMessageAge, 'Seconds', queues.oldest_age_seconds ?? 0);
    }
    return stats;
  });
