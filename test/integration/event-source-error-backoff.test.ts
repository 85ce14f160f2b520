/**
 * Lambda backs off an SQS event source mapping whose invocations fail: "If your function code
 * caused the error, Lambda will stop processing and retrying the invocation. In the meantime,
 * Lambda gradually backs off, reducing the amount of concurrency allocated to your Amazon SQS
 * event source mapping" ("Backoff strategy for failed invocations",
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html), and "to prevent
 * errors at scale, Lambda throttles function scaling when invocation errors occur"
 * (https://repost.aws/knowledge-center/lambda-sqs-scaling). The local event source's scaling
 * adds pollers while messages wait and every poller has a batch, whatever the batches' outcome:
 * a delivery function failing every invocation (a dependency down, a bad deploy) is scaled up to
 * the mapping's maximum locally, where AWS would take concurrency away. Kinder than AWS for whatever
 * depends on the failing function's capacity, and the failing function's load on the local
 * engines is 50 times what it would be.
 *
 * Small figures: 2 pollers at first, one more every 100 ms, 6 at most; every invocation takes
 * 200 ms and throws; 60 messages wait. Before the first failure is known the scaling may grow (AWS
 * scales while messages wait); from the first failure on, no poller is added, and the pollers
 * added before it stop as their invocations fail, back to the initial 2.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalSqsEventSource } from '../../local/event-source';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { until } from '../fixtures/receiver';

jest.setTimeout(60_000);

it('does not scale the pollers up while every invocation fails', async () => {
  const q = await ensureDeliveryQueues(`es-fail-${randomUUID()}`, 30);
  for (let i = 0; i < 60; i += 10) {
    const out = await sqsClient().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: Array.from({ length: 10 }, (_, j) => ({ Id: String(j), MessageBody: `m${i + j}` })) }));
    expect(out.Failed ?? []).toEqual([]);
  }
  let failed = 0;
  /** When the first invocation failed: the scaler can learn it no earlier (a timer, after the throw). */
  let firstFailureAt = Infinity;
  const events = new LocalSqsEventSource(
    async () => {
      await new Promise((r) => setTimeout(r, 200));
      failed++;
      firstFailureAt = Math.min(firstFailureAt, Date.now());
      throw new Error('the function failed');
    },
    { queueUrl: q.url, queueArn: q.arn, batchSize: 1, concurrency: 6, scaling: { initial: 2, perMinute: 600, idleMs: 1000, errorBackoffMs: 10_000, coldStartMs: 0, keepWarmMs: 60_000 } },
  ).start();
  let end = -1;
  let steps: { at: number; pollers: number }[] = [];
  try {
    await until(async () => failed >= 20, 20_000, 'twenty failed invocations');
    end = events.pollerCount;
    steps = [...events.scalingSteps];
  } finally {
    await events.stop();
  }
  // Judged on the poller changes the event source records as it takes them, not on a sampler.
  const addedAfter = steps.filter((st, i) => i > 0 && st.at > firstFailureAt && st.pollers > steps[i - 1].pollers).length;
  const atFailure = [...steps].reverse().find((st) => st.at <= firstFailureAt)?.pollers ?? 0;
  const mostAfter = Math.max(atFailure, ...steps.filter((st) => st.at > firstFailureAt).map((st) => st.pollers));
  const grewAfterFailure = mostAfter > atFailure;
  expect({ grewAfterFailure, addedAfter, pollersAtEnd: end }).toEqual({ grewAfterFailure: false, addedAfter: 0, pollersAtEnd: 2 });
});
