/**
 * The local event source scales its pollers as Lambda scales an SQS event source mapping's
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html): it starts with
 * `initial` batches at once, adds at most `perMinute` a minute while messages wait and every
 * poller has a batch, never passes the mapping's maximum concurrency, and scales back to
 * `initial` when the messages stop. Small figures here (2 at first, one more every 100 ms, at
 * most 6, back after 1 s idle) so the whole curve fits in a few seconds; the delivery queue's
 * mapping uses SQS_MAPPING_SCALING (5, 300 a minute) up to the stack's maximum concurrency.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalSqsEventSource } from '../../local/event-source';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { until } from '../fixtures/receiver';
import { scaled } from '../fixtures/time-scale';

jest.setTimeout(60_000);

const MAX = 6;
const STEP_MS = 100;

it('starts with the initial pollers, adds one a step while messages wait, stops at the maximum and scales back when idle', async () => {
  const q = await ensureDeliveryQueues(`es-scale-${randomUUID()}`, 30);
  for (let i = 0; i < 4; i++) {
    const out = await sqsClient().send(
      new SendMessageBatchCommand({ QueueUrl: q.url, Entries: Array.from({ length: 10 }, (_, j) => ({ Id: String(j), MessageBody: `m${i}-${j}` })) }),
    );
    expect(out.Failed ?? []).toEqual([]);
  }
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const busy: { at: number; n: number }[] = [];
  let handled = 0;
  const events = new LocalSqsEventSource(
    async (e) => {
      await gate;
      handled += e.Records.length;
      return { batchItemFailures: [] };
    },
    { queueUrl: q.url, queueArn: q.arn, batchSize: 1, concurrency: MAX, scaling: { initial: 2, perMinute: 60_000 / STEP_MS, idleMs: 1000, errorBackoffMs: 1000, coldStartMs: 0, keepWarmMs: 60_000 } },
  ).start();
  const started = Date.now();
  const sampler = setInterval(() => busy.push({ at: Date.now() - started, n: events.busy }), 10);
  try {
    await until(async () => events.busy === MAX, 10_000, 'the pollers at the maximum');
    // Held at the maximum with 34 messages still waiting.
    await new Promise((r) => setTimeout(r, 10 * STEP_MS));
    release();
    await until(async () => handled === 40, 20_000, 'every message handled');
    await until(async () => events.pollerCount === 2, 10_000, 'scaled back to the initial pollers');
  } finally {
    clearInterval(sampler);
    await events.stop();
  }
  const firstAt = (n: number) => busy.find((b) => b.n >= n)?.at ?? Infinity;
  // Never more than the maximum; two at first, then at most one more a step (the first step may
  // come at once: the scaling's clock does not wait for the first batch); a little timer slack.
  expect(Math.max(...busy.map((b) => b.n))).toBe(MAX);
  // Judged from the first batch on: before it (a first poll late on a loaded machine) nothing is busy.
  const over = busy.filter((b) => b.at >= firstAt(1) && b.n > 2 + 1 + Math.floor((b.at - firstAt(1)) / (STEP_MS * 0.8)));
  expect(over).toEqual([]);
  // Each added poller a step after the one before, less the sampler's own lateness: a 10 ms
  // interval that fires late on a loaded machine sees a poller late and shortens the next gap (76
  // ms seen in the whole suite). Two added in one step are a gap of a few ms; a faster cadence
  // overall is the bound above.
  for (let n = 4; n <= MAX; n++) expect(firstAt(n) - firstAt(n - 1)).toBeGreaterThanOrEqual(STEP_MS - scaled(20));
});
