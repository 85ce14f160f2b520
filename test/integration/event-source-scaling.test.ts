/**
 * The local event source scales its pollers as Lambda scales an SQS event source mapping's
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html): "Lambda starts
 * processing five batches at a time", "increases the number of processes that are reading batches
 * by up to 300 more instances per minute", never past the mapping's maximum concurrency
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html#events-sqs-max-concurrency),
 * and "when traffic is low, Lambda scales back the processing to five concurrent batches". Small
 * figures here (2 at first, one more each 100 ms at most, 6 at most, back after 1 s idle) so the
 * whole curve fits in a few seconds; the delivery queue's mapping uses SQS_MAPPING_SCALING (5, 300
 * a minute) up to the stack's maximum concurrency.
 *
 * Judged on the steps the event source records as it takes them (`scalingSteps`: each poller
 * added or stopped, at the time its scaling rule was given), not on an outside sampler: a loaded
 * machine fires a test's timer late, and what a late look saw says nothing of the pace. Only
 * bounds the service's own clock keeps are asserted; none on how fast the machine is.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalSqsEventSource } from '../../local/event-source';
import type { ScalingStep } from '../../local/event-source-scaling';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { until } from '../fixtures/receiver';

jest.setTimeout(60_000);

const INITIAL = 2;
const MAX = 6;
const STEP_MS = 100;
const IDLE_MS = 1000;

it('starts with the initial pollers, adds one a step at most while messages wait, stops at the maximum and scales back when idle', async () => {
  const q = await ensureDeliveryQueues(`es-scale-${randomUUID()}`, 30);
  for (let i = 0; i < 4; i++) {
    const out = await sqsClient().send(
      new SendMessageBatchCommand({ QueueUrl: q.url, Entries: Array.from({ length: 10 }, (_, j) => ({ Id: String(j), MessageBody: `m${i}-${j}` })) }),
    );
    expect(out.Failed ?? []).toEqual([]);
  }
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let handled = 0;
  const events = new LocalSqsEventSource(
    async (e) => {
      await gate;
      handled += e.Records.length;
      return { batchItemFailures: [] };
    },
    {
      queueUrl: q.url,
      queueArn: q.arn,
      batchSize: 1,
      concurrency: MAX,
      scaling: { initial: INITIAL, perMinute: 60_000 / STEP_MS, idleMs: IDLE_MS, errorBackoffMs: 1000, coldStartMs: 0, keepWarmMs: 60_000 },
    },
  ).start();
  let steps: readonly ScalingStep[] = [];
  let releasedAt = 0;
  try {
    await until(async () => events.busy >= MAX, 10_000, 'the pollers at the maximum');
    // Held at the maximum for 10 steps with 34 messages still waiting.
    await new Promise((r) => setTimeout(r, 10 * STEP_MS));
    releasedAt = Date.now();
    release();
    await until(async () => handled === 40, 20_000, 'every message handled');
    await until(async () => events.pollerCount === INITIAL, 10_000, 'scaled back to the initial pollers');
    steps = [...events.scalingSteps];
  } finally {
    release();
    await events.stop();
  }
  const start = steps[0].at;
  expect(steps.slice(0, INITIAL)).toEqual([1, 2].map((pollers) => ({ at: start, pollers })));
  const later = steps.slice(INITIAL).map((s, i) => ({ ...s, added: s.pollers > steps[INITIAL + i - 1].pollers }));
  const added = later.filter((s) => s.added);
  // Grows under the backlog to the maximum, never past it, and never below the initial pollers.
  expect(Math.max(...steps.map((s) => s.pollers))).toBe(MAX);
  expect(later.filter((s) => s.pollers < INITIAL)).toEqual([]);
  // Never more than the initial pollers and one a step since the start, and each added poller a
  // step after the one before: on the times the scaling recorded, whatever the machine's load.
  expect(steps.filter((s) => s.pollers > INITIAL + Math.floor((s.at - start) / STEP_MS))).toEqual([]);
  expect(added.filter((s, i) => s.at - (i ? added[i - 1].at : start) < STEP_MS)).toEqual([]);
  // Scaled back only when idle: a poller stops after IDLE_MS without a batch, and every poller
  // had one until the release; back to the initial pollers at the end.
  expect(later.filter((s) => !s.added && s.at < releasedAt + IDLE_MS)).toEqual([]);
  expect(steps[steps.length - 1].pollers).toBe(INITIAL);
});
