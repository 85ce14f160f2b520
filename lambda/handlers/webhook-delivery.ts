/**
 * The webhook delivery Lambda: consumes delivery jobs from SQS (the local runtime calls it with
 * the same event shape). Thin: the batch's work (first attempts, the namespace's share, the
 * records SQS redelivers) is ../webhooks/delivery-batch.ts.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { LOG_METRICS_OPTIONS, logger, metrics } from '../core/observability';
import { processBatch } from '../webhooks/delivery-batch';

export const handler = middy<SQSEvent, SQSBatchResponse, Error, Context>({ timeoutEarlyInMillis: 0 })
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics, LOG_METRICS_OPTIONS))
  .handler(processBatch);
