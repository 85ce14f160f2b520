/**
 * Messages of webhook delivery jobs by reference (lambda/webhooks/rules/delivery.ts `ReferenceJob`): a
 * message whose job would be too large for SQS or Step Functions is stored here once, before its
 * jobs are queued (so it is durable before publish answers 201), and every attempt of every
 * webhook it goes to loads it. The message is a native map attribute, not JSON text, so a
 * 256 KiB payload costs 256 KiB of the 400 KB item limit, whatever characters it holds.
 *
 * `pending` counts the deliveries (jobs) still to end; each delivery's end takes one off, once
 * (the same write that records the end, storage/webhook-deliveries.ts), and the item is deleted
 * when none is left. DynamoDB TTL is the backstop for deliveries that never end
 * (jobs left in the delivery DLQ are kept for a redrive until then).
 */
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { STORED_MESSAGE_TTL_SECONDS } from '../rules/delivery-jobs';
import type { PublishedMessage } from '../../core/rules/message';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys, ttlSeconds } from '../../core/storage/keys';

interface WebhookMessageItem {
  pk: string;
  sk: string;
  message: PublishedMessage;
  /** Deliveries of this message still to end. */
  pending: number;
  ttl: number;
}

/** A message to store and the number of delivery jobs that refer to it. */
export interface StoredMessage {
  message: PublishedMessage;
  jobs: number;
}

/** The Put of one stored message (built apart from sending, for unit tests). */
export function buildStoreMessage(ns: string, { message: m, jobs }: StoredMessage, now: number) {
  const item: WebhookMessageItem = { ...metaKeys.webhookMessage(ns, m.message_id), message: m, pending: jobs, ttl: ttlSeconds(now) + STORED_MESSAGE_TTL_SECONDS };
  // Unconditional: message ids are unique, and writing the same message again (a retried
  // publish step) stores the same thing.
  return new PutCommand({ TableName: tableName('meta'), Item: item });
}

/** Stores each message once; resolves when all are durable, throws otherwise. */
export async function storeWebhookMessages(ns: string, messages: StoredMessage[], now: number): Promise<void> {
  await Promise.all(messages.map((m) => ddb().send(buildStoreMessage(ns, m, now))));
}

/**
 * The stored message of a job, read strongly consistently (it was written before its job was
 * queued). Throws when it is gone: the job cannot be delivered, and the failure must show (SQS
 * DLQ, failed workflow execution) rather than pass as a delivery.
 */
export async function loadWebhookMessage(ns: string, messageId: string): Promise<PublishedMessage> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.webhookMessage(ns, messageId), ConsistentRead: true }));
  const item = out.Item as WebhookMessageItem | undefined;
  if (!item?.message) throw new Error(`stored webhook message ${messageId} of namespace ${ns} not found`);
  return item.message;
}

/**
 * The Update that takes one ended delivery off a stored message (for a transaction with the
 * delivery's record, which makes it happen once per delivery). Unconditional, so it never blocks
 * recording the end; should the item be gone already, the stub it creates expires with a short
 * TTL and {@link deleteIfUnreferenced} removes it at once.
 */
export function releaseMessageUpdate(ns: string, messageId: string, now: number) {
  return {
    TableName: tableName('meta'),
    Key: metaKeys.webhookMessage(ns, messageId),
    UpdateExpression: 'ADD pending :minus SET #ttl = if_not_exists(#ttl, :ttl)',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':minus': -1, ':ttl': ttlSeconds(now) + 3600 },
  };
}

/** Deletes the stored message if no delivery of it is left; a no-op otherwise. */
export async function deleteIfUnreferenced(ns: string, messageId: string): Promise<void> {
  try {
    await ddb().send(
      new DeleteCommand({
        TableName: tableName('meta'),
        Key: metaKeys.webhookMessage(ns, messageId),
        ConditionExpression: 'pending <= :zero',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
  }
}
