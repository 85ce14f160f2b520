/**
 * The end of a retry workflow execution that stopped other than by success: the target of the
 * stack's rule on failed executions (lib/constructs/webhook-delivery.ts). The workflow itself
 * (lambda/webhooks/workflows/webhook-retry.asl.json) only waits and puts the retry job on the delivery
 * queue; when its SendMessage fails past the ASL's retries (or the execution is aborted or times
 * out) the job never reaches the queue, so the delivery ends here as failed unless its record says
 * it ended: counted once, with its on_failure hook and a copy kept for replay
 * (lambda/webhooks/failed-execution.ts). Locally, the runner of the workflow
 * (local/stepfunctions.ts) calls the same function the same way.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Context } from 'aws-lambda';
import type { RetryState } from '../webhooks/rules/delivery';
import { LOG_METRICS_OPTIONS, logger, metrics } from '../core/observability';
import { runAction, type AttemptEvent, type ExecutionStatusEvent } from '../webhooks/failed-execution';

// What local/, bin/, bench/ and the tests name of this function, where the stack's rule runs it.
export { runAction, type AttemptEvent, type ExecutionStatusEvent };

export const handler = middy<AttemptEvent | ExecutionStatusEvent, RetryState | undefined, Error, Context>({ timeoutEarlyInMillis: 0 })
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics, LOG_METRICS_OPTIONS))
  .handler(runAction);
