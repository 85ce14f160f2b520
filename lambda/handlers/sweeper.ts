/**
 * The sweeper Lambda, invoked by an EventBridge schedule: runs every task of ../sweeper/tasks.ts.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logger } from '../observability';
import { sweep } from '../sweeper/tasks';

export const handler = middy({ timeoutEarlyInMillis: 0 })
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async () => {
    const stats = await sweep(Date.now(), (msg, data) => logger.error(msg, data as Record<string, unknown>));
    logger.info('sweep done', { stats });
    return stats;
  });
