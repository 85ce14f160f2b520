/**
 * Dead-lettering (DESIGN.md sections 6 and 13): what a message the service gives up on becomes
 * when it is republished to a dead-letter topic. Pure; the republishing itself is done by the
 * caller (lambda/publishing/dead-letter.ts).
 */
import { derivedId } from '../core/rules/clock';
import { HOP_PROPERTY, hopCount, MAX_HOPS, type MessageInput, type PublishedMessage } from '../core/rules/message';

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
