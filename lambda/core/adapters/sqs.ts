/**
 * The SQS client and the batching rules every SQS sender shares (the service queues,
 * ./service-queues.ts, and the webhook delivery queue, ./delivery-queue.ts). One client per
 * container (STYLE.md habit 2), pointed at fauxqs locally (MSG_SQS_ENDPOINT).
 */
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { config } from '../config';
import { withClientPlugins } from '../client-plugins';

/** SendMessageBatch, DeleteMessageBatch, ReceiveMessage: at most 10 entries per call. */
export const SQS_BATCH_ENTRIES = 10;
/** SendMessageBatch: at most 1 MiB for the whole request (and for one message). */
const SQS_BATCH_BYTES = 1024 * 1024;
/** Entries SQS reports as failed in a batch are sent again this many times before the send fails. */
const SEND_ATTEMPTS = 3;

let client: SQSClient | undefined;

export function sqsClient(): SQSClient {
  if (!client) {
    const { region, sqsEndpoint } = config();
    client = withClientPlugins(
      'sqs',
      new SQSClient({
        region,
        ...(sqsEndpoint ? { endpoint: sqsEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
      }),
    );
  }
  return client;
}

/** Drops the cached client (tests and tools that switch endpoints). */
export function resetSqsClient() {
  client?.destroy();
  client = undefined;
}

/** The URL of the queue named `name` in this deployment's account and region (no request). */
export const queueUrl = (name: string) => `${config().sqsQueueUrlBase}${name}`;

/**
 * Groups items into batches of at most `maxEntries` and `maxBytes` (by `bytesOf`), in order.
 * @example batchesBy(['a', 'b', 'c'], (s) => s.length, 2) // [['a', 'b'], ['c']]
 */
function batchesBy<T>(items: T[], bytesOf: (t: T) => number, maxEntries = SQS_BATCH_ENTRIES, maxBytes = SQS_BATCH_BYTES): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = bytesOf(item);
    if (cur.length && (cur.length >= maxEntries || bytes + size > maxBytes)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(item);
    bytes += size;
  }
  if (cur.length) out.push(cur);
  return out;
}

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/** Splits bodies into SendMessageBatch calls by count and total size, keeping their order. */
export const batchesOf = (bodies: string[], maxEntries = SQS_BATCH_ENTRIES, maxBytes = SQS_BATCH_BYTES) => batchesBy(bodies, utf8, maxEntries, maxBytes);

/**
 * One message to send. A plain string is a body sent with the queue's defaults; the extensions
 * add a per-message delay (standard queues) or a FIFO queue's message group and deduplication id.
 */
export type OutgoingMessage = string | { body: string; delaySeconds?: number; groupId?: string; dedupId?: string };

const bodyOf = (m: OutgoingMessage) => (typeof m === 'string' ? m : m.body);

function entryOf(m: OutgoingMessage, id: number): SendMessageBatchRequestEntry {
  if (typeof m === 'string') return { Id: String(id), MessageBody: m };
  return {
    Id: String(id),
    MessageBody: m.body,
    ...(m.delaySeconds !== undefined ? { DelaySeconds: m.delaySeconds } : {}),
    ...(m.groupId !== undefined ? { MessageGroupId: m.groupId } : {}),
    ...(m.dedupId !== undefined ? { MessageDeduplicationId: m.dedupId } : {}),
  };
}

/**
 * The SendMessageBatch requests for `messages` (built apart from sending, for unit tests); each
 * entry's Id is the message's index in `messages`.
 */
export function buildSendBatches(url: string, messages: OutgoingMessage[]): SendMessageBatchCommand[] {
  return batchesBy(messages.map((m, i) => ({ m, i })), (e) => utf8(bodyOf(e.m))).map(
    (batch) => new SendMessageBatchCommand({ QueueUrl: url, Entries: batch.map((e) => entryOf(e.m, e.i)) }),
  );
}

/** A send that stored only some bodies: `unsent` are the indexes (into the bodies given) of the rest. */
export class SqsSendError extends Error {
  constructor(
    readonly unsent: number[],
    readonly reason: unknown,
  ) {
    super(`SQS did not store ${unsent.length} message(s): ${(reason as Error)?.message ?? String(reason)}`);
    this.name = 'SqsSendError';
  }
}

/**
 * Sends every message to the queue at `url`, all batches in parallel, or one after the other when
 * `ordered` (a FIFO queue keeps the order of its sends, and parallel batches would interleave);
 * entries SQS reports as failed (throttling, an internal error) are sent again. Resolves once
 * every message is stored. A queue that does not exist throws SQS's own error; any other failure
 * throws {@link SqsSendError} naming the messages that were not stored (the others were: a
 * retried publish is at least once).
 */
export async function sendBatches(url: string, messages: OutgoingMessage[], opts: { ordered?: boolean } = {}): Promise<void> {
  const unsent: number[] = [];
  let firstError: unknown;
  const batches = buildSendBatches(url, messages);
  const each = async (cmd: SendMessageBatchCommand) => {
    let entries = cmd.input.Entries ?? [];
    try {
      for (let attempt = 1; entries.length; attempt++) {
        if (attempt > SEND_ATTEMPTS) throw new Error(`SQS refused ${entries.length} message(s) ${SEND_ATTEMPTS} times`);
        const out = await sqsClient().send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
        const failed = new Set((out.Failed ?? []).map((f) => f.Id));
        entries = entries.filter((e) => failed.has(e.Id));
      }
    } catch (e) {
      firstError ??= e;
      unsent.push(...entries.map((e) => Number(e.Id)));
    }
  };
  if (!opts.ordered) await Promise.all(batches.map(each));
  else {
    for (const [i, cmd] of batches.entries()) {
      await each(cmd);
      // Later batches would land after a gap: count them unsent and stop.
      if (firstError !== undefined) {
        for (const later of batches.slice(i + 1)) unsent.push(...(later.input.Entries ?? []).map((e) => Number(e.Id)));
        break;
      }
    }
  }
  if (firstError === undefined) return;
  // Also when the queue is missing: the calls run in parallel, and a queue created a moment ago
  // may refuse some and take others (SQS answers QueueDoesNotExist for about a second after
  // CreateQueue), so a caller that tries again must know which messages are stored already.
  throw new SqsSendError(unsent.sort((a, b) => a - b), firstError);
}

/**
 * Whether an SDK error says the queue does not exist (deleted, or created a moment ago), also as
 * the reason of a {@link SqsSendError}.
 */
export const isQueueMissing = (e: unknown): boolean => {
  if (e instanceof SqsSendError) return isQueueMissing(e.reason);
  const name = (e as { name?: string })?.name ?? '';
  return name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue';
};
