/**
 * Dead-lettering: republishing a message the service gives up on (a queue's used-up retries or a
 * full queue) to a dead-letter topic, with the hop count that stops republishing loops.
 */
import { ApiError } from '../domain/errors';
import { HOP_PROPERTY, hopCount, MAX_HOPS, type PublishedMessage } from '../domain/message';
import { publishMessages } from './publish';

/**
 * Publishes `m` to `topic` with `extra` properties and an incremented `x-hop`. Returns false when
 * the message is dropped instead: no topic, the hop limit reached, or nothing bound to the topic.
 */
export async function deadLetter(ns: string, topic: string | undefined, m: PublishedMessage, extra: Record<string, string>, now: number): Promise<boolean> {
  if (!topic) return false;
  const hops = hopCount(m.properties);
  if (hops >= MAX_HOPS) return false;
  try {
    await publishMessages(
      ns,
      topic,
      [
        {
          payload: m.payload,
          content_type: m.content_type,
          properties: { ...m.properties, ...extra, [HOP_PROPERTY]: String(hops + 1) },
          ...(m.partition_key !== undefined ? { partition_key: m.partition_key } : {}),
        },
      ],
      now,
    );
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.code === 'TOPIC_NOT_FOUND') return false;
    throw e;
  }
}
