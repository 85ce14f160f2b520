/**
 * Queue lifecycle behind the HTTP handler (DESIGN.md section 6): create (an SQS queue, then the
 * resource, its binding and its counters in one transaction), describe, list, delete (the SQS
 * queue goes in the background, lambda/queues/sweep.ts). Consume and ack live in ./consume.ts
 * and ./ack.ts, the publish side in ./sink.ts.
 */
import type * as z from 'zod/mini';
import { alreadyExists, notFound } from '../core/rules/errors';
import type { createQueueSchema } from './rules/queues';
import { config } from '../core/config';
import { logger } from '../core/observability';
import { listResources, newResourceFields, resourceSummary } from '../core/storage/resources';
import { assertRoomFor, createResource, deleteResource } from '../core/storage/resource-writes';
import { countConsumers, getManyQueueCounters, getQueue, getQueueCounters, newQueueCounters, queueBindingSettings, type QueueCounters, type QueueItem } from './storage/queues';
import { createSqsQueue, deleteSqsQueue, QUEUE_TAGS, sqsQueueName } from './storage/service-queues';

export const queueNotFound = (name: string) => notFound('QUEUE_NOT_FOUND', `Queue ${name}`);

export async function requireQueue(ns: string, name: string): Promise<QueueItem> {
  const q = await getQueue(ns, name);
  if (!q) throw queueNotFound(name);
  return q;
}

/** Fields of create responses and list items (SPEC.md "Queue"). */
const summary = (q: QueueItem, c: Pick<QueueCounters, 'message_count'>, consumerCount: number) => ({
  ...resourceSummary({ ...q, message_count: c.message_count }),
  consumer_count: consumerCount,
});

/**
 * Creates the SQS queue first, so a 201 means a publish right after it is stored (a young queue
 * SQS does not know yet is retried on send, lambda/queues/storage/service-queues.ts). A name taken
 * meanwhile, or a failed transaction, removes the new SQS queue again.
 */
export async function createQueue(ns: string, input: z.output<typeof createQueueSchema>, now: number) {
  // The common refusal first: no SQS queue is made for a name that is taken.
  if (await getQueue(ns, input.name)) throw alreadyExists('QUEUE_ALREADY_EXISTS', `Queue ${input.name}`);
  const fields = newResourceFields('QUEUE', ns, input.name, input.topic_filter, now);
  const item: QueueItem = {
    ...fields,
    max_size_mb: input.max_size_mb,
    message_ttl_seconds: input.message_ttl_seconds,
    max_retries: input.max_retries,
    ...(input.dead_letter_topic ? { dead_letter_topic: input.dead_letter_topic } : {}),
    sqs_queue: sqsQueueName(fields.id, input.ordering),
    delay_seconds: input.delay_seconds,
    ordering: input.ordering,
  };
  await assertRoomFor(ns, 'QUEUE', item.topic_filter); // before the SQS queue: a namespace at its cap makes none
  await createSqsQueue({
    name: item.sqs_queue,
    // The TTL is enforced at receive too (SQS keeps messages at least 60 s).
    retentionSeconds: item.message_ttl_seconds,
    delaySeconds: input.delay_seconds,
    fifo: input.ordering === 'fifo',
    tags: { [QUEUE_TAGS.stack]: config().stackName, [QUEUE_TAGS.namespace]: ns, [QUEUE_TAGS.queue]: input.name },
  });
  // Stamped when SQS has answered CreateQueue: SQS may answer QueueDoesNotExist for about a second
  // after that ("wait at least one second after the queue is created":
  // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html),
  // and a receive waits for a queue younger than NEW_QUEUE_GRACE_MS from this stamp. Stamped
  // before CreateQueue, a slow CreateQueue (a loaded CI run: over a second) left a consume right
  // after the 201 outside the grace while SQS still refused it, and it answered 404.
  item.created_at = Math.max(now, Date.now());
  let created: boolean;
  try {
    created = await createResource(item, { ...queueBindingSettings(item) }, [newQueueCounters(ns, item.id, item.created_at)]);
  } catch (e) {
    await dropSqsQueue(item.sqs_queue);
    throw e;
  }
  if (!created) {
    await dropSqsQueue(item.sqs_queue);
    throw alreadyExists('QUEUE_ALREADY_EXISTS', `Queue ${input.name}`);
  }
  return summary(item, { message_count: 0 }, 0);
}

/** Best effort: an SQS queue left behind holds nothing and shows in `admin sqs-queues list`. */
async function dropSqsQueue(name: string) {
  await deleteSqsQueue(name).catch((e) => logger.warn('could not delete an unused SQS queue', { sqsQueue: name, error: (e as Error).message }));
}

export async function describeQueue(ns: string, name: string, now: number) {
  const q = await requireQueue(ns, name);
  const [counters, consumers] = await Promise.all([getQueueCounters(ns, q.id), countConsumers(ns, q.id, now)]);
  return {
    ...summary(q, counters, consumers),
    max_size_mb: q.max_size_mb,
    message_ttl_seconds: q.message_ttl_seconds,
    max_retries: q.max_retries,
    dead_letter_topic: q.dead_letter_topic ?? null,
    // Extensions, shown only when set: a queue created without them answers exactly the spec's fields.
    ...(q.delay_seconds ? { delay_seconds: q.delay_seconds } : {}),
    ...(q.ordering === 'fifo' ? { ordering: q.ordering } : {}),
  };
}

export async function listQueues(ns: string, limit: number, offset: number, now: number) {
  // Strongly consistent: a list right after a create shows it (docs/aws-parity.md).
  const { items, total } = await listResources<QueueItem>(ns, 'QUEUE', limit, offset, undefined, { consistent: true });
  const [counters, consumers] = await Promise.all([getManyQueueCounters(ns, items.map((q) => q.id)), Promise.all(items.map((q) => countConsumers(ns, q.id, now)))]);
  return { items: items.map((q, i) => summary(q, counters.get(q.id) ?? { message_count: 0 }, consumers[i])), total };
}

/**
 * Deletes the queue at once (the name is free again); its SQS queue and counters are removed in
 * the background from the purge job the delete leaves.
 */
export async function deleteQueue(ns: string, name: string, now: number) {
  if (!(await deleteResource(ns, 'QUEUE', name, now))) throw queueNotFound(name);
}
