/**
 * Two SQS copies of one delivery job in one batch (SQS standard queues may deliver a message more
 * than once, https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues-at-least-once-delivery.html;
 * and an SDK retry of a SendMessageBatch whose answer was lost stores its entries twice): the
 * batch's single read of the delivery records found none for either, so both POSTed at once. The
 * simulation met it as a replayed message answered 2xx twice. The batch handler is called with the
 * two copies, as the event source would hand them over; the receiver is real.
 */
import { randomUUID } from 'node:crypto';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { processBatch } from '../../lambda/webhooks/delivery-batch';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { keyOf } from '../../lambda/webhooks/delivery-key';
import type { DeliveryJob } from '../../lambda/webhooks/rules/delivery';

jest.setTimeout(60_000);

const bed = webhookTestbed('whrcp');

const record = (body: string): SQSRecord => ({ messageId: randomUUID(), receiptHandle: randomUUID(), body, attributes: { ApproximateReceiveCount: '1' } } as unknown as SQSRecord);

it.each([
  ['a replay', true],
  ['a first delivery', false],
])('POSTs %s whose two copies arrive in one batch once', async (_, replay) => {
  const recv = await bed.receivers.start();
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0 });
  const stored = (await getWebhook(bed.ns.name, w.name))!;
  const id = unique('M');
  const job: DeliveryJob = {
    namespace: bed.ns.name, webhook_id: stored.id, webhook_name: w.name,
    ...(replay ? { replay_id: unique('R') } : {}),
    message: { message_id: id, topic: 'never/published', payload: `p-${id}`, content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 4 },
  };
  const body = JSON.stringify(job);
  const event: SQSEvent = { Records: [record(body), record(body)] };
  expect(await processBatch(event)).toEqual({ batchItemFailures: [] });
  // Long enough for a late second POST.
  await new Promise((r) => setTimeout(r, 1000));
  expect(recv.requests).toHaveLength(1);
  expect((await readDelivery(keyOf(job)))?.outcome).toBe('success');
});

// Two invocations that receive copies of one replay job at once both read no record: each would
// POST. A replay claims its POST first (lambda/webhooks/storage/webhook-deliveries.ts `claimSend`): the
// copy that meets the other's claim waits on the queue and then carries on from its record.
it('POSTs a replay whose two copies two invocations receive at once once', async () => {
  const recv = await bed.receivers.start({ delayMs: 500 });
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: unique('t'), retry_count: 0 });
  const stored = (await getWebhook(bed.ns.name, w.name))!;
  const id = unique('M');
  const job: DeliveryJob = {
    namespace: bed.ns.name, webhook_id: stored.id, webhook_name: w.name, replay_id: unique('R'),
    message: { message_id: id, topic: 'never/published', payload: `p-${id}`, content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 4 },
  };
  const body = JSON.stringify(job);
  const answers = await Promise.all([processBatch({ Records: [record(body)] }), processBatch({ Records: [record(body)] })]);
  expect(answers).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
  await new Promise((r) => setTimeout(r, 1000));
  expect(recv.requests).toHaveLength(1);
  expect((await readDelivery(keyOf(job)))?.outcome).toBe('success');
});
