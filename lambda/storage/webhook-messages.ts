/**
 * Messages of webhook delivery jobs by reference (lambda/domain/delivery.ts `ReferenceJob`): a
 * message whose job would be too large for SQS or Step Functions is stored here once, before its
 * jobs are queued (so it is durable before publish answers 201), and every attempt of every
 * webhook it goes to loads it. The message is a native map attribute, not JSON text, so a
 * 256 KiB payload costs 256 KiB of the 400 KB item limit, whatever characters it holds. DynamoDB
 * TTL removes it once no job can need it any more.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { STORED_MESSAGE_TTL_SECONDS } from '../domain/delivery';
import type { PublishedMessage } from '../domain/message';
import { ddb, tableName } from './client';
import { metaKeys, ttlSeconds } from './keys';

interface WebhookMessageItem {
  pk: string;
  sk: string;
  message: PublishedMessage;
  ttl: number;
}

/** The Put of one stored message (built apart from sending, for unit tests). */
export function buildStoreMessage(ns: string, m: PublishedMessage, now: number) {
  const item: WebhookMessageItem = { ...metaKeys.webhookMessage(ns, m.message_id), message: m, ttl: ttlSeconds(now) + STORED_MESSAGE_TTL_SECONDS };
  // Unconditional: message ids are unique, and writing the same message again (a retried
  // publish step) stores the same thing.
  return new PutCommand({ TableName: tableName('meta'), Item: item });
}

/** Stores each message once; resolves when all are durable, throws otherwise. */
export async function storeWebhookMessages(ns: string, messages: PublishedMessage[], now: number): Promise<void> {
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
