/**
 * The SQS side of service queues (DESIGN.md section 6): every service queue is one SQS standard
 * queue named `<deployment prefix><queue id>`, so a recreated queue is a new SQS queue and the
 * stack's IAM grants cover exactly `arn:aws:sqs:<region>:<account>:<prefix>*`. SQS holds the
 * messages, their visibility and receive counts, and the long polls; this module only speaks SQS
 * (it knows nothing of DynamoDB or publishing).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { config } from '../../core/config';
import { sleep } from '../../core/rules/clock';
import { fifoQueueName, type QueueOrdering } from '../../core/rules/ordering';
import { isQueueMissing, queueUrl, sendBatches, sqsClient, SqsSendError, SQS_BATCH_ENTRIES, type OutgoingMessage } from '../../core/adapters/sqs';

/** SQS's limits on MessageRetentionPeriod. */
const SQS_MIN_RETENTION_SECONDS = 60;
const SQS_MAX_RETENTION_SECONDS = 1_209_600;
/** SQS's largest message: room for a 256 KiB payload after JSON escaping, with its properties. */
const SQS_MAX_MESSAGE_BYTES = 1024 * 1024;
/** SQS waits at most 20 s in one ReceiveMessage (WaitTimeSeconds). */
const SQS_MAX_WAIT_SECONDS = 20;
/**
 * AWS documents that a new queue may take up to a second to be usable ("After you create a
 * queue, you must wait at least one second after the queue is created to be able to use the
 * queue"): a send that finds it missing is retried for this long before the queue counts as gone.
 */
const NEW_QUEUE_GRACE_MS = 2_000;
/** The age from which AWS says a new queue is usable (the same sentence): a refused receive waits for it. */
const NEW_QUEUE_USABLE_MS = 1_000;

/**
 * The SQS queue name of service queue `queueId` in this deployment; an ordered queue's ends with
 * `.fifo` (SQS requires it), under the same prefix, so the same IAM grant covers it.
 */
export const sqsQueueName = (queueId: string, ordering: QueueOrdering = 'none') =>
  ordering === 'fifo' ? fifoQueueName(config().sqsQueuePrefix, queueId) : `${config().sqsQueuePrefix}${queueId}`;

/** Tag keys on every SQS queue the service creates (the admin CLI lists queues by them). */
export const QUEUE_TAGS = { stack: 'messaging:stack', namespace: 'messaging:namespace', queue: 'messaging:queue' } as const;

export interface CreateSqsQueue {
  name: string;
  retentionSeconds: number;
  tags: Record<string, string>;
  /** The delay of messages sent without their own (extension). @default 0 */
  delaySeconds?: number;
  /** An SQS FIFO queue (extension; `name` must end with `.fifo`). */
  fifo?: boolean;
}

/**
 * FIFO queues in high-throughput mode: deduplication and the throughput quota per message group,
 * so the queue's throughput grows with the number of keys instead of stopping at 300 requests per
 * second (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/high-throughput-fifo.html).
 * Deduplication ids are always given (lambda/core/rules/ordering.ts), never derived from the body.
 */
const FIFO_QUEUE_ATTRIBUTES = {
  FifoQueue: 'true',
  DeduplicationScope: 'messageGroup',
  FifoThroughputLimit: 'perMessageGroupId',
  ContentBasedDeduplication: 'false',
} as const;

/**
 * Creates the SQS queue (SSE-SQS, 1 MiB messages, retention clamped to SQS's range).
 * CreateQueue is idempotent for equal attributes, so a retried create is harmless.
 */
export async function createSqsQueue({ name, retentionSeconds, tags, delaySeconds = 0, fifo = false }: CreateSqsQueue): Promise<void> {
  await sqsClient().send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        MessageRetentionPeriod: String(Math.min(SQS_MAX_RETENTION_SECONDS, Math.max(SQS_MIN_RETENTION_SECONDS, retentionSeconds))),
        MaximumMessageSize: String(SQS_MAX_MESSAGE_BYTES),
        SqsManagedSseEnabled: 'true',
        ...(delaySeconds ? { DelaySeconds: String(delaySeconds) } : {}),
        ...(fifo ? FIFO_QUEUE_ATTRIBUTES : {}),
      },
      tags,
    }),
  );
}

