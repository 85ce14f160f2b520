/**
 * Checks "no failure counted twice, none lost" (docs/webhooks.md, bulk replay;
 * docs/design/0022: the rerun "takes the note with one conditional `REMOVE` and counts the failure
 * once").
 *
 * Scenario: a delivery ends in failure and its retained copy is refused in its 6 tries, so the run
 * notes it `uncounted` on its record and its job comes back 5 s later (batchItemFailures and a 5 s
 * visibility). The rerun keeps the copy and takes the note (storage/webhook-deliveries.ts
 * `takeUncounted`: `REMOVE uncounted` if `attribute_exists(uncounted)`, `UPDATED_OLD`). DynamoDB
 * applies that REMOVE but its answer is lost (a 500 after the write, injected inside the SDK's
 * retry loop, ./injector.ts); the SDK sends it again, its condition now fails, and takeUncounted
 * answers "another run took it". Nobody counts the failure: the note is gone, the job succeeds.
 *
 * Expected: failure_count 1 (the failure is not lost). Observed: 0, and no note left to recount it.
 * (The take now also SETs the taker's id after its REMOVE: the fault matches the expression's start.)
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault } from '../fixtures/dynamo-calls';
import { retainedPut } from '../fixtures/unkept-failure';
import { dynamoClient } from '../../lambda/core/storage/client';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { FaultInjector } from './injector';

jest.setTimeout(90_000);

const bed = webhookTestbed('r12take', { visibilitySeconds: 30 });
const injector = new FaultInjector(1213);
beforeAll(() => injector.attach(dynamoClient(), 'dynamodb'));
afterEach(() => injector.clearOneShots());

it('a failure whose note is taken by a REMOVE whose answer was lost is still counted once', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
  const webhookId = (await getWebhook(bed.ns.name, w.name))!.id;
  const fault = injectDynamoFault({ when: retainedPut, mode: 'before', times: 6, name: 'ServiceUnavailable', fields: { $fault: 'server', $metadata: { httpStatusCode: 503 } } });
  injector.failNext({
    service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: 1,
    matches: (input) => String(input.UpdateExpression).startsWith('REMOVE uncounted') && JSON.stringify(input.Key).includes(webhookId),
  });
  fault.arm();
  let id: string;
  try {
    const res = await bed.call('POST', `/topics/${topic}/messages`, { payload: 'taken' });
    expect(res.status).toBe(201);
    id = res.body.data.message_id;
    // The rerun took the note (the injected REMOVE was used).
    await until(async () => injector.unused === 0, 40_000, 'the note taken by the rerun');
  } finally {
    fault.stop();
  }
  expect(fault.hits).toHaveLength(6);
  const count = async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body?.data?.failure_count ?? 0;
  // Counted by the rerun within a second when nothing is lost; 20 s is ample.
  await until(async () => (await count()) >= 1, 20_000, 'the failure counted').catch(() => undefined);
  const failures = await count();
  const rec = await readDelivery({ namespace: bed.ns.name, webhookId, messageId: id });
  expect({ failures, noteLeft: rec?.uncounted !== undefined, posts: recv.requests.length }).toEqual({ failures: 1, noteLeft: false, posts: 1 });
});
