/**
 * The sweeper Lambda, invoked by an EventBridge schedule: runs every task of ../sweeper/tasks.ts.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { LOG_METRICS_OPTIONS, logger, metrics } from '../observability';
import { sweep } from '../sweeper/tasks';

export const handler = middy({ timeoutEarlyInMillis: 0 })
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics, LOG_METRICS_OPTIONS))
  .handler(async () => {
    const stats = await sweep(Date.now(), (msg, data) => logger.error(msg, data as Record<string, unknown>));
    // Queue depth and the age of the oldest message come from SQS's own metrics (AWS/SQS).
    logger.info('sweep done', { stats });
    return stats;
  });
