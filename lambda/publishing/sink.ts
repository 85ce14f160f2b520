/**
 * The sink interface: what publish gives the sink of each binding kind (lambda/publishing/sinks.ts
 * lists them). The sinks (queues' sink.ts, webhooks' fanout.ts, and schedules' hand-over of held
 * messages to them) import their types from here, and this file imports none of them, so no sink
 * imports back the list that imports it. The streams' and subscriptions' appends take the part of
 * SinkContext they use by its shape.
 */
import type { MessageInput, PublishedMessage } from '../core/rules/message';
import type { Binding } from '../core/storage/resources';

export interface SinkContext {
  namespace: string;
  now: number;
  /**
   * Publishes to another topic of the namespace (a full queue dead-letters its messages). Given
   * by publish itself, so sinks never import the publishing layer above them.
   */
  republish: (ns: string, topic: string, inputs: MessageInput[], now: number, opts?: { messageIds?: string[] }) => Promise<unknown>;
  /**
   * How each message (same order as the sink's `messages`) is to be delivered (extensions); sinks
   * that do not care ignore it. Absent for the service's own republishing: no delay.
   */
  delivery?: MessageDelivery[];
}

/** Delivery of one published message beyond its content (extensions). */
export interface MessageDelivery {
  /** The publisher's `delay_seconds`; undefined: the bound queue's own default (no delay for webhooks). */
  delaySeconds?: number;
  /** SQS FIFO deduplication id (lambda/core/rules/ordering.ts `deduplicationId`). */
  dedupId: string;
}

export type Sink = (ctx: SinkContext, bindings: Binding[], messages: PublishedMessage[]) => Promise<void>;
