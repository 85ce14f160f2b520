/**
 * A local stand-in for Lambda's SQS event source mapping, in front of the same handler the stack
 * wires to the webhook delivery queue: pollers hand each batch to the handler as an SQS event and
 * delete the records that succeeded. Records the handler reports in `batchItemFailures` (or all of
 * them, when it throws or names an item not in the batch) are left alone: SQS makes them visible
 * again after the visibility timeout, and moves them to the DLQ after the redrive policy's
 * maxReceiveCount (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
 *
 * Batching window, as the mapping's `MaximumBatchingWindowInSeconds`: SQS's ReceiveMessage hands
 * out at most 10 messages a call, so a batch larger than 10 is gathered from several receives
 * until it is full, its window ends, or its bodies reach Lambda's 6 MB invoke payload. The window
 * begins when the poller is free again (AWS: "the next batching window begins as soon as the
 * previous function invocation completes",
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventsourcemapping.html#invocation-eventsourcemapping-batching),
 * so a message arriving at an idle queue is handed over at once, and a backlog fills batches.
 * Not modelled: with a window, a queue of very low traffic may wait up to 20 s for its invocation
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html; record 0018 says so).
 *
 * Fair queues (./fair-queues.ts, the AWS rules cited there): fauxqs hands messages out in arrival
 * order, so one fetcher reads ahead of the pollers (up to `lookahead` messages, long polling) and
 * the pollers take their batches from what it read by the fair-queue rule: quiet message groups'
 * messages first, noisy groups' after. Read-ahead messages are in the queue as AWS would see them
 * (not in flight for the fair rule); fauxqs holds them invisible, so their visibility is renewed
 * while they wait and when a batch takes one that waited, and they are made visible again when the
 * event source stops. Harsher than AWS where AWS sees the whole queue: a quiet message behind more
 * than `lookahead` messages of a noisy group waits until the read-ahead reaches it.
 *
 * Scaling (`scaling`, the delivery queue's mapping): pollers grow and shrink as Lambda's do, an
 * added invocation pays an execution environment's start, and failed invocations back the
 * scaling off (./event-source-scaling.ts, the AWS rules cited there). Without `scaling`,
 * `concurrency` pollers run from the start, in environments always warm.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { sqsClient } from '../lambda/core/adapters/sqs';
import { FairQueueState, pick } from './fair-queues';
import { Environments, runScaler, ScalingSteps, type PollerScaling, type ScalingStep } from './event-source-scaling';

/** Lambda's invoke payload limit, which also ends a batching window (6 MB). */
const INVOKE_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** Read-ahead bodies at most, whatever `lookahead` says. */
const LOOKAHEAD_BYTES = 32 * 1024 * 1024;
/** How often the read-ahead's waiting messages are looked at for renewal (ms). */
const RENEW_EVERY_MS = 1000;

export interface EventSourceOptions {
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  /** The mapping's batching window (ms); 0 hands over each receive's messages at once. @default 0 */
  batchingWindowMs?: number;
  /** Batches in flight at once at most (Lambda's maximum concurrency of the mapping). */
  concurrency: number;
  /** Pollers scale between `initial` and `concurrency` as the mapping's do (see the file's comment); unset: `concurrency` pollers at once. */
  scaling?: PollerScaling;
  /** Messages read ahead of the batches, to order them as a fair queue. @default max(200, 4 × pollers × batchSize) */
  lookahead?: number;
  log?: (line: string) => void;
}

/** A message read ahead: its group, size, and when its visibility was last set. */
interface Ahead {
  m: Message;
  group?: string;
  bytes: number;
  at: number;
}

