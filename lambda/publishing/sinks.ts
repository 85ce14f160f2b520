/**
 * Where a published message goes, by the kind of the binding that matched its topic. Each kind's
 * sink stores the messages durably (or, for webhooks, queues their delivery) before it returns;
 * publish answers 201 only once every sink has returned (DESIGN.md section 5). What a sink is (its
 * context and signature) is in ./sink.ts, which the sinks import instead of this list.
 */
import type { ResourceKind } from '../core/storage/keys';
import type { Sink } from './sink';
import { storeInQueues } from '../queues/sink';
import { enqueueWebhookDeliveries } from '../webhooks/fanout';
import { appendToStreams } from '../streams/storage/stream-log';
import { appendToSubscriptions } from '../subscriptions/storage/subscription-log';

export const SINKS: Partial<Record<ResourceKind, Sink>> = {
  QUEUE: storeInQueues,
  WEBHOOK: enqueueWebhookDeliveries,
  STREAM: appendToStreams,
  SUBSCRIPTION: appendToSubscriptions,
};
