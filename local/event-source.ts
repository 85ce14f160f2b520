/**
 * A local stand-in for Lambda's SQS event source mapping, in front of the same handler the stack
 * wires to the webhook delivery queue: `concurrency` pollers long-poll the queue (on fauxqs),
 * hand each batch to the handler as an SQS event, and delete the records that succeeded. Records
 * the handler reports in `batchItemFailures` (or all of them, when it throws) are left alone: SQS
 * makes them visible again after the queue's visibility timeout, and moves them to the DLQ after
 * the redrive policy's maxReceiveCount, as in AWS
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
 *
 * Batching window, as the mapping's `MaximumBatchingWindowInSeconds`: SQS's ReceiveMessage hands
 * out at most 10 messages a call, so a batch larger than 10 is gathered from several receives
 * until it is full, its window ends, or its bodies reach Lambda's 6 MB invoke payload. The window
 * begins when the poller is free again (AWS: "the next batching window begins as soon as the
 * previous function invocation completes",
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventsourcemapping.html#invocation-eventsourcemapping-batching),
 * so a message arriving at an idle queue is handed over at once, and a backlog fills batches.
 * Not modelled: AWS notes that with a window on a queue with very low traffic the function may be
 * invoked up to 20 s after a message arrives
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html); docs/webhooks.md says so.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { sqsClient } from '../lambda/adapters/sqs';

/** Lambda's invoke payload limit, which also ends a batching window (6 MB). */
const INVOKE_PAYLOAD_BYTES = 6 * 1024 * 1024;

export interface EventSourceOptions {
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  /** The mapping's batching window (ms); 0 hands over each receive's messages at once. @default 0 */
  batchingWindowMs?: number;
  /** Batches in flight at once (Lambda's maximum concurrency of the mapping). */
  concurrency: number;
  log?: (line: string) => void;
}

export class LocalSqsEventSource {
  private readonly abort = new AbortController();
  private readonly pollers: Promise<void>[] = [];
  private inFlight = 0;
  /** The last batches' sizes and how long the handler took over each (what Lambda bills), newest last. */
  readonly batchTimes: { records: number; ms: number }[] = [];

  constructor(
    private readonly handler: (event: SQSEvent) => Promise<SQSBatchResponse | void>,
    private readonly o: EventSourceOptions,
  ) {}

  start(): this {
    for (let i = 0; i < this.o.concurrency; i++) this.pollers.push(this.poll());
    return this;
  }

  /** Batches being handled now. */
  get busy() {
    return this.inFlight;
  }

  private record(m: Message): SQSRecord {
    const a = m.Attributes ?? {};
    return {
      messageId: m.MessageId ?? '',
      receiptHandle: m.ReceiptHandle ?? '',
      body: m.Body ?? '',
      attributes: {
        ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
        SentTimestamp: a.SentTimestamp ?? String(Date.now()),
        SenderId: a.SenderId ?? 'local',
        ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: this.o.queueArn,
      awsRegion: 'us-east-1',
    };
  }

  /** One ReceiveMessage of at most `max` messages (SQS hands out at most 10 a call), long polling up to `waitSeconds`. */
  private async receive(max: number, waitSeconds: number, signal: AbortSignal): Promise<Message[]> {
    const out = await sqsClient().send(
      new ReceiveMessageCommand({ QueueUrl: this.o.queueUrl, MaxNumberOfMessages: Math.min(10, max), WaitTimeSeconds: waitSeconds, MessageSystemAttributeNames: ['All'] }),
      { abortSignal: signal },
    );
    return out.Messages ?? [];
  }

  private async poll(): Promise<void> {
    const signal = this.abort.signal;
    const windowMs = this.o.batchingWindowMs ?? 0;
    while (!signal.aborted) {
      // The window begins when this poller is free (see the file's comment).
      const windowEnds = Date.now() + windowMs;
      let messages: Message[];
      try {
        messages = await this.receive(this.o.batchSize, 20, signal);
      } catch (e) {
        if (signal.aborted) return;
        this.o.log?.(`local event source: receive failed (${(e as Error).message}); retrying in 1 s`);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (!messages.length) continue;
      // Gather more within the window, up to the batch size and the invoke payload limit.
      let bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.Body ?? ''), 0);
      while (messages.length < this.o.batchSize && bytes < INVOKE_PAYLOAD_BYTES && Date.now() < windowEnds && !signal.aborted) {
        const left = windowEnds - Date.now();
        let more: Message[];
        try {
          // Never cut a receive short: messages it took would stay invisible for the visibility
          // timeout. So a 1 s long poll while a second is left, then short polls until the end.
          more = await this.receive(this.o.batchSize - messages.length, left >= 1000 ? 1 : 0, signal);
        } catch {
          break; // hand over what was gathered
        }
        if (!more.length && left < 1000) await new Promise((r) => setTimeout(r, Math.min(left, 50)));
        messages.push(...more);
        bytes += more.reduce((n, m) => n + Buffer.byteLength(m.Body ?? ''), 0);
      }
      await this.handle(messages);
    }
  }

  private async handle(messages: Message[]): Promise<void> {
    this.inFlight++;
    try {
      let failed: Set<string>;
      const started = Date.now();
      try {
        const out = await this.handler({ Records: messages.map((m) => this.record(m)) });
        this.batchTimes.push({ records: messages.length, ms: Date.now() - started });
        if (this.batchTimes.length > 1000) this.batchTimes.shift();
        failed = new Set((out?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      } catch (e) {
        this.o.log?.(`local event source: the handler failed the whole batch: ${(e as Error).message}`);
        failed = new Set(messages.map((m) => m.MessageId ?? ''));
      }
      const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
      if (done.length) {
        await sqsClient().send(
          new DeleteMessageBatchCommand({ QueueUrl: this.o.queueUrl, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }),
        );
      }
    } catch (e) {
      this.o.log?.(`local event source: ${(e as Error).message}`);
    } finally {
      this.inFlight--;
    }
  }

  /** Stops polling and waits for the batches in flight (their records stay in the queue if unfinished). */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.pollers);
  }
}
