/**
 * Publishing: match the topic against the namespace's bindings and hand the messages to every
 * matching binding's sink. Used by the publish endpoints and by the service's own republishing
 * (dead-lettering, webhook hooks).
 */
import { notFound } from '../domain/errors';
import { newId } from '../domain/clock';
import { DEFAULT_CONTENT_TYPE, utf8Bytes, type MessageInput, type PublishedMessage } from '../domain/message';
import type { ResourceKind } from '../storage/keys';
import type { Binding } from '../storage/resources';
import { deduplicationId } from '../domain/ordering';
import { matchBindings } from './binding-index';
import { SINKS, type MessageDelivery } from './sinks';
import { settleAll } from './settle';

export const topicNotFound = (topic: string) => {
  const e = notFound('TOPIC_NOT_FOUND', `Topic ${topic}`);
  e.message = `No queue, stream, subscription or webhook filter matches topic "${topic}"; create one whose topic_filter matches it first.`;
  return e;
};

export interface PublishOptions {
  /** The client's Idempotency-Key: ordered queues deduplicate a retried publish by it. */
  idempotencyKey?: string;
}

/**
 * Publishes `inputs` to `topic` in namespace `ns` and returns the stored messages, in input order.
 * Throws 404 TOPIC_NOT_FOUND (storing nothing) when no binding matches.
 */
export async function publishMessages(ns: string, topic: string, inputs: MessageInput[], now: number, opts: PublishOptions = {}): Promise<PublishedMessage[]> {
  const bindings = await matchBindings(ns, topic);
  if (bindings.length === 0) throw topicNotFound(topic);
  const messages: PublishedMessage[] = inputs.map((m) => ({
    message_id: newId(now),
    topic,
    payload: m.payload,
    content_type: m.content_type ?? DEFAULT_CONTENT_TYPE,
    properties: m.properties ?? {},
    ...(m.partition_key !== undefined ? { partition_key: m.partition_key } : {}),
    published_at: now,
    size: utf8Bytes(m.payload),
  }));
  const idempotency = opts.idempotencyKey === undefined ? undefined : { namespace: ns, topic, key: opts.idempotencyKey };
  const delivery: MessageDelivery[] = inputs.map((m, i) => ({ delaySeconds: m.delay_seconds, dedupId: deduplicationId(idempotency, i, messages[i].message_id) }));
  const byKind = new Map<ResourceKind, Binding[]>();
  for (const b of bindings) byKind.set(b.kind, [...(byKind.get(b.kind) ?? []), b]);
  await settleAll(
    [...byKind].map(async ([kind, list]) => {
      const sink = SINKS[kind];
      if (!sink) throw new Error(`no sink for bindings of kind ${kind}`);
      return sink({ namespace: ns, now, republish: publishMessages, delivery }, list, messages);
    }),
  );
  return messages;
}
