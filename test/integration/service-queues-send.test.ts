/**
 * Sending to a service queue's SQS queue while SQS does not know it yet (a queue created a moment
 * ago answers QueueDoesNotExist for about a second: CreateQueue's API reference). The calls of one
 * send run in parallel, so some may be refused and others stored; the send tries again with only
 * what was not stored, so SQS holds each message once. Sending everything again stored a second
 * copy of every batch already stored (a loaded CI run's competing-consumers test got 30 copies).
 */
import { randomUUID } from 'node:crypto';
import { config } from '../../lambda/core/config';
import { createSqsQueue, receiveFromSqsQueue, sendToSqsQueue } from '../../lambda/queues/storage/service-queues';
import { sqsClient } from '../../lambda/core/adapters/sqs';

it('a send whose calls are partly refused with QueueDoesNotExist stores each message once', async () => {
  const name = `${config().sqsQueuePrefix}send-${randomUUID().slice(0, 8)}`;
  await createSqsQueue({ name, retentionSeconds: 3600, tags: {} });
  await new Promise((r) => setTimeout(r, 1500)); // past the new-queue window the local runtime keeps, as AWS does
  let calls = 0;
  const refuse = `refuse-${randomUUID()}`;
  sqsClient().middlewareStack.add(
    (next, context) => async (args) => {
      // The second of the send's three calls is refused as by a queue SQS does not know yet.
      if (context.commandName === 'SendMessageBatchCommand' && ++calls === 2) {
        throw Object.assign(new Error('The specified queue does not exist.'), { name: 'QueueDoesNotExist' });
      }
      return next(args);
    },
    { step: 'initialize', name: refuse },
  );
  const sent = Array.from({ length: 30 }, (_, i) => `m${i}`);
  try {
    await sendToSqsQueue(name, sent);
  } finally {
    sqsClient().middlewareStack.remove(refuse);
  }
  expect(calls).toBe(4); // three calls, and the refused one again
  const bodies: string[] = [];
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    const got = await receiveFromSqsQueue(name, { max: 10, waitSeconds: 1, visibilitySeconds: 60 });
    bodies.push(...got.map((g) => g.body));
    if (got.length === 0 && bodies.length >= sent.length) break;
  }
  expect(bodies.sort()).toEqual([...sent].sort());
});
