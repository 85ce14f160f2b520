/**
 * Checks "a failure counted in a webhook's status is one a bulk replay made
 * at once finds; no failure counted twice, none lost" (docs/webhooks.md, docs/design/0022).
 *
 * Scenario: a webhook's circuit is open and one delivery is parked (lambda/webhooks/parking.ts).
 * Its probe ticket delivers it (retry_count 0): the endpoint answers 500, the delivery ends in
 * failure, and its retained copy cannot be written in its 6 tries (a DynamoDB blip of a few
 * seconds, injected on the shared client in front of DynamoDB Local). flush.ts notes the failure
 * `uncounted` on its record and answers it unkept; but the SQS record was the probe ticket, not the
 * job: lambda/webhooks/delivery-batch.ts `isUnkept` is false for a probe ticket, so the ticket
 * succeeds and is deleted, and the parked job was already taken out of the parked list. Nothing runs
 * the delivery again: its failure is never counted (failure_count stays 0) and the note stays.
 *
 * Expected: the failure is counted once within seconds (as for a job on the queue), or at least
 * the job comes back. Observed: failure_count 0 after 40 s, `uncounted` still on the record.
 */
import { until } from '../fixtures/receiver';
import { openCircuitWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { circuitOpen } from '../../lambda/webhooks/rules/endpoint-health';
import { park } from '../../lambda/webhooks/parking';
import type { PublishedMessage } from '../../lambda/core/rules/message';

jest.setTimeout(120_000);

const bed = webhookTestbed('r12park', { visibilitySeconds: 5 });

const retainedPut = (c: RecordedCall) => /^Put(Item)?Command$/.test(c.command) && JSON.stringify(c.input.Item ?? {}).includes('"#RETAINED"');

it('a parked delivery whose probe fails and whose retained copy is not written is counted once (not lost)', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const opened = await openCircuitWebhook(bed, recv.url);
  expect(circuitOpen(opened.open.health)).toBe(true);
  const { w, stored, open } = opened;
  const id = unique('P');
  const message: PublishedMessage = { message_id: id, topic: 'never/published', payload: 'parked', content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 6 };
  // webhooks/delivery-log.ts LOG_RETRIES: 6 tries of the retained copy, all refused.
  const fault = injectDynamoFault({ when: retainedPut, mode: 'before', times: 6, name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } });
  fault.arm();
  try {
    await park({ namespace: bed.ns.name, webhook_id: stored.id, webhook_name: w.name, message }, open, Date.now() + 500);
    await recv.waitFor(1, 30_000);
    await until(async () => (await readDelivery({ namespace: bed.ns.name, webhookId: stored.id, messageId: id }))?.outcome === 'failed', 20_000, 'the delivery recorded failed');
    await until(async () => fault.hits.length >= 6, 20_000, 'the retained copy refused 6 times');
  } finally {
    fault.stop();
  }
  const failures = async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count ?? 0;
  // A job on the queue is kept and counted within about 5 s (the visibility); give it 40 s.
  const counted = await until(async () => (await failures()) >= 1, 40_000, 'the failure counted').then(() => true, () => false);
  const rec = await readDelivery({ namespace: bed.ns.name, webhookId: stored.id, messageId: id });
  expect({ counted, failure_count: await failures(), uncountedNote: rec?.uncounted !== undefined, posts: recv.requests.length }).toEqual({ counted: true, failure_count: 1, uncountedNote: false, posts: 1 });
});
