/**
 * The webhook delivery queue: SQS in AWS (SendMessageBatch, 10 entries and at most 1 MiB per
 * call), replaced at start-up by the local runtime's in-process queue (local/sqs.ts). Publish
 * waits for {@link enqueueJobs} before answering 201 (DESIGN.md section 5).
 */
import { SendMessageBatchCommand, SQSClient, type SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { config } from '../config';
import type { DeliveryJob } from '../domain/delivery';

export interface DeliveryQueue {
  /** Queues every body; resolves once all are accepted, throws otherwise. */
  send(bodies: string[]): Promise<void>;
}

/** SQS SendMessageBatch limits: 10 entries, 1 MiB for the whole request. */
export const SQS_BATCH_ENTRIES = 10;
export const SQS_BATCH_BYTES = 1024 * 1024;
/** Entries SQS reports as failed are sent again this many times before publish fails. */
const SEND_ATTEMPTS = 3;

/** Splits bodies into SendMessageBatch calls by count and total size. */
export function batchesOf(bodies: string[], maxEntries = SQS_BATCH_ENTRIES, maxBytes = SQS_BATCH_BYTES): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  let bytes = 0;
  for (const b of bodies) {
    const size = Buffer.byteLength(b, 'utf8');
    if (cur.length && (cur.length >= maxEntries || bytes + size > maxBytes)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(b);
    bytes += size;
  }
  if (cur.length) out.push(cur);
  return out;
}

/** The SendMessageBatch requests for `bodies` (built apart from sending, for unit tests). */
export function buildSendBatches(queueUrl: string, bodies: string[]): SendMessageBatchCommand[] {
  return batchesOf(bodies).map(
    (batch) => new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch.map((MessageBody, i): SendMessageBatchRequestEntry => ({ Id: String(i), MessageBody })) }),
  );
}

export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(private readonly client: SQSClient, private readonly queueUrl: string) {}

  async send(bodies: string[]): Promise<void> {
    await Promise.all(
      buildSendBatches(this.queueUrl, bodies).map(async (cmd) => {
        let entries = cmd.input.Entries ?? [];
        for (let attempt = 1; entries.length; attempt++) {
          const out = await this.client.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
          const failed = new Set((out.Failed ?? []).map((f) => f.Id));
          entries = entries.filter((e) => failed.has(e.Id));
          if (entries.length && attempt >= SEND_ATTEMPTS) throw new Error(`SQS refused ${entries.length} delivery job(s): ${out.Failed?.[0]?.Code}`);
        }
      }),
    );
  }
}

let queue: DeliveryQueue | undefined;

/** The queue in use: set by the local runtime, else SQS at `MSG_WEBHOOK_QUEUE_URL` (created once). */
export function deliveryQueue(): DeliveryQueue {
  if (!queue) {
    const url = config().webhookQueueUrl;
    if (!url) throw new Error('MSG_WEBHOOK_QUEUE_URL is not set: no webhook delivery queue');
    queue = new SqsDeliveryQueue(new SQSClient({ region: config().region }), url);
  }
  return queue;
}

/** Replaces the queue (the local runtime, tests); `undefined` restores the SQS default. */
export function setDeliveryQueue(q: DeliveryQueue | undefined) {
  queue = q;
}

/** Queues delivery jobs. */
export async function enqueueJobs(jobs: DeliveryJob[]): Promise<void> {
  if (jobs.length) await deliveryQueue().send(jobs.map((j) => JSON.stringify(j)));
}
