/**
 * The local event source (local/event-source.ts) promises: "Records the handler
 * reports in `batchItemFailures` [...] are left alone [...] as in AWS". AWS Lambda treats the
 * whole batch as failed when the partial batch response names an item it cannot match: "an empty
 * string itemIdentifier", "a null itemIdentifier", "an itemIdentifier with a bad key name", "an
 * itemIdentifier value with a message ID that doesn't exist"
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html, "Success and
 * failure conditions"): every message of the batch comes back.
 *
 * Scenario: a batch of two messages whose handler answers one bad identifier. Observed locally: the
 * unmatched identifier is ignored and both messages are deleted as successes (kinder than AWS: a
 * handler bug that loses failed records would pass every local test). Expected: both messages are
 * handed to the handler again after the visibility timeout.
 */
import { randomUUID } from 'node:crypto';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalSqsEventSource } from '../../local/event-source';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { until } from '../fixtures/receiver';

jest.setTimeout(60_000);

const VISIBILITY_S = 2;

it.each([
  ['an empty string', ''],
  ['a message id not in the batch', randomUUID()],
])('a partial batch response with %s as itemIdentifier fails the whole batch, as in AWS', async (_, bad) => {
  const q = await ensureDeliveryQueues(`r12-es-bad-${randomUUID()}`, VISIBILITY_S);
  const out = await sqsClient().send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: [0, 1].map((i) => ({ Id: String(i), MessageBody: `m${i}` })) }));
  expect(out.Failed ?? []).toEqual([]);
  const seen: string[] = [];
  let first = true;
  const events = new LocalSqsEventSource(
    async (e: SQSEvent): Promise<SQSBatchResponse> => {
      for (const r of e.Records) seen.push(r.body);
      // Both in one batch first (the window gathers them): then the bad identifier.
      if (first && e.Records.length === 2) {
        first = false;
        return { batchItemFailures: [{ itemIdentifier: bad }] };
      }
      return { batchItemFailures: [] };
    },
    { queueUrl: q.url, queueArn: q.arn, batchSize: 10, batchingWindowMs: 1000, concurrency: 1 },
  ).start();
  try {
    await until(async () => !first && events.busy === 0, 20_000, 'the two-message batch handled');
    // Twice the visibility timeout: a message left in the queue is handed again by then.
    await new Promise((r) => setTimeout(r, (VISIBILITY_S * 2 + 3) * 1000));
  } finally {
    await events.stop();
  }
  expect(seen.sort()).toEqual(['m0', 'm0', 'm1', 'm1']);
});
