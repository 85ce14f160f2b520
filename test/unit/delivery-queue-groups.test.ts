/**
 * Every message sent to the webhook delivery queue carries its namespace as MessageGroupId, which
 * makes the standard queue a fair queue ("Amazon SQS fair queues"): a message without one is a
 * tenant of its own, and would escape the fairness between namespaces. The requests are read at
 * the SQS client's middleware stack, where the answer SQS would give to them is returned.
 */
process.env.MSG_WEBHOOK_QUEUE_URL = 'http://127.0.0.1:9/000000000000/deliveries';
import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { deferJobs, enqueueJobs } from '../../lambda/adapters/delivery-queue';
import { resetSqsClient, sqsClient } from '../../lambda/adapters/sqs';
import type { DeliveryJob } from '../../lambda/domain/delivery';
import { sqsJson } from '../../lambda/domain/queue-messages';

let sent: SendMessageBatchRequestEntry[] = [];
beforeEach(() => {
  sent = [];
  resetSqsClient();
  sqsClient().middlewareStack.add(
    () => async (args) => {
      const entries = ((args.input as { Entries?: SendMessageBatchRequestEntry[] }).Entries ?? []);
      sent.push(...entries);
      return { output: { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m${e.Id}` })), Failed: [], $metadata: {} }, response: {} } as never;
    },
    { step: 'initialize', name: 'captureDeliverySends' },
  );
});
afterAll(() => resetSqsClient());

const job = (namespace: string, n: number): DeliveryJob =>
  ({ namespace, webhook_id: `w${n}`, webhook_name: `hook${n}`, message: { message_id: `m${n}`, topic: 't', payload: '{}', timestamp: '2026-11-27T00:00:00Z' } }) as unknown as DeliveryJob;

describe('the delivery queue groups its messages by namespace', () => {
  it('first attempts, replays and releases (enqueueJobs), with or without a delay', async () => {
    await enqueueJobs([job('acme', 1), job('globex', 2), job('acme', 3)], [undefined, 5]);
    expect(sent.map((e) => [e.MessageGroupId, e.DelaySeconds])).toEqual([
      ['acme', undefined],
      ['globex', 5],
      ['acme', undefined],
    ]);
  });

  it('jobs handed back to wait, start retries and probe tickets (deferJobs)', async () => {
    const ticket = { namespace: 'globex', webhook_id: 'w9', webhook_name: 'hook9', probe_ticket: 1 };
    await deferJobs([sqsJson(job('acme', 1)), sqsJson(ticket)], 3);
    expect(sent.map((e) => [e.MessageGroupId, e.DelaySeconds])).toEqual([
      ['acme', 3],
      ['globex', 3],
    ]);
  });

  it('refuses a body that names no namespace rather than send it ungrouped', async () => {
    await expect(deferJobs([JSON.stringify({ webhook_id: 'w' })], 1)).rejects.toThrow(/namespace/);
    expect(sent).toEqual([]);
  });
});
