/**
 * Ordered queues (extension, `ordering: "fifo"`): what an SQS FIFO queue needs beside the body of
 * each message. Pure.
 *
 * - The message group is the message's `partition_key`, so messages with one key are delivered in
 *   publish order, one key's messages to one consumer at a time. A message without a key is a
 *   group of its own: it keeps no order with any other message (as a stream spreads unkeyed
 *   messages over partitions), and it never waits behind another.
 * - The deduplication id names the publish: with an `Idempotency-Key`, the namespace, topic, key
 *   and the message's place in the request, so a retried publish is stored once within SQS's
 *   5-minute deduplication window; without one, the message id, so nothing is ever dropped.
 *
 * Both are SHA-256 digests in hex: SQS takes at most 128 characters of ASCII punctuation and
 * alphanumerics in either, and a partition key may be 256 characters of any Unicode.
 */
import { createHash } from 'node:crypto';

export const QUEUE_ORDERINGS = ['none', 'fifo'] as const;
export type QueueOrdering = (typeof QUEUE_ORDERINGS)[number];

/** SQS FIFO queue names end with this, within SQS's 80 characters. */
const FIFO_SUFFIX = '.fifo';
export const SQS_MAX_QUEUE_NAME = 80;

const sha256 = (...parts: string[]) => {
  const h = createHash('sha256');
  // Length-prefixed, so ('a', 'bc') and ('ab', 'c') never hash alike.
  for (const p of parts) h.update(`${Buffer.byteLength(p)}:${p}`);
  return h.digest('hex');
};

/**
 * The deduplication id of the `index`-th message of a publish.
 * @example deduplicationId({ namespace: 'acme', topic: 'orders', key: 'k1' }, 0, '01J…') // 'f3a…' (64 hex)
 * @example deduplicationId(undefined, 0, '01JD8X…') // '01JD8X…' (the message id)
 */
export function deduplicationId(idempotency: { namespace: string; topic: string; key: string } | undefined, index: number, messageId: string): string {
  return idempotency ? sha256('publish', idempotency.namespace, idempotency.topic, idempotency.key, String(index)) : messageId;
}

/**
 * The SQS message group of a message: its partition key's digest, or, without a key, a group of
 * its own named by its deduplication id (stable across a retried publish, so SQS deduplicates it
 * within the group: the queue's DeduplicationScope is messageGroup).
 * @example fifoGroupId('customer-7', 'x') === fifoGroupId('customer-7', 'y') // true
 */
export function fifoGroupId(partitionKey: string | undefined, dedupId: string): string {
  return partitionKey === undefined ? sha256('single', dedupId) : sha256('key', partitionKey);
}

/**
 * The SQS FIFO queue name of a queue id under `prefix`: `<prefix><id>.fifo`. A prefix of a long
 * stack name leaves room for a 26-character id but not always for the suffix too; then the id
 * loses its first characters (the top of its millisecond timestamp, which change only every
 * 2^35 ms, about 397 days, for three), so the name stays within 80 characters and unique.
 * @example fifoQueueName('MessagingService_q_', '01JD8X…') // 'MessagingService_q_01JD8X….fifo'
 */
export function fifoQueueName(prefix: string, id: string): string {
  const over = Math.max(0, prefix.length + id.length + FIFO_SUFFIX.length - SQS_MAX_QUEUE_NAME);
  return `${prefix}${id.slice(over)}${FIFO_SUFFIX}`;
}
