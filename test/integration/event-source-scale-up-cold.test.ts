/**
 * A poller the local event source adds while scaling up hands its first batch to the handler at
 * once, as if an execution environment were already warm for it. In AWS each concurrent
 * invocation beyond the warm environments needs a new one: "the service first prepares an
 * execution environment ... downloads the code ... creates an environment ... runs any
 * initialization code outside of the event handler before finally running the handler code"
 * ("Cold starts and latency",
 * https://docs.aws.amazon.com/lambda/latest/operatorguide/execution-environments.html). Growing
 * from 5 to 250 batches, every added batch is such a cold start; the delivery bundle's import
 * alone is about 59 ms (docs/performance.md, the cold-start table), the runtime's own start
 * comes on top. The fairness target's "beside" condition is exactly when the mapping scales up
 * (the "alone" condition stays on the first warm pollers), so a local scale-up without that cost
 * is kinder than AWS for it.
 *
 * Figures small so it runs in seconds: 1 poller at first, one more every 100 ms, 3 at most; the
 * first batch is held so the scaler has a reason to add a poller.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalSqsEventSource } from '../../local/event-source';
import { SQS_MAPPING_SCALING } from '../../local/event-source-scaling';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { until } from '../fixtures/receiver';

jest.setTimeout(60_000);

/** The delivery bundle's import p50 (docs/performance.md), less than a whole cold start. */
const DELIVERY_IMPORT_MS = 59;

it('pays an execution environment start before the first batch of a poller added by the scaling', async () => {
  const q = await ensureDeliveryQueues(`es-cold-${randomUUID()}`, 30);
  const out = await sqsClient().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: Array.from({ length: 3 }, (_, j) => ({ Id: String(j), MessageBody: `m${j}` })) }));
  expect(out.Failed ?? []).toEqual([]);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const starts: number[] = [];
  const events = new LocalSqsEventSource(
    async () => {
      starts.push(Date.now());
      await gate;
      return { batchItemFailures: [] };
    },
    { queueUrl: q.url, queueArn: q.arn, batchSize: 1, concurrency: 3, scaling: { ...SQS_MAPPING_SCALING, initial: 1, perMinute: 600, idleMs: 1000 } },
  ).start();
  // When each poller came, as the event source recorded it when the scaling added it.
  let added: number[] = [];
  try {
    await until(async () => starts.length >= 2, 10_000, 'a batch on the added poller');
    added = events.scalingSteps.slice(1).filter((s, i) => s.pollers > events.scalingSteps[i].pollers).map((s) => s.at);
  } finally {
    release();
    await events.stop();
  }
  expect(added.length).toBeGreaterThanOrEqual(1);
  // The second batch ran on the first poller added; from its addition to its handler: an
  // environment's start at least.
  expect(starts[1] - added[0]).toBeGreaterThanOrEqual(DELIVERY_IMPORT_MS);
});