/** Deletes the SQS queue; resolves `false` when it was already gone. */
export async function deleteSqsQueue(name: string): Promise<boolean> {
  try {
    await sqsClient().send(new DeleteQueueCommand({ QueueUrl: queueUrl(name) }));
    return true;
  } catch (e) {
    if (isQueueMissing(e)) return false;
    throw e;
  }
}

export class SqsQueueGoneError extends Error {
  constructor(name: string) {
    super(`SQS queue ${name} does not exist`);
    this.name = 'SqsQueueGoneError';
  }
}

/**
 * Sends the messages (SendMessageBatch, 10 entries and 1 MiB per call, all calls in parallel, or
 * in turn when `ordered`). A queue SQS does not know yet is retried for
 * {@link NEW_QUEUE_GRACE_MS}, with only the messages not stored yet; after that
 * {@link SqsQueueGoneError}. Another failure throws {@link SqsSendError} naming the messages (by
 * their index in `messages`) that are not stored.
 */
export async function sendToSqsQueue(name: string, messages: OutgoingMessage[], opts: { ordered?: boolean } = {}): Promise<void> {
  const giveUpAt = Date.now() + NEW_QUEUE_GRACE_MS;
  // The messages not stored yet, by index. A retry sends only these: sending all again stored a
  // second SQS copy of every batch a parallel call had stored before another call met the queue
  // not known yet (a loaded CI run's competing-consumers test received 30 such copies).
  let left = messages.map((_, i) => i);
  for (let attempt = 0; ; attempt++) {
    try {
      return await sendBatches(queueUrl(name), left.map((i) => messages[i]), opts);
    } catch (e) {
      const unsent = e instanceof SqsSendError ? e.unsent.map((i) => left[i]) : left;
      if (!isQueueMissing(e)) throw e instanceof SqsSendError ? new SqsSendError(unsent, e.reason) : e;
      left = unsent;
      if (Date.now() >= giveUpAt) throw new SqsQueueGoneError(name);
      await sleep(Math.min(400, 50 * 2 ** attempt));
    }
  }
}

export interface ReceivedSqsMessage {
  body: string;
  /** The SQS receipt handle of this receive. */
  handle: string;
  /** SQS's ApproximateReceiveCount, this receive included. */
  receiveCount: number;
}

export interface ReceiveOptions {
  max: number;
  /** Long-poll wait, rounded to SQS's whole seconds; at least 1 s (a short poll samples only some of SQS's servers, see below)... */
  waitSeconds: number;
  /**
   * ...unless the caller already holds messages and only tops up: then a short poll (no wait) is
   * fine, since sampling can only make the answer smaller, never hide that the queue has messages.
   */
  topUp?: boolean;
  visibilitySeconds: number;
  abortSignal?: AbortSignal;
  /**
   * Epoch ms the queue was created: within {@link NEW_QUEUE_GRACE_MS} of it, a queue SQS does not
   * know yet is waited for instead of counting as gone (until `notAfter`: then no messages).
   */
  createdAt?: number;
  /** Epoch ms after which no further attempt is started. */
  notAfter?: number;
}

/** SQS refused a receive because too many messages of the queue are in flight (OverLimit). */
export class SqsOverLimitError extends Error {
  constructor(name: string) {
    super(`SQS queue ${name} has too many messages in flight`);
    this.name = 'SqsOverLimitError';
  }
}

/**
 * One ReceiveMessage call (at most 10 messages, a long poll of 1 to 20 s).
 *
 * Never a short poll: with `WaitTimeSeconds: 0` SQS "samples a subset of its servers [...] If you
 * have fewer than 1,000 messages in your queue, a particular request might not return any
 * messages" (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html),
 * while a long poll queries all of them and still answers as soon as a message is there.
 *
 * A FIFO queue's receive carries a `ReceiveRequestAttemptId`: the SDK retries the same command
 * (same id) after a lost answer, and SQS then returns the same messages instead of leaving them in
 * flight and their group blocked for the visibility timeout
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html).
 *
 * `OverLimit` (too many messages in flight: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html)
 * becomes {@link SqsOverLimitError}.
 */