export class LocalSqsEventSource {
  private readonly abort = new AbortController();
  private readonly pollers = new Set<Promise<void>>();
  private fetcher: Promise<void> | undefined;
  private inFlight = 0;
  private readonly fair = new FairQueueState();
  /** Read from fauxqs and not yet in a batch, in arrival order. */
  private ahead: Ahead[] = [];
  private aheadBytes = 0;
  /** Wakes the pollers (messages read) and the fetcher (room to read). */
  private wakeReaders: (() => void)[] = [];
  private wakeFetcher: (() => void) | undefined;
  private visibilitySeconds = 30;
  private renewTimer: NodeJS.Timeout | undefined;
  private scaleTimer: NodeJS.Timeout | undefined;
  /** Pollers running now. */
  private running = 0;
  private renewing = false;
  /** When an invocation last failed (0: never). */
  private lastErrorAt = 0;
  private readonly changes = new ScalingSteps();
  private readonly environments: Environments | undefined;
  /** The last batches' sizes and how long the handler took over each (what Lambda bills), newest last. */
  readonly batchTimes: { records: number; ms: number }[] = [];

  constructor(
    private readonly handler: (event: SQSEvent) => Promise<SQSBatchResponse | void>,
    private readonly o: EventSourceOptions,
  ) {
    this.environments = o.scaling ? new Environments(o.scaling) : undefined;
  }

  start(): this {
    this.fetcher = this.fetch();
    const sc = this.o.scaling;
    const now = Date.now();
    for (let i = 0; i < Math.min(this.o.concurrency, sc?.initial ?? this.o.concurrency); i++) this.addPoller(now);
    const look = () => ({ running: this.running, max: this.o.concurrency, busy: this.inFlight, waiting: this.ahead.length, lastErrorAt: this.lastErrorAt });
    if (sc) this.scaleTimer = runScaler(sc, this.changes, look, (at) => this.addPoller(at));
    this.renewTimer = setInterval(() => void this.renewWaiting(), RENEW_EVERY_MS);
    this.renewTimer.unref();
    return this;
  }

  private addPoller(at: number): void {
    this.changes.added(at, ++this.running);
    const p = this.poll();
    this.pollers.add(p);
    void p.finally(() => this.pollers.delete(p));
  }

  /** Pollers running now (between the scaling's `initial` and `concurrency`). */
  get pollerCount() {
    return this.running;
  }

  /** The pollers' last changes, as the scaling took them (./event-source-scaling.ts). */
  get scalingSteps(): readonly ScalingStep[] {
    return this.changes.steps;
  }

  /** Batches being handled now. */
  get busy() {
    return this.inFlight;
  }

  /** The most batches handled at once since the start. */
  peakBusy = 0;

