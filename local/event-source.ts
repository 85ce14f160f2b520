/**
 * A local stand-in for Lambda's SQS event source mapping, in front of the same handler the stack
 * wires to the webhook delivery queue: `concurrency` pollers long-poll the queue (on fauxqs),
 * hand each batch to the handler as an SQS event, and delete the records that succeeded. Records
 * the handler reports in `batchItemFailures` (or all of them, when it throws) are left alone: SQS
 * makes them visible again after the queue's visibility timeout, and moves them to the DLQ after
 * the redrive policy's maxReceiveCount, as in AWS
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { sqsClient } from '../lambda/adapters/sqs';

export interface EventSourceOptions {
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  /** Batches in flight at once (Lambda's maximum concurrency of the mapping). */
  concurrency: number;
  log?: (line: string) => void;
}

export class LocalSqsEventSource {
  private readonly abort = new AbortController();
  private readonly pollers: Promise<void>[] = [];
  private inFlight = 0;

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

  private async poll(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      let messages: Message[];
      try {
        const out = await sqsClient().send(
          new ReceiveMessageCommand({ QueueUrl: this.o.queueUrl, MaxNumberOfMessages: this.o.batchSize, WaitTimeSeconds: 20, MessageSystemAttributeNames: ['All'] }),
          { abortSignal: signal },
        );
        messages = out.Messages ?? [];
      } catch (e) {
        if (signal.aborted) return;
        this.o.log?.(`local event source: receive failed (${(e as Error).message}); retrying in 1 s`);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (messages.length) await this.handle(messages);
    }
  }

  private async handle(messages: Message[]): Promise<void> {
    this.inFlight++;
    try {
      let failed: Set<string>;
      try {
        const out = await this.handler({ Records: messages.map((m) => this.record(m)) });
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
