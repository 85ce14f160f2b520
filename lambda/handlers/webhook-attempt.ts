/**
 * The Task states of the webhook retry workflow (lambda/workflows/webhook-retry.asl.json): one
 * Lambda with three actions, `attempt` (one retry after the Wait), `give_up` (the Attempt task's
 * Catch: the delivery ends as failed) and `finish` (the on_success / on_failure / send_to_dlq hook). Locally, aws-local-stepfunctions binds the same two functions
 * to the Task states.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Context } from 'aws-lambda';
import type { RetryState } from '../domain/delivery';
import { LOG_METRICS_OPTIONS, logger, metrics } from '../observability';
import { finishDelivery, flushDeliveryWrites, giveUpDelivery, retryAttempt } from '../webhooks/deliver';

export interface AttemptEvent {
  action: 'attempt' | 'finish' | 'give_up';
  state: RetryState;
}

function act(event: AttemptEvent): Promise<RetryState> {
  if (event.action === 'attempt') return retryAttempt(event.state);
  if (event.action === 'finish') return finishDelivery(event.state);
  if (event.action === 'give_up') return giveUpDelivery(event.state);
  throw new Error(`unknown webhook workflow action ${String((event as { action?: unknown }).action)}`);
}

/** Runs the action, then writes the counters and log pages it collected (also when it threw). */
export async function runAction(event: AttemptEvent): Promise<RetryState> {
  try {
    return await act(event);
  } finally {
    await flushDeliveryWrites();
  }
}

export const handler = middy<AttemptEvent, RetryState, Error, Context>({ timeoutEarlyInMillis: 0 })
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics, LOG_METRICS_OPTIONS))
  .handler(runAction);
