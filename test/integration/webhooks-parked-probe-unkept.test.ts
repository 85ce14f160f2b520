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
import { openCircuitWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { failedUnkept, failureCounted, refuseRetainedCopy } from '../fixtures/unkept-failure';
import { circuitOpen } from '../../lambda/webhooks/rules/endpoint-health';
import { park } from '../../lambda/webhooks/parking';
import type { PublishedMessage } from '../../lambda/core/rules/message';

jest.setTimeout(120_000);

const bed = webhookTestbed('r12park', { visibilitySeconds: 5 });

it('a parked delivery whose probe fails and whose retained copy is not written is counted once (not lost)', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const opened = await openCircuitWebhook(bed, recv.url);
  expect(circuitOpen(opened.open.health)).toBe(true);
  const { w, stored, open } = opened;
  const id = unique('P');
  const message: PublishedMessage = { message_id: id, topic: 'never/published', payload: 'parked', content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 6 };
  const fault = refuseRetainedCopy();
  try {
    await park({ namespace: bed.ns.name, webhook_id: stored.id, webhook_name: w.name, message }, open, Date.now() + 500);
    await recv.waitFor(1, 30_000);
    await failedUnkept({ namespace: bed.ns.name, webhookId: stored.id, messageId: id }, fault);
  } finally {
    fault.stop();
  }
  // A job on the queue is kept and counted within about 5 s (the visibility); given 40 s.
  const seen = await failureCounted(bed, w.name, { namespace: bed.ns.name, webhookId: stored.id, messageId: id });
  expect({ ...seen, posts: recv.requests.length }).toEqual({ counted: true, failure_count: 1, uncountedNote: false, posts: 1 });
});
