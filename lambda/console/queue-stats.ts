/**
 * `GET /queues/{name}/stats` (SQS's counts of a queue) and `POST /queues/{name}/redrive` (docs/console.md).
 */
import * as z from 'zod/mini';
import { ApiError, notFound } from '../core/rules/errors';
import { isoTime } from '../core/rules/envelope';
import { intIn } from '../core/rules/validation';
import { topicNameProblem } from '../core/rules/topics';
import { expiryBucketWidthMs, getQueue } from '../queues/storage/queues';
import { oldestMessage } from '../queues/storage/queue-oldest';
import { sqsQueueCounts } from '../queues/storage/service-queues';
import { redrive, REDRIVE_BATCH } from '../queues/redrive';

/** Messages a redrive call moves at most, so it ends well inside the function's timeout. */
export const REDRIVE_MAX_PER_CALL = 10 * REDRIVE_BATCH;

export const redriveSchema = z.object({
  to_topic: z.string().check(
    z.refine((t) => !topicNameProblem(t), { message: 'must be a topic name (levels separated by /, no wildcards)' }),
  ),
  max: z._default(intIn(1, REDRIVE_MAX_PER_CALL), REDRIVE_MAX_PER_CALL),
});

/**
 * A queue's SQS counts: visible, in flight (received, not yet acked or visible again), delayed;
 * and the age of its oldest live message, from the queue's expiry buckets (storage/queue-oldest.ts).
 */
export async function queueStats(ns: string, name: string, now: number) {
  const q = await getQueue(ns, name);
  if (!q) throw notFound('QUEUE_NOT_FOUND', `Queue ${name}`);
  // SQS's approximate counts (they settle within about a minute):
  // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_GetQueueAttributes.html
  const [sqs, oldest] = await Promise.all([sqsQueueCounts(q.sqs_queue).catch(deniedCounts), oldestMessage(ns, q.id, q.message_ttl_seconds, now)]);
  const counts = sqs ?? { visible: 0, inFlight: 0, delayed: 0 };
  return {
    name: q.name,
    visible: counts.visible,
    in_flight: counts.inFlight,
    delayed: counts.delayed,
    oldest_message_age_seconds: oldest ? Math.max(0, Math.floor((now - oldest.publishedNoEarlierThan) / 1000)) : null,
    oldest_message_age_precision_seconds: Math.ceil((oldest?.precisionMs ?? expiryBucketWidthMs(q.message_ttl_seconds)) / 1000),
    measured_at: isoTime(now),
  };
}

/**
 * IAM refused SQS's counts (HTTP 403, AccessDenied: a deployment whose grants lag behind the
 * code): no retry helps, so the 500 says what the operator must do instead of "retry later".
 */
function deniedCounts(e: unknown): never {
  const err = e as { name?: string; $metadata?: { httpStatusCode?: number } };
  if (err?.name === 'AccessDenied' || err?.name === 'AccessDeniedException' || err?.$metadata?.httpStatusCode === 403) {
    throw new ApiError(500, 'INTERNAL_ERROR', "The service may not read this queue's SQS counts (sqs:GetQueueAttributes was denied): the deployment's IAM grants are older than its code. The operator must deploy the stack again; retrying does not help.");
  }
  throw e;
}

/** Moves up to `max` messages of a queue (typically a dead-letter topic's queue) to a topic. */
export async function redriveQueue(ns: string, name: string, input: z.output<typeof redriveSchema>) {
  const r = await redrive(ns, name, { toTopic: input.to_topic, max: input.max });
  return { queue: r.queue, topic: r.topic, moved: r.moved, published_not_removed: r.published_not_removed, expired: r.expired, remaining: r.remaining };
}

