/**
 * Redrive: moves messages out of a queue (typically the one bound to a dead-letter topic) back to
 * a topic, for operators (`npm run admin -- redrive`). At least once: each batch is received from
 * the queue's SQS queue by a long poll (hidden from consumers meanwhile), published to the topic, and only then
 * deleted; a failed publish makes the batch visible again at once, any other failure in between
 * leaves the messages to reappear after the receive's visibility timeout (30 s), so a message may
 * be published twice but is never lost; twice with the same id (derived from the queue and the
 * message's id), like an SQS duplicate.
 *
 * Properties: the `dlq_*` properties the dead-lettering added (dlq_source_queue,
 * dlq_receive_count, dlq_reason) are removed, since they describe the failure being undone and a
 * new dead-lettering sets them afresh; `x-hop` is kept as it is, so a message that keeps failing
 * and being redriven still reaches the hop limit (DESIGN.md section 13) and is dropped there.
 */
import { ApiError, notFound } from '../core/rules/errors';
import { derivedId } from '../core/rules/clock';
import type { MessageInput, PublishedMessage } from '../core/rules/message';
import { decodeQueueBody, isPastTtl } from '../core/rules/queue-messages';
import { topicNameProblem } from '../core/rules/topics';
import { byExpiryBucket, getQueue, getQueueCounters, releaseQueueRoom, type QueueItem } from './storage/queues';
import { deleteFromSqsQueue, holdInSqsQueue, receiveFromSqsQueue, releaseToSqsQueue } from './storage/service-queues';
import { hasDeliveryQueue } from '../webhooks/storage/delivery-queue';
import { matchBindings } from '../publishing/binding-index';
import { publishMessages, topicNotFound } from '../publishing/publish';

/** Messages received and published per round (SQS gives 10 per receive; one publish per round). */
export const REDRIVE_BATCH = 10;
/** Each receive long-polls this long; the redrive ends at the first that finds nothing. */
const REDRIVE_WAIT_SECONDS = 2;
/**
 * How long received messages stay hidden: time enough to publish and delete a batch (a redrive
 * call through the API runs at most 29 s, its function's timeout), and short, because a batch
 * whose receive answer was lost (SQS hid it, the SDK's retry got others or none; standard queues
 * have no receive attempt id to get it back: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html)
 * is hidden from the next redrive that long.
 */
export const REDRIVE_VISIBILITY_SECONDS = 30;

export interface RedriveOptions {
  toTopic: string;
  /** At most this many messages are moved. @default all */
  max?: number;
  /** Count what would move, change nothing. */
  dryRun?: boolean;
  clock?: () => number;
  /** Called after each batch (the CLI prints progress). */
  onBatch?: (r: RedriveResult) => void;
}

export interface RedriveResult {
  queue: string;
  topic: string;
  dry_run: boolean;
  /** Messages in the queue before the redrive (visible and in flight, its message_count). */
  found: number;
  /** Published to the topic and removed from the queue (dry run: would be). */
  moved: number;
  /** Published, but SQS did not confirm the delete: they stay and may be moved again. */
  published_not_removed: number;
  /** Found expired on the way and removed, as a consume would. */
  expired: number;
  /** message_count of the queue afterwards. */
  remaining: number;
}

/** Properties of a redriven message: without the dead-lettering's `dlq_*`, with `x-hop` kept. */
function redriveProperties(properties: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(properties ?? {}).filter(([k]) => !k.startsWith('dlq_')));
}

/**
 * The id of `m` once redriven from `q`: the same every time (SQS copies of one dead letter, or a
 * batch moved again after a call failed midway, arrive as the same message, at least once with
 * one id, never as two messages).
 */
const redrivenId = (q: QueueItem, m: PublishedMessage) => derivedId(m.published_at, `redrive\n${q.id}\n${m.message_id}`);

const toInput = (m: PublishedMessage): MessageInput => ({
  payload: m.payload,
  content_type: m.content_type,
  properties: redriveProperties(m.properties),
  ...(m.partition_key !== undefined ? { partition_key: m.partition_key } : {}),
});

/** Refuses, before anything moves, a redrive that could not publish or would feed itself. */
async function checkTarget(q: QueueItem, topic: string) {
  const why = topicNameProblem(topic);
  if (why) throw new ApiError(422, 'VALIDATION_ERROR', `--to-topic ${topic} is not a topic name: ${why}`);
  const bindings = await matchBindings(q.namespace, topic);
  if (bindings.length === 0) throw topicNotFound(topic);
  if (bindings.some((b) => b.kind === 'QUEUE' && b.id === q.id)) {
    throw new ApiError(422, 'VALIDATION_ERROR', `queue ${q.name} itself matches topic ${topic} (filter ${q.topic_filter}): its messages would come straight back`);
  }
  if (bindings.some((b) => b.kind === 'WEBHOOK') && !hasDeliveryQueue()) {
    throw new ApiError(
      422,
      'VALIDATION_ERROR',
      `a webhook matches topic ${topic}, and this process has no webhook delivery queue: set MSG_WEBHOOK_QUEUE_URL to the stack's delivery queue URL (AWS), or redrive to a topic no webhook matches`,
    );
  }
}

