/**
 * Where a published message goes, by the kind of the binding that matched its topic. Each kind's
 * sink stores the messages durably (or, for webhooks, queues their delivery) before it returns;
 * publish answers 201 only once every sink has returned (DESIGN.md section 5).
 */
import type { PublishedMessage } from '../domain/message';
import type { ResourceKind } from '../storage/keys';
import type { Binding } from '../storage/resources';
import { storeInQueues } from '../storage/queue-messages';
import { enqueueWebhookDeliveries } from '../webhooks/fanout';
import { appendToStreams } from '../storage/stream-log';
import { appendToSubscriptions } from '../storage/subscription-log';

export interface SinkContext {
  namespace: string;
  now: number;
}

export type Sink = (ctx: SinkContext, bindings: Binding[], messages: PublishedMessage[]) => Promise<void>;

export const SINKS: Partial<Record<ResourceKind, Sink>> = {
  QUEUE: storeInQueues,
  WEBHOOK: enqueueWebhookDeliveries,
  STREAM: appendToStreams,
  SUBSCRIPTION: appendToSubscriptions,
};
