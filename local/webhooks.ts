/**
 * Wires the local stand-ins of the webhook delivery queue (SQS) and retry workflow (Step
 * Functions) into the Lambda code, with the same handler modules behind them as in AWS.
 */
import { setDeliveryQueue } from '../lambda/adapters/delivery-queue';
import { setRetryWorkflow } from '../lambda/adapters/retry-workflow';
import { closeAgents } from '../lambda/adapters/http-delivery';
import { processBatch } from '../lambda/handlers/webhook-delivery';
import { runAction } from '../lambda/handlers/webhook-attempt';
import { LocalSqsQueue, type LocalSqsOptions } from './sqs';
import { LocalRetryWorkflow } from './stepfunctions';

export interface LocalWebhooks {
  queue: LocalSqsQueue;
  workflow: LocalRetryWorkflow;
  stop(): Promise<void>;
}

export function startLocalWebhooks(log: (line: string) => void = () => undefined, sqs: LocalSqsOptions = {}): LocalWebhooks {
  const queue = new LocalSqsQueue(processBatch, { log, ...sqs });
  const workflow = new LocalRetryWorkflow(runAction, log);
  setDeliveryQueue(queue);
  setRetryWorkflow(workflow);
  return {
    queue,
    workflow,
    async stop() {
      await queue.stop();
      await workflow.stop();
      setDeliveryQueue(undefined);
      setRetryWorkflow(undefined);
      await closeAgents();
    },
  };
}
