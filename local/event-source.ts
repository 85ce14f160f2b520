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
 *
 * Fair queues (./fair-queue.ts): SQS hands out a fair queue's quiet tenants' messages first, from
 * the whole backlog. The pollers share a pool of received messages (each poller free again
 * receives until the queue answers none, at most {@link POOL_MAX} pooled) and each batch takes the pool's messages
 * in fair-queue order; the rest stay invisible in the pool, as they would stay in the queue, their
 * visibility renewed (ChangeMessageVisibility, no new receive) while they wait.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { sqsClient } from '../lambda/adapters/sqs';
import { FairQueueState } from './fair-queue';

/**
 * At most this many held in the pool: each poller free again receives until the queue answers
 * none or the pool holds this many, so messages sent behind a noisy backlog reach the pool (and
 * are ordered) as soon as any batch ends. A backlog beyond it is ordered only within it: harsher
 * than AWS, which orders the whole backlog, never kinder.
 */
export const POOL_MAX = 1000;

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
  /** The queue's visibility timeout: messages waiting in the pool have theirs renewed at half of it. @default 30 */
  visibilitySeconds?: number;
  log?: (line: string) => void;
}

export class LocalSqsEventSource {
  private readonly abort = new AbortController();
  private readonly pollers: Promise<void>[] = [];
  private inFlight = 0;
  private readonly fair = new FairQueueState();
  /** Received messages no batch has taken yet, with when their visibility was last set. */
  private pool: { m: Message; at: number }[] = [];

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

  /** Tops the pool up: one long poll when it is empty, else receives of 10 until the queue answers none. */
  private async refill(signal: AbortSignal): Promise<void> {
    await this.renew();
    if (!this.pool.length) return this.add(await this.receive(10, 20, signal));
    while (this.pool.length < POOL_MAX && !signal.aborted) {
      const more = await this.receive(10, 0, signal);
      if (!more.length) return;
      this.add(more);
    }
  }

  private add(messages: Message[]) {
    const at = Date.now();
    for (const m of messages) this.pool.push({ m, at });
  }

  /** Renews the visibility of pooled messages past half of it, so they never show again while pooled. */
  private async renew(): Promise<void> {
    const vis = this.o.visibilitySeconds ?? 30;
    const due = this.pool.filter((p) => Date.now() - p.at > (vis * 1000) / 2);
    for (const p of due) p.at = Date.now();
    const calls = [];
    for (let i = 0; i < due.length; i += 10) {
      const entries = due.slice(i, i + 10).map((p, j) => ({ Id: String(j), ReceiptHandle: p.m.ReceiptHandle, VisibilityTimeout: vis }));
      calls.push(
        sqsClient()
          .send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: this.o.queueUrl, Entries: entries }))
          .catch((e) => this.o.log?.(`local event source: renewing pooled messages failed (${(e as Error).message})`)),
      );
    }
    await Promise.all(calls);
  }

  private tenanted(m: Message) {
    return { id: m.MessageId, group: m.Attributes?.MessageGroupId, sentAt: Number(m.Attributes?.SentTimestamp ?? 0) };
  }

  /** Takes up to `n` pooled messages (and at most `bytes`), in fair-queue order. */
  private take(n: number, bytes = INVOKE_PAYLOAD_BYTES): Message[] {
    if (n <= 0 || !this.pool.length) return [];
    const ordered = this.fair.order(this.pool.map((p) => ({ ...this.tenanted(p.m), p })));
    const chosen = new Set<(typeof this.pool)[number]>();
    for (const x of ordered) {
      if (chosen.size >= n) break;
      const size = Buffer.byteLength(x.p.m.Body ?? '');
      if (chosen.size && size > bytes) break;
      bytes -= size;
      chosen.add(x.p);
    }
    this.pool = this.pool.filter((p) => !chosen.has(p));
    return ordered.filter((x) => chosen.has(x.p)).map((x) => x.p.m);
  }

  private async poll(): Promise<void> {
    const signal = this.abort.signal;
    const windowMs = this.o.batchingWindowMs ?? 0;
    while (!signal.aborted) {
      // The window begins when this poller is free (see the file's comment).
      const windowEnds = Date.now() + windowMs;
      try {
        await this.refill(signal);
      } catch (e) {
        if (signal.aborted) return;
        this.o.log?.(`local event source: receive failed (${(e as Error).message}); retrying in 1 s`);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      const messages = this.take(this.o.batchSize);
      if (!messages.length) continue;
      // Gather more within the window, up to the batch size and the invoke payload limit.
      let bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.Body ?? ''), 0);
      while (messages.length < this.o.batchSize && bytes < INVOKE_PAYLOAD_BYTES && Date.now() < windowEnds && !signal.aborted) {
        const left = windowEnds - Date.now();
        let more: Message[];
        try {
          // Never cut a receive short: messages it took would stay invisible for the visibility
          // timeout. So a 1 s long poll while a second is left, then short polls until the end.
          if (!this.pool.length) this.add(await this.receive(this.o.batchSize - messages.length, left >= 1000 ? 1 : 0, signal));
          more = this.take(this.o.batchSize - messages.length, INVOKE_PAYLOAD_BYTES - bytes);
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
    // In flight, for the fair queue, from the receive's hand-over to the delete or the hand-back.
    const tenants = messages.map((m) => this.fair.tenantOf(this.tenanted(m)));
    const startedAt = this.fair.start(tenants);
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
      this.fair.finish(tenants, startedAt);
      this.inFlight--;
    }
  }

  /** Stops polling and waits for the batches in flight (their records stay in the queue if unfinished). */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.pollers);
    // Pooled messages go back to the queue at once rather than after their visibility timeout.
    const left = this.pool.splice(0);
    for (let i = 0; i < left.length; i += 10) {
      const entries = left.slice(i, i + 10).map((p, j) => ({ Id: String(j), ReceiptHandle: p.m.ReceiptHandle, VisibilityTimeout: 0 }));
      await sqsClient()
        .send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: this.o.queueUrl, Entries: entries }))
        .catch(() => undefined);
    }
  }
}
