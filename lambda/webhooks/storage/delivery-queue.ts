/**
 * The webhook delivery queue: an SQS queue (the stack's, or the local runtime's on fauxqs) at
 * `MSG_WEBHOOK_QUEUE_URL`, consumed by the delivery function through an event source (a local
 * poller in the local runtime, local/event-source.ts). Publish waits for {@link enqueueJobs}
 * before answering 201 (DESIGN.md section 5).
 *
 * The queue's settings are declared here once, for the stack (lib/constructs/webhook-delivery.ts)
 * and the local runtime alike.
 */
import { config } from '../../core/config';
import type { DeliveryJob } from '../rules/delivery';
import { sqsJson } from '../../core/rules/queue-messages';
import { ChangeMessageVisibilityBatchCommand } from '@aws-sdk/client-sqs';
import { SQS_BATCH_ENTRIES, sendBatches, sqsClient, type OutgoingMessage } from '../../core/adapters/sqs';

/** The delivery function's timeout: one attempt per record, all records of a batch at once; 30 s is the longest webhook timeout. */
export const DELIVERY_TIMEOUT_SECONDS = 60;
/** AWS: a queue's visibility timeout should be at least six times its function's timeout. */
export const DELIVERY_QUEUE_VISIBILITY_SECONDS = DELIVERY_TIMEOUT_SECONDS * 6;
/** Receives before SQS moves a job to the DLQ (only records that throw are received again). */
export const DELIVERY_MAX_RECEIVE_COUNT = 5;
/**
 * Records per delivery invocation at most (the event source's batch size): the 10 of one SQS
 * receive. The delivery function writes its counters, delivery-log pages and namespace share once
 * per batch, so a larger batch would make each delivery pay less for them, but a
 * batch above 10 needs a batching window (below), and a window costs latency.
 */
export const DELIVERY_BATCH_SIZE = 10;
/**
 * How long the event source gathers records for a batch (its MaximumBatchingWindowInSeconds): none.
 * A window of 1 s with batches of 20 cut the write units per delivery from 1.55 to 1.30 in the
 * bench, but "If you're using a batch window and your Amazon SQS queue contains very low traffic,
 * Lambda might wait for up to 20 seconds before invoking your function"
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html): a webhook of a quiet
 * namespace would be delivered up to 20 s after its publish in AWS, past the 15 s the contract's
 * delivery cases wait, and far from what users of a webhook service expect. The event source and
 * the local one (local/event-source.ts) support a window; docs/design/0018-webhook-delivery-writes.md.
 */
export const DELIVERY_BATCHING_WINDOW_SECONDS = 0;
/** Delivery jobs wait at most this long in the queue. */
export const DELIVERY_RETENTION_SECONDS = 4 * 24 * 3600;
/**
 * Delivery invocations at once (the event source's maximum concurrency, 2 to 1,000:
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html), by default a quarter of
 * the account's Lambda concurrency (1,000 unless raised:
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html): 250. Waiting consumers
 * may hold half of it (lambda/core/rules/long-poll-limits.ts), so a delivery backlog and long polls
 * together leave a quarter for publishes, acks, management and the retry workflow. The arithmetic
 * (docs/performance.md "Webhook throughput on AWS"): with 200 ms receivers a batch of 10 holds its
 * invocation about 0.3 s, so 250 invocations carry about 8,000 deliveries a second. The stack
 * takes another value from `webhookDeliveryConcurrency` (lib/deployment.ts).
 */
export const DELIVERY_CONCURRENCY_SHARE_OF_ACCOUNT = 0.25;
/** The event source's maximum concurrency accepts 2 to 1,000 (ScalingConfig.MaximumConcurrency). */
export const DELIVERY_MIN_CONCURRENCY = 2;
export const DELIVERY_MAX_CONCURRENCY_LIMIT = 1000;

/** The default delivery concurrency for an account with `accountConcurrency` executions. */
export function defaultDeliveryConcurrency(accountConcurrency: number): number {
  return Math.min(DELIVERY_MAX_CONCURRENCY_LIMIT, Math.max(DELIVERY_MIN_CONCURRENCY, Math.floor(accountConcurrency * DELIVERY_CONCURRENCY_SHARE_OF_ACCOUNT)));
}

