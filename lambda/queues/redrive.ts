/**
 * Redrive: moves messages out of a queue (typically the one bound to a dead-letter topic) back to
 * a topic, for operators (`npm run admin -- redrive`). At least once: each batch is claimed like a
 * consume (hidden from consumers meanwhile), published to the topic, and only then removed from
 * the queue; a failure in between leaves the messages in the queue to reappear after the claim's
 * visibility timeout, so a message may be published twice but is never lost.
 *
 * Properties: the `dlq_*` properties the dead-lettering added (dlq_source_queue,
 * dlq_receive_count, dlq_reason) are removed, since they describe the failure being undone and a
 * new dead-lettering sets them afresh; `x-hop` is kept as it is, so a message that keeps failing
 * and being redriven still reaches the hop limit (DESIGN.md section 13) and is dropped there.
 */
import { ApiError, notFound } from '../domain/errors';
import type { MessageInput } from '../domain/message';
import { topicNameProblem } from '../domain/topics';
import { getQueue, releaseQueueRoom, type QueueItem } from '../storage/queues';
import { ackMessage, claimMessages, countMessages, deleteMessage, type QueueMessageItem } from '../storage/queue-messages';
import { matchBindings } from '../publishing/binding-index';
import { publishMessages, topicNotFound } from '../publishing/publish';
import { deliveryQueue } from '../adapters/delivery-queue';

/** Messages claimed and published per round (one publish call, at most 100 messages). */
export const REDRIVE_BATCH = 25;
/** How long claimed messages stay hidden: time enough to publish and delete a batch. */
export const REDRIVE_VISIBILITY_MS = 5 * 60 * 1000;

export interface RedriveOptions {
  toTopic: string;
  /** At most this many messages are moved. @default all */
  max?: number;
  /** Count what would move, change nothing. */
  dryRun?: boolean;
  clock?: () => number;
}

export interface RedriveResult {
  queue: string;
  topic: string;
  dry_run: boolean;
  /** Messages in the queue before the redrive (visible and in flight). */
  found: number;
  /** Published to the topic and removed from the queue (dry run: would be). */
  moved: number;
  /** Published, but their claim had ended before the delete: they stay and may be delivered again. */
  published_not_removed: number;
  /** Found expired on the way and removed, as a consume would. */
  expired: number;
  /** message_count of the queue afterwards. */
  remaining: number;
}

/** Properties of a redriven message: without the dead-lettering's `dlq_*`, with `x-hop` kept. */
export function redriveProperties(properties: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(properties ?? {}).filter(([k]) => !k.startsWith('dlq_')));
}

const toInput = (m: QueueMessageItem): MessageInput => ({
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
  if (bindings.some((b) => b.kind === 'WEBHOOK')) {
    try {
      deliveryQueue();
    } catch {
      throw new ApiError(
        422,
        'VALIDATION_ERROR',
        `a webhook matches topic ${topic}, and this process has no webhook delivery queue: set MSG_WEBHOOK_QUEUE_URL to the stack's delivery queue URL (AWS), or redrive to a topic no webhook matches`,
      );
    }
  }
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
  const found = (await countMessages(q.id)).count;
  const result: RedriveResult = { queue: name, topic: opts.toTopic, dry_run: !!opts.dryRun, found, moved: 0, published_not_removed: 0, expired: 0, remaining: found };
  if (opts.dryRun) return { ...result, moved: Math.min(found, max) };

  while (result.moved + result.published_not_removed < max) {
    const now = clock();
    const want = Math.min(REDRIVE_BATCH, max - result.moved - result.published_not_removed);
    const r = await claimMessages(q, { max: want, visibilityMs: REDRIVE_VISIBILITY_MS, now });
    if (r.expired.length) {
      result.expired += r.expired.length;
      await releaseQueueRoom(ns, q.name, q.id, r.expired.length, r.expired.reduce((n, m) => n + m.size, 0));
    }
    // Messages whose deliveries are used up are moved too: redriving is what gives them another chance.
    const batch = [...r.claimed, ...r.exhausted].slice(0, want);
    if (batch.length === 0) {
      if (r.expired.length) continue;
      break;
    }
    await publishMessages(ns, opts.toTopic, batch.map(toInput), clock());
    const removed: QueueMessageItem[] = [];
    for (const m of batch) {
      if (m.receipt && r.claimed.includes(m)) {
        const out = await ackMessage(q.id, m.message_id, m.receipt, clock());
        if (out.ok) removed.push(out.message);
        else result.published_not_removed++;
      } else {
        await deleteMessage(q.id, m.message_id);
        removed.push(m);
      }
    }
    // Exhausted messages beyond `want` were only held: they reappear within a minute.
    if (removed.length) await releaseQueueRoom(ns, q.name, q.id, removed.length, removed.reduce((n, m) => n + m.size, 0));
    result.moved += removed.length;
  }
  result.remaining = Math.max(0, (await getQueue(ns, name))?.message_count ?? 0);
  return result;
}