/**
 * The refusal that stopped a redrive, with how far it got: `details.moved` and
 * `details.published_not_removed` beside the refusal's own (a fan-out budget's 429 keeps its
 * `category`, `limit`, `reset` and `Retry-After`). What was moved stays moved.
 */
function stoppedAt(e: ApiError, r: RedriveResult): ApiError {
  const message = `Redrive stopped after it moved ${r.moved} message(s) to ${r.topic}: ${e.message}`;
  return new ApiError(e.status, e.code, message, { ...e.details, moved: r.moved, published_not_removed: r.published_not_removed, expired: r.expired }, e.headers);
}

/**
 * Moves up to `max` messages of queue `name` in namespace `ns` to `toTopic`.
 * @example await redrive('acme', 'orders-dlq', { toTopic: 'orders/retry', max: 100 })
 */
export async function redrive(ns: string, name: string, opts: RedriveOptions): Promise<RedriveResult> {
  const clock = opts.clock ?? Date.now;
  const max = opts.max ?? Infinity;
  const q = await getQueue(ns, name);
  if (!q) throw notFound('QUEUE_NOT_FOUND', `Queue ${name} in namespace ${ns}`);
  await checkTarget(q, opts.toTopic);
  const found = Math.max(0, (await getQueueCounters(ns, q.id)).message_count);
  const result: RedriveResult = { queue: name, topic: opts.toTopic, dry_run: !!opts.dryRun, found, moved: 0, published_not_removed: 0, expired: 0, remaining: found };
  if (opts.dryRun) return { ...result, moved: Math.min(found, max) };

  while (result.moved + result.published_not_removed < max) {
    const want = Math.min(REDRIVE_BATCH, max - result.moved - result.published_not_removed);
    // Long polls: a short poll samples some of SQS's servers and may answer nothing while messages
    // remain (lambda/queues/storage/service-queues.ts); an empty long poll means none is visible.
    const got = await receiveFromSqsQueue(q.sqs_queue, { max: want, waitSeconds: REDRIVE_WAIT_SECONDS, visibilitySeconds: REDRIVE_VISIBILITY_SECONDS, createdAt: q.created_at });
    if (got.length === 0) break;
    const now = clock();
    const decoded = got.map((r) => ({ r, m: decodeQueueBody(r.body) }));
    // Expired messages are removed as a consume would; redriving is what gives the others, those
    // out of deliveries included, another chance.
    const expired = decoded.filter((d) => !d.m || isPastTtl(d.m.published_at, q.message_ttl_seconds, now));
    const batch = decoded.filter((d) => !expired.includes(d)) as { r: (typeof got)[number]; m: PublishedMessage }[];
    if (batch.length) {
      try {
        await publishMessages(ns, opts.toTopic, batch.map((d) => toInput(d.m)), now, { messageIds: batch.map((d) => redrivenId(q, d.m)) });
      } catch (e) {
        // Not moved: visible again at once (best effort; ChangeMessageVisibility to 0,
        // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html),
        // so the next redrive moves the batch rather than finding it hidden for the visibility.
        await releaseToSqsQueue(q.sqs_queue, got.map((r) => r.handle)).catch(() => undefined);
        // Refused whole (the fan-out budget, or any other 4xx): the answer says how far it got.
        if (e instanceof ApiError && e.status < 500) throw stoppedAt(e, result);
        throw e;
      }
    }
    // SQS answers a delete with a handle a later receive superseded with success and deletes
    // nothing: a batch whose publish ran past the receive's visibility (the admin CLI has no
    // function timeout) may have been received, acknowledged and counted by a consumer meanwhile,
    // and counting it here too took it out of the counters twice. So the handles are held first
    // (one ChangeMessageVisibilityBatch per batch, which SQS refuses for a superseded handle:
    // ./storage/service-queues.ts `holdInSqsQueue`); what SQS refuses is no longer this
    // redrive's: published, not removed, not counted here (as is a batch whose hold got no answer).
    const held = await holdInSqsQueue(q.sqs_queue, decoded.map((d) => d.r.handle), REDRIVE_VISIBILITY_SECONDS);
    const lost = decoded.filter((d) => !held.has(d.r.handle)).map((d) => d.r.handle);
    const failed = new Set([...lost, ...(await deleteFromSqsQueue(q.sqs_queue, decoded.filter((d) => !lost.includes(d.r.handle)).map((d) => d.r.handle)))]);
    const removed = decoded.filter((d) => !failed.has(d.r.handle) && d.m);
    const removedExpired = expired.filter((d) => !failed.has(d.r.handle) && d.m).length;
    const buckets = byExpiryBucket(removed, q.message_ttl_seconds, (d) => d.m?.published_at, (d) => d.m?.size ?? 0);
    await releaseQueueRoom(ns, q.id, { count: removed.length, bytes: removed.reduce((n, d) => n + (d.m?.size ?? 0), 0), expired: removedExpired, buckets }, now);
    result.expired += removedExpired;
    result.moved += batch.filter((d) => !failed.has(d.r.handle)).length;
    result.published_not_removed += batch.filter((d) => failed.has(d.r.handle)).length;
    opts.onBatch?.({ ...result });
  }
  result.remaining = Math.max(0, (await getQueueCounters(ns, q.id)).message_count);
  return result;
}
