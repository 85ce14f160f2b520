/**
 * Publishing: match the topic against the namespace's bindings and hand the messages to every
 * matching binding's sink. Used by the publish endpoints and by the service's own republishing
 * (dead-lettering, webhook hooks).
 */
import { reserveHeld } from '../limits/storage/held-quota';
import { logger } from '../core/observability';
import { notFound } from '../core/rules/errors';
import { newId } from '../core/rules/clock';
import { APPLICATION_PROPERTY, DEFAULT_CONTENT_TYPE, utf8Bytes, type MessageInput, type PublishedMessage } from '../core/rules/message';
import { reachedWrites } from '../core/rules/fanout-writes';
import type { ResourceKind } from '../core/storage/keys';
import type { Binding } from '../core/storage/resources';
import { deduplicationId } from '../core/rules/ordering';
import { matchForPublish } from './binding-index';
import { SINKS } from './sinks';
import type { MessageDelivery, SinkContext } from './sink';
import { settleAll } from './rules';
import { dueAt, isLongDelay, remainingDelaySeconds } from '../core/rules/delays';
import { refundFanoutWrites, spendFanoutWrites } from './write-budget';
import type { DeferredCount } from '../core/rules/rate-limits';

export const topicNotFound = (topic: string) => {
  const e = notFound('TOPIC_NOT_FOUND', `Topic ${topic}`);
  e.message = `No queue, stream, subscription or webhook filter matches topic "${topic}"; create one whose topic_filter matches it first.`;
  return e;
};

export interface PublishOptions {
  /** The client's Idempotency-Key: ordered queues deduplicate a retried publish by it. */
  idempotencyKey?: string;
  /**
   * Holds messages whose delay goes beyond SQS's 900 s for their standard queues and webhooks
   * (lambda/schedules/delayed.ts `holdLongDelays`). Given by the publish endpoint
   * only, so the functions that merely republish never load the scheduler's storage.
   */
  holdLongDelays?: LongDelayHolder;
  /** The messages' ids, in input order (a schedule run retried after a crash keeps its first id; a dead-lettering tried again keeps its copy's id). */
  messageIds?: string[];
  /**
   * Checks the payloads before anything is written, given the namespace's catalog version read
   * with the bindings; throws to refuse the publish whole (lambda/catalog/enforce.ts, given by
   * the publish endpoint only: what the service republishes itself is not checked).
   */
  checkPayloads?: (catalogVersion: number) => Promise<void>;
  /** An API publish's request count, made in one write with the fan-out charge (./write-budget.ts). */
  requestCount?: DeferredCount;
}

type LongDelayHolder = (ctx: SinkContext, bindings: Binding[], messages: PublishedMessage[], dues: number[]) => Promise<void>;

/** Whether a binding takes a long-delayed message only when it is due: standard queues and webhooks (ordered queues take no per-message delay). */
const holdsLongDelays = (b: Binding) => b.kind === 'WEBHOOK' || (b.kind === 'QUEUE' && !(b.settings as { fifo?: boolean }).fifo);

/**
 * Publishes `inputs` to `topic` in namespace `ns` and returns the stored messages, in input order.
 * Throws 404 TOPIC_NOT_FOUND (storing nothing) when no binding matches.
 */
/** The application a binding takes messages for (a webhook of an application), undefined for every message. */
const applicationOf = (b: Binding): string | undefined => (b.settings as { application?: string } | undefined)?.application;

