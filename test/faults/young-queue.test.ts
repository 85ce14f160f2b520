/**
 * A queue whose CreateQueue answers slowly (a loaded machine, or AWS on a busy day): SQS refuses
 * the new queue (QueueDoesNotExist) for about a second from its answer, and a consume right after
 * the 201 must wait that out and answer 200, never 404 QUEUE_NOT_FOUND. The grace was counted from
 * the start of the create request, so a CreateQueue slower than a second left the consume outside
 * it (CI's conformance run answered 404 for a queue created 3 s before).
 */
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'fault-young-queue', seed: 7, services: ['sqs'] });

it('a consume right after a slow CreateQueue waits for the young queue and answers 200', async () => {
  const name = unique('q');
  const slow = { service: 'sqs' as const, command: 'CreateQueueCommand', ms: 1_600, phase: 'after' as const };
  t.injector.addLatency(slow);
  try {
    expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  } finally {
    t.injector.removeLatency(slow);
  }
  const consumed = await t.api.call('POST', `/queues/${name}/messages/consume`, { timeout_seconds: 0 });
  expect([consumed.status, consumed.body?.error?.code]).toEqual([200, undefined]);
  expect(consumed.body?.data.messages).toEqual([]);
  const published = await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'after a slow create' });
  expect(published.status).toBe(201);
  const got = await t.api.call('POST', `/queues/${name}/messages/consume`, { timeout_seconds: 1 });
  expect(got.body?.data.messages.map((m: { payload: string }) => m.payload)).toEqual(['after a slow create']);
  expect(t.api.violations).toEqual([]);
});