export async function receiveFromSqsQueue(name: string, o: ReceiveOptions): Promise<ReceivedSqsMessage[]> {
  const command = new ReceiveMessageCommand({
    QueueUrl: queueUrl(name),
    MaxNumberOfMessages: Math.max(1, Math.min(SQS_BATCH_ENTRIES, o.max)),
    WaitTimeSeconds: o.topUp ? 0 : Math.max(1, Math.min(SQS_MAX_WAIT_SECONDS, Math.round(o.waitSeconds))),
    VisibilityTimeout: o.visibilitySeconds,
    MessageSystemAttributeNames: ['ApproximateReceiveCount'],
    ...(name.endsWith('.fifo') ? { ReceiveRequestAttemptId: randomUUID() } : {}),
  });
  for (let attempt = 0; ; attempt++) {
    const sentAt = Date.now();
    try {
      const out = await sqsClient().send(command, { abortSignal: o.abortSignal });
      return (out.Messages ?? []).map((m) => ({ body: m.Body ?? '', handle: m.ReceiptHandle ?? '', receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 1) }));
    } catch (e) {
      if ((e as { name?: string })?.name === 'OverLimit') throw new SqsOverLimitError(name);
      if (!isQueueMissing(e)) throw e;
      // AWS: a new queue may answer QueueDoesNotExist for at least a second after CreateQueue.
      // Within the grace from the service's stamp the receive tries again: the first refusal waits
      // until the queue is a second old, when AWS says it is usable (steps from 50 ms took five
      // receives and overshot that second by up to 400 ms), but never more than that second (the
      // stamp is another container's clock); later refusals back off, and the last pause is
      // shortened so one receive lands just inside the grace, as a publish's sends reach to its
      // end. The queue is gone when a receive sent after the grace is refused (one sent inside it
      // whose refusal came back late is sent again at once). The consume's deadline coming first
      // answers no messages: the queue is not known to be gone then.
      if (o.createdAt === undefined || sentAt >= o.createdAt + NEW_QUEUE_GRACE_MS) throw new SqsQueueGoneError(name);
      const now = Date.now();
      const graceLeft = Math.max(0, o.createdAt + NEW_QUEUE_GRACE_MS - now);
      const backoff = Math.min(400, 50 * 2 ** attempt);
      const untilUsable = attempt === 0 ? Math.min(NEW_QUEUE_USABLE_MS, o.createdAt + NEW_QUEUE_USABLE_MS - now) : 0;
      const pause = Math.min(Math.max(backoff, untilUsable), graceLeft);
      if (o.notAfter !== undefined && now + pause >= o.notAfter) return [];
      await sleep(pause);
    }
  }
}

const chunks = <T>(items: T[], n = SQS_BATCH_ENTRIES) => Array.from({ length: Math.ceil(items.length / n) }, (_, i) => items.slice(i * n, i * n + n));

/**
 * Deletes messages by receipt handle (DeleteMessageBatch, in parallel). Returns the handles that
 * were not deleted: those SQS reported as failed and every handle of a call that failed as a
 * whole (the other calls' handles are deleted: each answers for itself), with the first error of
 * a failed call. Note that SQS answers success for a stale handle too (the message is then not
 * deleted), so success here says nothing about whose delivery is current: the service judges
 * handles itself (lambda/queues/ack.ts).
 */
export async function deleteEachFromSqsQueue(name: string, handles: string[], abortSignal?: AbortSignal): Promise<{ failed: string[]; error?: unknown }> {
  const failed: string[] = [];
  let error: unknown;
  await Promise.all(
    chunks(handles).map(async (batch) => {
      try {
        const out = await sqsClient().send(
          new DeleteMessageBatchCommand({ QueueUrl: queueUrl(name), Entries: batch.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle })) }),
          { abortSignal },
        );
        for (const f of out.Failed ?? []) failed.push(batch[Number(f.Id)]);
      } catch (e) {
        error ??= e;
        failed.push(...batch);
      }
    }),
  );
  return { failed, error };
}

/** {@link deleteEachFromSqsQueue}, throwing only when no call succeeded. */
export async function deleteFromSqsQueue(name: string, handles: string[], abortSignal?: AbortSignal): Promise<string[]> {
  const { failed, error } = await deleteEachFromSqsQueue(name, handles, abortSignal);
  if (error !== undefined && failed.length === handles.length) throw error;
  return failed;
}