/**
 * One namespace's share of the delivery capacity (`MSG_WEBHOOK_NAMESPACE_SHARE`, which the stack
 * sets from the concurrency): a quarter of the jobs `concurrency` batches hold
 * (lambda/webhooks/share.ts), so one namespace's backlog leaves three quarters to the others.
 */
export const namespaceShareFor = (concurrency: number): number => Math.max(1, Math.floor((concurrency * DELIVERY_BATCH_SIZE) / 4));

/**
 * The message group of a delivery job on the delivery queue: its namespace. On a standard queue a
 * `MessageGroupId` makes it a fair queue: SQS tells each group's share of the messages in flight
 * and of the consumers' processing time, and when one group takes far more than the others it
 * hands out the other groups' messages first, so a namespace with a backlog of slow receivers does
 * not hold back another namespace's deliveries
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues.html;
 * the local event source emulates it, local/fair-queues.ts).
 */
const deliveryGroupOf = (job: { namespace: string }): string => job.namespace;

/**
 * The SQS message of one delivery job (or of a body already serialised: its namespace is read
 * back from it), in its namespace's message group. Every send to the delivery queue goes through
 * here.
 */
export function deliveryMessage(job: { namespace: string } | string, delaySeconds?: number): Exclude<OutgoingMessage, string> {
  const body = typeof job === 'string' ? job : sqsJson(job);
  const namespace = typeof job === 'string' ? (JSON.parse(job) as { namespace?: unknown }).namespace : job.namespace;
  const groupId = typeof namespace === 'string' && namespace ? deliveryGroupOf({ namespace }) : undefined;
  return { body, ...(groupId ? { groupId } : {}), ...(delaySeconds ? { delaySeconds } : {}) };
}

function deliveryQueueUrl(): string {
  const url = config().webhookQueueUrl;
  if (!url) throw new Error('MSG_WEBHOOK_QUEUE_URL is not set: this process has no webhook delivery queue');
  return url;
}

/**
 * Queues every job; resolves once SQS stored all of them, throws otherwise. `delays` (same order
 * as `jobs`, extension) hold a job back as SQS DelaySeconds: its first attempt comes after it.
 */
export async function enqueueJobs(jobs: DeliveryJob[], delays: (number | undefined)[] = []): Promise<void> {
  if (!jobs.length) return;
  const url = deliveryQueueUrl();
  await sendBatches(url, jobs.map((j, i) => deliveryMessage(j, delays[i])));
}

/** Whether this process can enqueue delivery jobs (the admin CLI's redrive asks before it moves anything). */
export const hasDeliveryQueue = () => Boolean(config().webhookQueueUrl);

/**
 * Puts jobs (their SQS bodies) back on the queue, visible again after `delaySeconds`: as new
 * messages, so waiting never counts toward the redrive policy's receives. Throws unless SQS
 * stored every one.
 */
export async function deferJobs(bodies: string[], delaySeconds: number): Promise<void> {
  const url = deliveryQueueUrl();
  await sendBatches(url, bodies.map((body) => deliveryMessage(body, delaySeconds)));
}

/**
 * Sets the visibility of received jobs (their receipt handles) to `seconds` from now: a job the
 * handler then reports in `batchItemFailures` is received again after that, not after the queue's
 * visibility timeout ("you can change the visibility timeout of a message [...] using
 * ChangeMessageVisibility",
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html),
 * and each receive counts toward the redrive policy's maxReceiveCount. Answers how many SQS did
 * not change (their visibility ended, or the call failed): those come back after the visibility
 * timeout they have.
 */
export async function visibleAgainAfter(receiptHandles: string[], seconds: number): Promise<number> {
  const url = deliveryQueueUrl();
  let unchanged = 0;
  for (let i = 0; i < receiptHandles.length; i += SQS_BATCH_ENTRIES) {
    const part = receiptHandles.slice(i, i + SQS_BATCH_ENTRIES);
    try {
      const out = await sqsClient().send(
        new ChangeMessageVisibilityBatchCommand({ QueueUrl: url, Entries: part.map((h, j) => ({ Id: String(j), ReceiptHandle: h, VisibilityTimeout: seconds })) }),
      );
      unchanged += out.Failed?.length ?? 0;
    } catch {
      unchanged += part.length;
    }
  }
  return unchanged;
}
