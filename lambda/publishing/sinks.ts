/**
 * Where a published message goes, by the kind of the binding that matched its topic. Each kind's
 * sink stores the messages durably (or, for webhooks, queues their delivery) before it returns;
 * publish answers 201 only once every sink has returned (DESIGN.md section 5).
 */
import type { MessageInput, PublishedMessage } from '../core/rules/message';
import type { ResourceKind } from '../core/storage/keys';
import type { Binding } from '../core/storage/resources';
import { storeInQueues } from '../queues/sink';
import { enqueueWebhookDeliveries } from '../webhooks/fanout';
import { appendToStreams } from '../streams/storage/stream-log';
import { appendToSubscriptions } from '../subscriptions/storage/subscription-log';

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

export const SINKS: Partial<Record<ResourceKind, Sink>> = {
  QUEUE: storeInQueues,
  WEBHOOK: enqueueWebhookDeliveries,
  STREAM: appendToStreams,
  SUBSCRIPTION: appendToSubscriptions,
};
