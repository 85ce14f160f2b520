/**
 * The local event source renews the visibility of the messages it read ahead every second
 * (renewWaiting: those past a third of the queue's visibility timeout), one
 * ChangeMessageVisibilityBatch of 10 after another, and a message's renewal time is set only when
 * the whole round ends. Nothing keeps a round from starting while the last one still runs: a
 * round over a large read-ahead takes more than the second between rounds, so the next round
 * picks the same messages again and renews them twice (then three times...), piling SQS calls on
 * the local engines exactly when they are busiest. The read-ahead now grows with the pollers
 * (`lookahead`: 4 × pollers × batch size), up to 10,000 messages at the stack's 250,
 * a thousand calls a round.
 *
 * Small figures so it runs in seconds: a queue whose visibility timeout is 3 s (a renewal is due
 * after 1 s), 1,500 messages read ahead behind one held batch, watched for 6 s. Each message must
 * be renewed at most once per third of its visibility timeout (here no two renewals of one receipt
 * handle less than 0.9 s apart).
 */
import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalSqsEventSource } from '../../local/event-source';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { until } from '../fixtures/receiver';

jest.setTimeout(90_000);

const N = 1500;

it('renews each read-ahead message at most once per third of the visibility timeout, however long a round takes', async () => {
  const q = await ensureDeliveryQueues(`es-renew-${randomUUID()}`, 3);
  for (let i = 0; i < N; i += 10) {
    const out = await sqsClient().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: Array.from({ length: 10 }, (_, j) => ({ Id: String(j), MessageBody: `m${i + j}` })) }));
    expect(out.Failed ?? []).toEqual([]);
  }
  // Every ChangeMessageVisibilityBatch entry the source sends: its receipt handle and when.
  const renewals = new Map<string, number[]>();
  let watching = false;
  const name = 'count-visibility-renewals';
  sqsClient().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Entries?: { ReceiptHandle?: string; VisibilityTimeout?: number }[] };
      if (watching && context.commandName === 'ChangeMessageVisibilityBatchCommand') {
        for (const e of input.Entries ?? []) if (e.ReceiptHandle && e.VisibilityTimeout) renewals.set(e.ReceiptHandle, [...(renewals.get(e.ReceiptHandle) ?? []), Date.now()]);
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let taken = 0;
  const events = new LocalSqsEventSource(
    async (e) => {
      taken += e.Records.length;
      await gate;
      return { batchItemFailures: [] };
    },
    { queueUrl: q.url, queueArn: q.arn, batchSize: 1, concurrency: 1, lookahead: N },
  ).start();
  try {
    await until(async () => taken === 1, 20_000, 'the one batch held');
    watching = true;
    await new Promise((r) => setTimeout(r, 6000));
    watching = false;
  } finally {
    release();
    await events.stop();
    sqsClient().middlewareStack.remove(name);
  }
  const gaps = [...renewals.values()].flatMap((at) => at.slice(1).map((t, i) => t - at[i]));
  expect(renewals.size).toBeGreaterThan(0);
  const tooSoon = gaps.filter((g) => g < 900);
  const seen = { messages: renewals.size, renewals: gaps.length + renewals.size, tooSoon: tooSoon.length, shortestMs: Math.min(...gaps) };
  expect(seen).toEqual({ ...seen, tooSoon: 0 });
});
