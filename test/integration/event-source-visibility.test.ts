/**
 * The local event source hands each batch the whole visibility timeout, as AWS does from the
 * receive that formed it: the visibility timeout starts when a message is received, and Lambda's
 * SQS pollers with a maximum concurrency read only what they can invoke with
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html#services-sqs-max-concurrency,
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html).
 * With batches of 1 at concurrency 1, a 4 s visibility and a 3 s handler, every message is handled
 * once and received once, though the read-ahead (local/event-source.ts) holds the later ones
 * while the first run. Seen failing (found in review) when waiting messages were renewed only
 * after 10 s or past half their visibility every 5 s: messages handled two to five times.
 */
import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalSqsEventSource } from '../../local/event-source';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { until } from '../fixtures/receiver';

jest.setTimeout(90_000);

const VISIBILITY_S = 4;
const HANDLER_MS = 3000;
const N = 4;

it('hands each message once when the handler ends within the visibility timeout', async () => {
  const q = await ensureDeliveryQueues(`es-vis-${randomUUID()}`, VISIBILITY_S);
  const out = await sqsClient().send(
    new SendMessageBatchCommand({ QueueUrl: q.url, Entries: Array.from({ length: N }, (_, i) => ({ Id: String(i), MessageBody: `m${i}` })) }),
  );
  expect(out.Failed ?? []).toEqual([]);
  const seen: { body: string; receiveCount: string; at: number }[] = [];
  const events = new LocalSqsEventSource(
    async (e: SQSEvent) => {
      for (const r of e.Records) seen.push({ body: r.body, receiveCount: r.attributes.ApproximateReceiveCount, at: Date.now() });
      await new Promise((r) => setTimeout(r, HANDLER_MS));
      return { batchItemFailures: [] };
    },
    { queueUrl: q.url, queueArn: q.arn, batchSize: 1, concurrency: 1 },
  ).start();
  try {
    await until(async () => new Set(seen.map((s) => s.body)).size === N && events.busy === 0, 60_000, "every message handled");
    // A copy that came back during its handling is handed after the rest: give it time to show.
    await new Promise((r) => setTimeout(r, HANDLER_MS + 2000));
  } finally {
    await events.stop();
  }
  const bodies = seen.map((s) => s.body);
  // Promised (AWS): each body once, each received once.
  expect({ bodies: bodies.sort(), counts: seen.map((s) => s.receiveCount) }).toEqual({
    bodies: Array.from({ length: N }, (_, i) => `m${i}`).sort(),
    counts: Array.from({ length: N }, () => '1'),
  });
});
