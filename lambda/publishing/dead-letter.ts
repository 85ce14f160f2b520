/**
 * Dead-lettering: republishing messages the service gives up on (a queue's used-up retries or a
 * full queue) to a dead-letter topic, in one publish per call, with the hop count that stops
 * republishing loops (lambda/publishing/rules.ts).
 */
import { ApiError } from '../core/rules/errors';
import { deadLetterInput } from './rules';
import type { MessageInput, PublishedMessage } from '../core/rules/message';
import { MAX_BATCH_MESSAGES } from '../core/rules/message';

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
