/**
 * Webhook delivery in the local runtime: the delivery queue and its DLQ on fauxqs with the stack's
 * settings (lambda/webhooks/storage/delivery-queue.ts), a local event source in front of the same
 * delivery handler, and the retry workflow (the same ASL file) on aws-local-stepfunctions. With a
 * persisted SQS (MSG_DATA_DIR), queued delivery jobs survive a restart.
 */
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { resetConfig } from '../lambda/core/config';
import { queueUrl, sqsClient } from '../lambda/core/adapters/sqs';
import {
  DELIVERY_BATCH_SIZE,
  DELIVERY_BATCHING_WINDOW_SECONDS,
  DELIVERY_MAX_RECEIVE_COUNT,
  DELIVERY_QUEUE_VISIBILITY_SECONDS,
  DELIVERY_TIMEOUT_SECONDS,
  DELIVERY_RETENTION_SECONDS,
} from '../lambda/webhooks/storage/delivery-queue';
import { setRetryWorkflow } from '../lambda/webhooks/storage/retry-workflow';
import { closeAgents } from '../lambda/webhooks/storage/http-delivery';
import { randomUUID } from 'node:crypto';
import { handler as deliveryHandler } from '../lambda/handlers/webhook-delivery';
import { handler as attemptHandler } from '../lambda/handlers/webhook-attempt';
import { lambdaContext } from './lambda-context';
import { LocalSqsEventSource, type EventSourceOptions } from './event-source';
import { SQS_MAPPING_SCALING } from './event-source-scaling';
import { LocalRetryWorkflow } from './stepfunctions';
import { installSqsGroups } from './sqs-groups';

/** Name of the local delivery queue (its DLQ adds `-dlq`); outside the service queues' `msg_` prefix. */
const LOCAL_DELIVERY_QUEUE = 'msg-webhook-deliveries';
/**
 * The local runtime's delivery capacity: a deployment with `webhookDeliveryConcurrency` 16 (the
 * stack's default is 250). One machine runs every invocation, in one process whose HTTP agent
 * they share, so 250 batches of 10 POSTs at once would time out on the machine, not on the
 * service; the share follows it as the stack's does (namespaceShareFor: 40).
 */
const LOCAL_DELIVERY_CONCURRENCY = 16;

/**
 * The delivery queue's event source mapping as the stack sets it (lib/constructs/webhook-delivery.ts):
 * batches of DELIVERY_BATCH_SIZE, its batching window, and at most `maxConcurrency` batches,
 * reached as Lambda scales the mapping's pollers (SQS_MAPPING_SCALING). The local runtime and the
 * benches take it from here.
 */
export const deliveryMapping = (q: { url: string; arn: string }, log?: (line: string) => void, maxConcurrency?: number): EventSourceOptions => ({
  queueUrl: q.url,
  queueArn: q.arn,
  batchSize: DELIVERY_BATCH_SIZE,
  batchingWindowMs: DELIVERY_BATCHING_WINDOW_SECONDS * 1000,
  concurrency: maxConcurrency ?? LOCAL_DELIVERY_CONCURRENCY,
  scaling: SQS_MAPPING_SCALING,
  log,
});

export interface LocalWebhooks {
  queueUrl: string;
  deadLetterQueueUrl: string;
  workflow: LocalRetryWorkflow;
  events: LocalSqsEventSource;
  stop(): Promise<void>;
}

/**
 * Creates the delivery queue and its DLQ if missing (CreateQueue is idempotent for equal
 * attributes). Its jobs carry their namespace as MessageGroupId, which fauxqs drops on a standard
 * queue: ./sqs-groups.ts keeps it for the event source's fair-queue rule (./fair-queues.ts).
 */
export async function ensureDeliveryQueues(name = LOCAL_DELIVERY_QUEUE, visibilitySeconds = DELIVERY_QUEUE_VISIBILITY_SECONDS) {
  installSqsGroups();
  const dlq = await sqsClient().send(new CreateQueueCommand({ QueueName: `${name}-dlq`, Attributes: { MessageRetentionPeriod: String(14 * 86400) } }));
  const dlqArn = (await sqsClient().send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
  const main = await sqsClient().send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(visibilitySeconds),
        MaximumMessageSize: String(1024 * 1024),
        MessageRetentionPeriod: String(DELIVERY_RETENTION_SECONDS),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: DELIVERY_MAX_RECEIVE_COUNT }),
      },
    }),
  );
  const arn = (await sqsClient().send(new GetQueueAttributesCommand({ QueueUrl: main.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';
  return { url: queueUrl(name), arn, deadLetterQueueUrl: queueUrl(`${name}-dlq`) };
}

export interface LocalWebhookOptions {
  log?: (line: string) => void;
  /** Delivery queue name (tests use their own, so files never share jobs). */
  queueName?: string;
  /** @default the stack's (DELIVERY_QUEUE_VISIBILITY_SECONDS) */
  visibilitySeconds?: number;
  /** The mapping's maximum concurrency, as the stack's `webhookDeliveryConcurrency`. @default LOCAL_DELIVERY_CONCURRENCY */
  maxConcurrency?: number;
}

/**
 * Starts webhook delivery: points MSG_WEBHOOK_QUEUE_URL at the local delivery queue (publishers
 * in this process enqueue there), starts the event source and the retry workflow.
 */
export async function startLocalWebhooks(o: LocalWebhookOptions = {}): Promise<LocalWebhooks> {
  const log = o.log ?? (() => undefined);
  const q = await ensureDeliveryQueues(o.queueName, o.visibilitySeconds);
  process.env.MSG_WEBHOOK_QUEUE_URL = q.url;
  resetConfig();
  // The functions' middy handlers with a Lambda context of their own, as in the stack: their log
  // lines name the delivery and attempt functions, not the API request that ran last in this process.
  const workflow = new LocalRetryWorkflow((event) => attemptHandler(event, lambdaContext('msg-webhookAttempt', randomUUID())), log, { queueUrl: q.url });
  setRetryWorkflow(workflow);
  // The function's deadline: its timeout, or the queue's visibility when a test set that shorter.
  // AWS refuses an SQS event source mapping whose queue's visibility timeout is shorter than the
  // function's timeout ("Your function's timeout must be less than or equal to the queue's
  // visibility timeout", https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html),
  // so a batch never outlives its messages' visibility; work the handler fits in its remaining
  // time (./webhooks/place-wait.ts runs) must not either.
  const deadlineMs = Math.min(DELIVERY_TIMEOUT_SECONDS, o.visibilitySeconds ?? DELIVERY_QUEUE_VISIBILITY_SECONDS) * 1000;
  const deliver = (event: Parameters<typeof deliveryHandler>[0]) => deliveryHandler(event, lambdaContext('msg-webhookDelivery', randomUUID(), deadlineMs));
  const events = new LocalSqsEventSource(deliver, deliveryMapping(q, log, o.maxConcurrency)).start();
  return {
    queueUrl: q.url,
    deadLetterQueueUrl: q.deadLetterQueueUrl,
    workflow,
    events,
    async stop() {
      await events.stop();
      await workflow.stop();
      setRetryWorkflow(undefined);
      await closeAgents();
    },
  };
}
