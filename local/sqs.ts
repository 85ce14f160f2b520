/**
 * An in-process stand-in for the webhook delivery queue (SQS) and its Lambda event source
 * mapping: bodies sent with {@link LocalSqsQueue.send} are handed to the consumer in SQS-shaped
 * events (up to 10 records, the fields the delivery handler reads), several batches at a time
 * like concurrent Lambda invocations. Records the consumer reports in `batchItemFailures` (or all
 * of them, when it throws) become visible again after the visibility timeout, and go to the
 * local dead-letter list after `maxReceiveCount` receives, as SQS redrive does. A body above the
 * queue's maximum message size is refused, as SQS refuses it.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { DeliveryQueue } from '../lambda/adapters/delivery-queue';

export interface LocalSqsOptions {
  batchSize?: number;
  /** Batches in flight at once (concurrent Lambda invocations). */
  maxConcurrency?: number;
  /** How long a failed record stays hidden before it is delivered again. */
  visibilityTimeoutMs?: number;
  /** Receives before a record moves to the dead-letter list (the queue's redrive policy). */
  maxReceiveCount?: number;
  /** Largest body accepted, as the queue's MaximumMessageSize (the stack sets 1 MiB). */
  maxMessageBytes?: number;
  log?: (line: string) => void;
}

interface Entry {
  messageId: string;
  body: string;
  sentAt: number;
  firstReceiveAt?: number;
  receiveCount: number;
  visibleAt: number;
}

export const LOCAL_QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:msg-webhook-deliveries';

export class LocalSqsQueue implements DeliveryQueue {
  private readonly waiting: Entry[] = [];
  private inFlight = 0;
  private readonly running = new Set<Promise<void>>();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** Records that used up their receives (the local DLQ). */
  readonly deadLetters: Entry[] = [];
  private readonly o: Required<LocalSqsOptions>;

  constructor(private readonly consumer: (event: SQSEvent) => Promise<SQSBatchResponse | void>, opts: LocalSqsOptions = {}) {
    this.o = { batchSize: 10, maxConcurrency: 32, visibilityTimeoutMs: 5000, maxReceiveCount: 5, maxMessageBytes: 1024 * 1024, log: () => undefined, ...opts };
  }

  async send(bodies: string[]): Promise<void> {
    if (this.stopped) throw new Error('local delivery queue is stopped');
    // Like SendMessageBatch, which refuses the whole call when a body is too large.
    const tooLarge = bodies.find((b) => Buffer.byteLength(b, 'utf8') > this.o.maxMessageBytes);
    if (tooLarge !== undefined) throw new Error(`local sqs: a message of ${Buffer.byteLength(tooLarge, 'utf8')} bytes exceeds ${this.o.maxMessageBytes} bytes`);
    const now = Date.now();
    for (const body of bodies) this.waiting.push({ messageId: randomUUID(), body, sentAt: now, receiveCount: 0, visibleAt: now });
    setImmediate(() => this.pump());
  }

  /** Records waiting or in flight. */
  get depth() {
    return this.waiting.length + this.inFlight;
  }

  private record(e: Entry): SQSRecord {
    return {
      messageId: e.messageId,
      receiptHandle: `${e.messageId}#${e.receiveCount}`,
      body: e.body,
      attributes: {
        ApproximateReceiveCount: String(e.receiveCount),
        SentTimestamp: String(e.sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(e.firstReceiveAt ?? Date.now()),
      },
      messageAttributes: {},
      md5OfBody: createHash('md5').update(e.body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: LOCAL_QUEUE_ARN,
      awsRegion: 'us-east-1',
    };
  }

  private pump() {
    if (this.stopped) return;
    const now = Date.now();
    while (this.inFlight < this.o.maxConcurrency) {
      const batch: Entry[] = [];
      for (let i = 0; i < this.waiting.length && batch.length < this.o.batchSize; ) {
        if (this.waiting[i].visibleAt <= now) batch.push(...this.waiting.splice(i, 1));
        else i++;
      }
      if (batch.length === 0) break;
      for (const e of batch) {
        e.receiveCount++;
        e.firstReceiveAt ??= now;
      }
      this.inFlight++;
      const run = this.invoke(batch).finally(() => {
        this.inFlight--;
        this.running.delete(run);
        this.pump();
      });
      this.running.add(run);
    }
    this.scheduleNext();
  }

  private async invoke(batch: Entry[]) {
    let failed: Set<string>;
    try {
      const out = await this.consumer({ Records: batch.map((e) => this.record(e)) });
      failed = new Set((out?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (e) {
      this.o.log(`local sqs: consumer failed the whole batch: ${(e as Error).message}`);
      failed = new Set(batch.map((e) => e.messageId));
    }
    for (const e of batch) {
      if (!failed.has(e.messageId)) continue;
      if (e.receiveCount >= this.o.maxReceiveCount) {
        this.deadLetters.push(e);
        this.o.log(`local sqs: message ${e.messageId} moved to the dead-letter list after ${e.receiveCount} receives`);
      } else {
        e.visibleAt = Date.now() + this.o.visibilityTimeoutMs;
        this.waiting.push(e);
      }
    }
  }

  /** Wakes up when the earliest hidden record becomes visible again. */
  private scheduleNext() {
    if (this.timer || this.stopped || this.waiting.length === 0) return;
    const next = Math.min(...this.waiting.map((e) => e.visibleAt));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, Math.max(0, next - Date.now()));
    this.timer.unref();
  }

  /** Stops receiving and waits for the batches in flight. */
  async stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.running]);
  }
}