/**
 * Extends the visibility of received messages to `seconds` from now (ChangeMessageVisibilityBatch)
 * and returns the handles SQS accepted: the deliveries that are still current and now stay hidden
 * that long. SQS refuses a handle whose visibility has ended or that a later receive superseded
 * ("any attempt to change the visibility timeout or to delete that message [after its visibility
 * timeout] might result in an error": https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html,
 * errors `MessageNotInflight`, `ReceiptHandleIsInvalid`), while a delete with such a handle
 * succeeds and deletes nothing; so this, not a delete's answer, tells a current handle. A call that
 * fails as a whole keeps none of its handles.
 */
export async function holdInSqsQueue(name: string, handles: string[], seconds: number, abortSignal?: AbortSignal): Promise<Set<string>> {
  // Not known to be held when a call failed: left to reappear after the receive's visibility.
  return (await holdEachInSqsQueue(name, handles, seconds, abortSignal)).kept;
}

/**
 * {@link holdInSqsQueue}, telling apart the handles SQS refused from those of a call that failed as
 * a whole (`unanswered`, with the first such error): the latter may still be current.
 */
export async function holdEachInSqsQueue(name: string, handles: string[], seconds: number, abortSignal?: AbortSignal): Promise<{ kept: Set<string>; unanswered: string[]; error?: unknown }> {
  const kept = new Set<string>();
  const unanswered: string[] = [];
  let error: unknown;
  await Promise.all(
    chunks(handles).map(async (batch) => {
      try {
        const out = await sqsClient().send(
          new ChangeMessageVisibilityBatchCommand({ QueueUrl: queueUrl(name), Entries: batch.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle, VisibilityTimeout: seconds })) }),
          { abortSignal },
        );
        for (const ok of out.Successful ?? []) kept.add(batch[Number(ok.Id)]);
      } catch (e) {
        error ??= e;
        unanswered.push(...batch);
      }
    }),
  );
  return { kept, unanswered, error };
}

/** Makes received messages visible again at once (ChangeMessageVisibilityBatch to 0). */
export async function releaseToSqsQueue(name: string, handles: string[], abortSignal?: AbortSignal): Promise<void> {
  await Promise.all(
    chunks(handles).map((batch) =>
      sqsClient().send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl(name),
          Entries: batch.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle, VisibilityTimeout: 0 })),
        }),
        { abortSignal },
      ),
    ),
  );
}

export interface SqsQueueCounts {
  visible: number;
  inFlight: number;
  delayed: number;
}

/** SQS's approximate counts of a queue, or undefined when the queue does not exist. */
export async function sqsQueueCounts(name: string): Promise<SqsQueueCounts | undefined> {
  try {
    const out = await sqsClient().send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl(name),
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    const a = out.Attributes ?? {};
    return {
      visible: Number(a.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
      delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
    };
  } catch (e) {
    if (isQueueMissing(e)) return undefined;
    throw e;
  }
}

export interface ListedSqsQueue {
  name: string;
  tags: Record<string, string>;
  counts?: SqsQueueCounts;
  /** Epoch ms the queue was created (SQS's CreatedTimestamp). */
  createdAt?: number;
}

/** Every SQS queue whose name starts with `prefix`, with its tags and counts (admin CLI). */
export async function listSqsQueues(prefix: string): Promise<ListedSqsQueue[]> {
  const urls: string[] = [];
  let NextToken: string | undefined;
  do {
    const out = await sqsClient().send(new ListQueuesCommand({ QueueNamePrefix: prefix, MaxResults: 1000, NextToken }));
    urls.push(...(out.QueueUrls ?? []));
    NextToken = out.NextToken;
  } while (NextToken);
  return Promise.all(
    urls.map(async (url) => {
      const name = url.slice(url.lastIndexOf('/') + 1);
      const [tags, counts, created] = await Promise.all([
        sqsClient()
          .send(new ListQueueTagsCommand({ QueueUrl: queueUrl(name) }))
          .then((t) => t.Tags ?? {})
          .catch(() => ({})),
        sqsQueueCounts(name),
        sqsClient()
          .send(new GetQueueAttributesCommand({ QueueUrl: queueUrl(name), AttributeNames: ['CreatedTimestamp'] }))
          .then((a) => Number(a.Attributes?.CreatedTimestamp) * 1000 || undefined)
          .catch(() => undefined),
      ]);
      return { name, tags, counts, createdAt: created };
    }),
  );
}
