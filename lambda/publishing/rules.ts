/**
 * Publishing's pure rules. Dead-lettering (DESIGN.md sections 6 and 13): what a message the
 * service gives up on (a queue's used-up retries or a full queue) becomes when it is republished
 * to a dead-letter topic, with the hop count that stops republishing loops, and its republishing
 * in as few publishes as the batch limit allows, through the `republish` its caller gives (publish
 * itself). And the settling of a publish's writes.
 */
import { derivedId } from '../core/rules/clock';
import { ApiError } from '../core/rules/errors';
import { HOP_PROPERTY, hopCount, MAX_BATCH_MESSAGES, MAX_HOPS, type MessageInput, type PublishedMessage } from '../core/rules/message';

/**
 * The message to publish to the dead-letter topic, with `extra` properties and `x-hop` + 1; or
 * undefined when it must be dropped instead because it already made {@link MAX_HOPS} hops.
 * @example deadLetterInput(m, { dlq_source_queue: 'orders', dlq_receive_count: '4' })?.properties['x-hop'] // '1'
 */
export function deadLetterInput(m: Pick<PublishedMessage, 'payload' | 'content_type' | 'properties' | 'partition_key'>, extra: Record<string, string>): MessageInput | undefined {
  const hops = hopCount(m.properties);
  if (hops >= MAX_HOPS) return undefined;
  return {
    payload: m.payload,
    content_type: m.content_type,
    properties: { ...m.properties, ...extra, [HOP_PROPERTY]: String(hops + 1) },
    ...(m.partition_key !== undefined ? { partition_key: m.partition_key } : {}),
  };
}

/**
 * The `message_id` of the dead-letter copy a queue makes of `m`: the same however often the
 * dead-lettering is tried (from the queue's incarnation, the original id and its hop count, so a
 * message redriven and dead-lettered again, or dead-lettered by another queue, gets another id).
 * SQS may have stored a send whose answer was lost; the settle's retry then stores the same
 * message again, a copy like SQS's own duplicates (one ack record per id), not a second
 * dead-lettering. Its time part is the original's publish time.
 * @example deadLetterId('q1', m) === deadLetterId('q1', m) // true
 */
export function deadLetterId(queueId: string, m: Pick<PublishedMessage, 'message_id' | 'published_at' | 'properties'>): string {
  return derivedId(m.published_at, `dead-letter\n${queueId}\n${m.message_id}\n${hopCount(m.properties)}`);
}

export type Republish = (ns: string, topic: string, inputs: MessageInput[], now: number, opts?: { messageIds?: string[] }) => Promise<unknown>;

export interface DeadLetterOutcome {
  /** Republished to the dead-letter topic. */
  deadLettered: number;
  /** Dropped: no topic, the hop limit reached, or nothing bound to the topic. */
  dropped: number;
}

/**
 * Publishes `messages` (each with its own `extra` properties) to `topic` in as few publishes as the
 * batch limit allows. Messages with no topic, at the hop limit, or whose topic nothing matches are
 * dropped and counted; any other failure is thrown (the caller keeps the messages).
 */
export async function deadLetterAll(
  republish: Republish,
  ns: string,
  topic: string | undefined,
  messages: { message: PublishedMessage; extra: Record<string, string>; id?: string }[],
  now: number,
): Promise<DeadLetterOutcome> {
  if (!topic || messages.length === 0) return { deadLettered: 0, dropped: messages.length };
  const kept = messages.flatMap(({ message, extra, id }) => {
    const input = deadLetterInput(message, extra);
    return input ? [{ input, id }] : [];
  });
  const inputs = kept.map((k) => k.input);
  // Given ids (every caller gives all or none) are kept, so a retry publishes the same messages.
  const ids = kept.every((k) => k.id !== undefined) ? kept.map((k) => k.id as string) : undefined;
  const atHopLimit = messages.length - inputs.length;
  try {
    for (let i = 0; i < inputs.length; i += MAX_BATCH_MESSAGES) {
      await republish(ns, topic, inputs.slice(i, i + MAX_BATCH_MESSAGES), now, ids ? { messageIds: ids.slice(i, i + MAX_BATCH_MESSAGES) } : undefined);
    }
    return { deadLettered: inputs.length, dropped: atHopLimit };
  } catch (e) {
    if (e instanceof ApiError && e.code === 'TOPIC_NOT_FOUND') return { deadLettered: 0, dropped: messages.length };
    throw e;
  }
}

/** One message to the dead-letter topic (with a new id); false when it was dropped instead. */
export async function deadLetter(republish: Republish, ns: string, topic: string | undefined, m: PublishedMessage, extra: Record<string, string>, now: number): Promise<boolean> {
  return (await deadLetterAll(republish, ns, topic, [{ message: m, extra }], now)).deadLettered === 1;
}

/**
 * Waits for every write of a publish, then throws the first failure. A failing binding must not
 * answer the publish while the others still write: Lambda freezes the container once the handler
 * answers, so their remaining calls (a stream clearing its reservation, a queue giving back its
 * room) would wait for the container's next invocation, if it ever comes; and a client retrying
 * the 5xx would race them.
 * @example await settleAll([storeInQueue(), appendToStream()]) // throws the queue's error after both ended
 */
export async function settleAll(writes: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(writes)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