  private get lookahead() {
    return this.o.lookahead ?? Math.max(200, 4 * this.running * this.o.batchSize);
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
        ...(a.MessageGroupId ? { MessageGroupId: a.MessageGroupId } : {}),
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: this.o.queueArn,
      awsRegion: 'us-east-1',
    };
  }

  /** Reads ahead: one long poll after another while there is room (see the file's comment). */
  private async fetch(): Promise<void> {
    const signal = this.abort.signal;
    try {
      const a = await sqsClient().send(new GetQueueAttributesCommand({ QueueUrl: this.o.queueUrl, AttributeNames: ['VisibilityTimeout'] }));
      this.visibilitySeconds = Number(a.Attributes?.VisibilityTimeout ?? 30) || 30;
    } catch {
      // The default's 30 s: renewals come early, never late.
    }
    while (!signal.aborted) {
      if (this.ahead.length >= this.lookahead || this.aheadBytes >= LOOKAHEAD_BYTES) {
        await new Promise<void>((r) => (this.wakeFetcher = r));
        continue;
      }
      let got: Message[];
      try {
        // Never cut a receive short but to stop: messages it took would stay invisible for the
        // visibility timeout. The visibility is given, so the harsh SQS counts it as fauxqs does.
        const out = await sqsClient().send(
          new ReceiveMessageCommand({
            QueueUrl: this.o.queueUrl,
            MaxNumberOfMessages: Math.min(10, this.lookahead - this.ahead.length),
            WaitTimeSeconds: 20,
            VisibilityTimeout: this.visibilitySeconds,
            MessageSystemAttributeNames: ['All'],
          }),
          { abortSignal: signal },
        );
        got = out.Messages ?? [];
      } catch (e) {
        if (signal.aborted) return;
        this.o.log?.(`local event source: receive failed (${(e as Error).message}); retrying in 1 s`);
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      const now = Date.now();
      for (const m of got) {
        // Read again (its visibility lapsed while it waited): the new receipt handle replaces the old.
        this.drop(this.ahead.filter((a) => a.m.MessageId === m.MessageId));
        const bytes = Buffer.byteLength(m.Body ?? '');
        this.ahead.push({ m, group: m.Attributes?.MessageGroupId, bytes, at: now });
        this.aheadBytes += bytes;
      }
      if (got.length) for (const wake of this.wakeReaders.splice(0)) wake();
    }
  }

  /** Waits until messages were read or `ms` passed (or the source stops). */
  private arrival(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        const i = this.wakeReaders.indexOf(done);
        if (i >= 0) this.wakeReaders.splice(i, 1);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wakeReaders.push(done);
    });
  }

  /** Takes up to `max` read-ahead messages of at most `maxBytes` (one at least) by the fair-queue rule. */
  private take(max: number, maxBytes: number): Ahead[] {
    if (!this.ahead.length || max <= 0) return [];
    const noisy = this.fair.noisy(Date.now());
    const chosen = pick(this.ahead, max, noisy, (g) => this.fair.inFlightOf(g));
    const out: Ahead[] = [];
    let bytes = 0;
    for (const i of chosen) {
      const a = this.ahead[i];
      if (out.length && bytes + a.bytes > maxBytes) break;
      out.push(a);
      bytes += a.bytes;
    }
    const taken = new Set(out);
    this.ahead = this.ahead.filter((a) => !taken.has(a));
    this.aheadBytes -= bytes;
    this.wakeFetcher?.();
    this.wakeFetcher = undefined;
    return out;
  }

  private async poll(): Promise<void> {
    const signal = this.abort.signal;
    const windowMs = this.o.batchingWindowMs ?? 0;
    // The window begins when this poller is free (see the file's comment), not when a message comes.
    let windowEnds = Date.now() + windowMs;
    let lastBatch = Date.now();
    const sc = this.o.scaling;
    try {
      while (!signal.aborted) {
        let batch = this.take(this.o.batchSize, INVOKE_PAYLOAD_BYTES);
        if (!batch.length) {
          if (sc && this.running > sc.initial && Date.now() - lastBatch >= sc.idleMs) return;
          await this.arrival(1000);
          continue;
        }
        lastBatch = Date.now();
        // Gather more within the window, up to the batch size and the invoke payload limit.
        let bytes = batch.reduce((n, a) => n + a.bytes, 0);
        while (batch.length < this.o.batchSize && bytes < INVOKE_PAYLOAD_BYTES && Date.now() < windowEnds && !signal.aborted) {
          await this.arrival(Math.min(50, windowEnds - Date.now()));
          const more = this.take(this.o.batchSize - batch.length, INVOKE_PAYLOAD_BYTES - bytes);
          batch = [...batch, ...more];
          bytes += more.reduce((n, a) => n + a.bytes, 0);
        }
        // The whole visibility timeout from the hand-over, as AWS gives it from the receive that
        // formed the batch: every message of the batch is renewed now (a message whose visibility
        // already lapsed is left out; the fetcher reads it again).
        const failed = await this.handle(await this.renewed(batch, batch));
        // Backing off: a poller beyond the initial ones whose invocation failed stops.
        if (failed && sc && this.running > sc.initial) return;
        windowEnds = Date.now() + windowMs;
        lastBatch = Date.now();
      }
    } finally {
      // Synchronously with the return, so two idle pollers never both leave past `initial`.
      this.changes.note(Date.now(), --this.running);
    }
  }

  /**
   * Sets the visibility of `stale` (read-ahead messages) to the queue's again, so a batch gets the
   * whole visibility timeout as in AWS, and a message still waiting does not come back while it
   * waits. Returns `batch` without the messages SQS refused to renew (their visibility ended:
   * fauxqs hands them out again, and the fetcher reads them again).
   */
  private async renewed(stale: Ahead[], batch: Ahead[], seconds = this.visibilitySeconds): Promise<Ahead[]> {
    const lost = new Set<Ahead>();
    const unrenewed = new Set<Ahead>();
    for (let i = 0; i < stale.length; i += 10) {
      const part = stale.slice(i, i + 10);
      try {
        const out = await sqsClient().send(
          new ChangeMessageVisibilityBatchCommand({ QueueUrl: this.o.queueUrl, Entries: part.map((a, j) => ({ Id: String(j), ReceiptHandle: a.m.ReceiptHandle, VisibilityTimeout: seconds })) }),
        );
        for (const f of out.Failed ?? []) lost.add(part[Number(f.Id)]);
      } catch {
        // The call failed (not the messages): they keep the visibility they have; a waiting one
        // is tried again within a second, a batch goes with what is left of its receive's.
        part.forEach((a) => unrenewed.add(a));
      }
    }
    const now = Date.now();
    for (const a of stale) if (!lost.has(a) && !unrenewed.has(a)) a.at = now;
    return lost.size ? batch.filter((a) => !lost.has(a)) : batch;
  }

  /** Renews the read-ahead messages past a third of their visibility (looked at every second). */
  private async renewWaiting(): Promise<void> {
    // One round at a time: a round over a large read-ahead may outlast the second between rounds.
    if (this.renewing) return;
    const due = this.ahead.filter((a) => Date.now() - a.at >= (this.visibilitySeconds * 1000) / 3);
    if (!due.length) return;
    this.renewing = true;
    const kept = new Set(await this.renewed(due, due).finally(() => (this.renewing = false)));
    this.drop(due.filter((a) => !kept.has(a)));
  }

  /** Takes `gone` out of the read-ahead (those a batch took meanwhile are already out). */
  private drop(gone: Ahead[]): void {
    if (!gone.length) return;
    const out = new Set(gone);
    const kept = this.ahead.filter((a) => !out.has(a));
    for (const a of this.ahead) if (out.has(a)) this.aheadBytes -= a.bytes;
    this.ahead = kept;
  }

  /**
   * Hands one batch to the handler and deletes what succeeded. For the fair-queue rule its
   * messages are in flight from here to the batch's end (the delete, or the failed ones left to
   * come back: counted out here too, though SQS holds them until their visibility ends).
   */
  private async handle(batch: Ahead[]): Promise<boolean> {
    if (!batch.length) return false;
    const messages = batch.map((a) => a.m);
    this.inFlight++;
    this.peakBusy = Math.max(this.peakBusy, this.inFlight);
    const handed = this.fair.hand(batch.map((a) => a.group), Date.now());
    let threw = false;
    try {
      let failed: Set<string>;
      // The invocation's environment: a cold one starts first (./event-source-scaling.ts).
      const coldMs = this.environments?.take(Date.now()) ?? 0;
      if (coldMs) await new Promise((r) => setTimeout(r, coldMs));
      const started = Date.now();
      try {
        const out = await this.handler({ Records: messages.map((m) => this.record(m)) }).catch((e: unknown) => {
          threw = true;
          throw e;
        });
        this.batchTimes.push({ records: messages.length, ms: Date.now() - started });
        if (this.batchTimes.length > 1000) this.batchTimes.shift();
        const named = (out?.batchItemFailures ?? []).map((f) => f?.itemIdentifier);
        const ids = new Set(messages.map((m) => m.MessageId ?? ''));
        // An identifier that is empty, missing or names no record of the batch fails the whole
        // batch in AWS ("Success and failure conditions",
        // https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html).
        if (named.some((id) => typeof id !== 'string' || !id || !ids.has(id))) throw new Error('the partial batch response names an item not in the batch');
        failed = new Set(named as string[]);
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
      if (threw) this.lastErrorAt = Date.now();
      this.environments?.give(Date.now());
      this.fair.end(handed, Date.now());
      this.inFlight--;
    }
    return threw;
  }

  /**
   * Stops polling and waits for the batches in flight (their records stay in the queue if
   * unfinished); the messages read ahead are made visible again at once.
   */
  async stop(): Promise<void> {
    this.abort.abort();
    clearInterval(this.renewTimer);
    clearInterval(this.scaleTimer);
    this.wakeFetcher?.();
    for (const wake of this.wakeReaders.splice(0)) wake();
    await Promise.allSettled([...this.pollers, this.fetcher]);
    const left = this.ahead;
    this.ahead = [];
    this.aheadBytes = 0;
    await this.renewed(left, left, 0).catch(() => undefined);
  }
}
