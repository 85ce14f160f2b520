/**
 * SQS retention, which fauxqs does not apply: "Amazon SQS automatically deletes messages that
 * have been in a queue for more than the maximum message retention period [...] from 60 seconds
 * to 1,209,600 seconds (14 days)"
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html,
 * `MessageRetentionPeriod`; counted from the send, default 345,600 s). fauxqs keeps every message
 * until it is deleted, so the service's reconciliation of its counters with SQS's counts would
 * count expired messages again.
 *
 * One SDK middleware (./sqs.ts installs it) that remembers, per queue, the retention given at
 * CreateQueue or SetQueueAttributes and when each message was sent (by its SQS MessageId), and:
 * - takes messages past their retention out of a ReceiveMessage's answer and deletes them from
 *   the engine with the receipt handle that answer gave (no caller ever sees them again);
 * - leaves messages past their retention that nobody received out of GetQueueAttributes'
 *   `ApproximateNumberOfMessages` (then `...NotVisible`, then `...Delayed`).
 * What it remembers is forgotten once the message is deleted (a delete with the receipt handle of
 * its latest receive) or its queue.
 */
import { DeleteMessageBatchCommand } from '@aws-sdk/client-sqs';

const DEFAULT_RETENTION_SECONDS = 345_600;

interface QueueRetention {
  retentionMs: number;
  /** MessageId → epoch ms its retention ends. */
  sent: Map<string, number>;
  /** The latest receipt handle → MessageId (SQS deletes only with the latest), and back. */
  handles: Map<string, string>;
  latest: Map<string, string>;
}

export class RetentionState {
  readonly queues = new Map<string, QueueRetention>();
  constructor(readonly clock: () => number = Date.now) {}

  queue(name: string): QueueRetention {
    let q = this.queues.get(name);
    if (!q) {
      q = { retentionMs: DEFAULT_RETENTION_SECONDS * 1000, sent: new Map(), handles: new Map(), latest: new Map() };
      this.queues.set(name, q);
    }
    return q;
  }

  /** Messages of `name` past their retention and not deleted. */
  expiredCount(name: string): number {
    const q = this.queues.get(name);
    if (!q) return 0;
    const now = this.clock();
    let n = 0;
    for (const until of q.sent.values()) if (until <= now) n++;
    return n;
  }
}

type Input = Record<string, unknown>;
type Deleter = (queueUrl: string, handles: string[]) => Promise<void>;

const nameOf = (url: unknown) => (typeof url === 'string' ? url.slice(url.lastIndexOf('/') + 1) : undefined);

/** Deletes through the same client the answer came from is not possible from a middleware: a plain SQS client of the engine. */
export const deleteWith =
  (send: (c: DeleteMessageBatchCommand) => Promise<unknown>): Deleter =>
  async (queueUrl, handles) => {
    for (let i = 0; i < handles.length; i += 10) {
      await send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: handles.slice(i, i + 10).map((ReceiptHandle, j) => ({ Id: String(j), ReceiptHandle })) }));
    }
  };

/** The retention middleware (initialize step). Exported for the unit tests, which drive it with a fake `next`. */
export function retentionMiddleware(state: RetentionState, deleteExpired: Deleter) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (next: (args: any) => Promise<any>, context: { commandName?: string }) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async (args: { input: Input }): Promise<any> => {
      const command = context.commandName ?? '';
      const input = args.input ?? {};
      const name = command === 'CreateQueueCommand' ? (input.QueueName as string | undefined) : nameOf(input.QueueUrl);
      const out = await next(args);
      if (!name) return out;
      const now = state.clock();
      const attrs = input.Attributes as Record<string, string> | undefined;
      if ((command === 'CreateQueueCommand' || command === 'SetQueueAttributesCommand') && attrs?.MessageRetentionPeriod !== undefined) {
        state.queue(name).retentionMs = Number(attrs.MessageRetentionPeriod) * 1000;
      } else if (command === 'DeleteQueueCommand') {
        state.queues.delete(name);
      } else if (command === 'SendMessageCommand' && out?.output?.MessageId) {
        const q = state.queue(name);
        q.sent.set(out.output.MessageId, now + q.retentionMs);
      } else if (command === 'SendMessageBatchCommand') {
        const q = state.queue(name);
        for (const s of (out?.output?.Successful ?? []) as { MessageId?: string }[]) if (s.MessageId) q.sent.set(s.MessageId, now + q.retentionMs);
      } else if (command === 'ReceiveMessageCommand' && out?.output?.Messages?.length) {
        const q = state.queue(name);
        const messages = out.output.Messages as { MessageId?: string; ReceiptHandle?: string }[];
        const expired = messages.filter((m) => m.MessageId !== undefined && (q.sent.get(m.MessageId) ?? Infinity) <= now);
        for (const m of messages) {
          if (!m.ReceiptHandle || !m.MessageId || !q.sent.has(m.MessageId)) continue;
          const before = q.latest.get(m.MessageId);
          if (before !== undefined) q.handles.delete(before);
          q.latest.set(m.MessageId, m.ReceiptHandle);
          q.handles.set(m.ReceiptHandle, m.MessageId);
        }
        if (expired.length) {
          out.output.Messages = messages.filter((m) => !expired.includes(m));
          await deleteExpired(input.QueueUrl as string, expired.map((m) => m.ReceiptHandle as string));
        }
      } else if (command === 'DeleteMessageCommand' || command === 'DeleteMessageBatchCommand') {
        const q = state.queues.get(name);
        if (q) {
          const failed = new Set(((out?.output?.Failed ?? []) as { Id?: string }[]).map((f) => f.Id));
          const entries = command === 'DeleteMessageCommand' ? [input as { Id?: string; ReceiptHandle?: string }] : ((input.Entries ?? []) as { Id?: string; ReceiptHandle?: string }[]);
          for (const e of entries) {
            if (!e.ReceiptHandle || (e.Id !== undefined && failed.has(e.Id))) continue;
            // Only the latest receive's handle deletes (SQS ignores an older one).
            const id = q.handles.get(e.ReceiptHandle);
            if (id === undefined) continue;
            q.handles.delete(e.ReceiptHandle);
            q.latest.delete(id);
            q.sent.delete(id);
          }
        }
      } else if (command === 'GetQueueAttributesCommand' && out?.output?.Attributes) {
        let extra = state.expiredCount(name);
        const a = out.output.Attributes as Record<string, string>;
        for (const k of ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed']) {
          if (a[k] === undefined || extra === 0) continue;
          const take = Math.min(extra, Number(a[k]));
          a[k] = String(Number(a[k]) - take);
          extra -= take;
        }
      }
      return out;
    };
}