export async function publishMessages(ns: string, topic: string, inputs: MessageInput[], now: number, opts: PublishOptions = {}): Promise<PublishedMessage[]> {
  const { bindings, catalogVersion } = await matchForPublish(ns, topic);
  if (bindings.length === 0) throw topicNotFound(topic);
  if (opts.checkPayloads) await opts.checkPayloads(catalogVersion);
  const messages: PublishedMessage[] = inputs.map((m, i) => ({
    message_id: opts.messageIds?.[i] ?? newId(now),
    topic,
    payload: m.payload,
    content_type: m.content_type ?? DEFAULT_CONTENT_TYPE,
    properties: m.properties ?? {},
    ...(m.partition_key !== undefined ? { partition_key: m.partition_key } : {}),
    published_at: now,
    size: utf8Bytes(m.payload),
  }));
  const idempotency = opts.idempotencyKey === undefined ? undefined : { namespace: ns, topic, key: opts.idempotencyKey };
  const dues = inputs.map((m) => dueAt(m, now));
  const delivery: MessageDelivery[] = inputs.map((m, i) => {
    const due = dues[i];
    // deliver_at becomes the seconds left (0 when it is past); delay_seconds stays as given.
    const delaySeconds = m.deliver_at !== undefined && due !== undefined ? remainingDelaySeconds(due, now) : m.delay_seconds;
    return { delaySeconds, dedupId: deduplicationId(idempotency, i, messages[i].message_id) };
  });
  const long = dues.map((d) => isLongDelay(d, now));
  const shortOnes = messages.map((_, i) => i).filter((i) => !long[i]);
  const longOnes = messages.map((_, i) => i).filter((i) => long[i]);
  if (longOnes.length && !opts.holdLongDelays) throw new Error('a delay beyond 900 s needs PublishOptions.holdLongDelays (the publish endpoint gives it)');
  const ctx = (d: MessageDelivery[]): SinkContext => ({ namespace: ns, now, republish: publishMessages, delivery: d });
  // Every publisher pays its writes (each message x the bindings it reaches: a webhook of an
  // application is reached only by messages addressed to it) before any is made: the API,
  // schedule runs, hooks, redrive and dead-lettering; over the budget the call is refused whole
  // (429, ./write-budget.ts) and the caller decides what that means for it. It is the publish's
  // first write: an API publish's request is counted in it, so a publish over the rate limit
  // writes nothing else (in particular it takes no held room that a valid publish is then refused).
  const fanout = reachedWrites(bindings.map(applicationOf), messages.map((m) => m.properties[APPLICATION_PROPERTY]));
  await spendFanoutWrites(ns, fanout, now, opts.requestCount);
  // The namespace's quotas on held messages, before any message is written: a refused publish
  // (409 LIMIT_EXCEEDED) stores nothing. Its request stays counted (as every request the
  // service refuses after the limiter), and the writes it never made are given back to the
  // budget. The holder gives back what it did not hold.
  const heldRoom = longOnes.length && opts.holdLongDelays && bindings.some(holdsLongDelays) ? { n: longOnes.length, bytes: longOnes.reduce((n, i) => n + messages[i].size, 0) } : undefined;
  if (heldRoom) {
    try {
      await reserveHeld(ns, heldRoom.n, heldRoom.bytes, now);
    } catch (e) {
      await refundFanoutWrites(ns, fanout, now, opts.requestCount).catch((r: unknown) => logger.error('fan-out writes not given back after a refused publish', { namespace: ns, error: (r as Error).message }));
      throw e;
    }
  }
  const writes: Promise<unknown>[] = [];
  const held: Binding[] = [];
  const byKind = new Map<ResourceKind, Binding[]>();
  for (const b of bindings) byKind.set(b.kind, [...(byKind.get(b.kind) ?? []), b]);
  for (const [kind, list] of byKind) {
    const sink = SINKS[kind];
    if (!sink) throw new Error(`no sink for bindings of kind ${kind}`);
    // Long-delayed messages reach standard queues and webhooks only when due (held below);
    // everything else (streams, subscriptions, ordered queues) takes every message now.
    const now_ = longOnes.length ? list.filter((b) => !holdsLongDelays(b)) : list;
    const later = longOnes.length ? list.filter(holdsLongDelays) : [];
    if (now_.length) writes.push(sink(ctx(delivery), now_, messages));
    if (later.length && shortOnes.length) writes.push(sink(ctx(shortOnes.map((i) => delivery[i])), later, shortOnes.map((i) => messages[i])));
    held.push(...later);
  }
  if (held.length && opts.holdLongDelays) {
    writes.push(opts.holdLongDelays(ctx(delivery), held, longOnes.map((i) => messages[i]), longOnes.map((i) => dues[i] as number)));
  }
  await settleAll(writes);
  return messages;
}
