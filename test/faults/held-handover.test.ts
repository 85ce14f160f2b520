/**
 * Handovers of held messages when DynamoDB applied a write and its answer was lost, so the SDK
 * sent the same conditional write again and met its own write (lambda/schedules/storage/scheduler.ts): the
 * claim is still this tick's (the message is handed over now, not once the claim expires), and
 * the finish is still this handover's (the namespace's held quota is given back once, not never).
 */
import { afterIndexLag } from '../fixtures/harsh-waits';
import { tick } from '../../lambda/schedules/tick';
import { heldUsage } from '../../lambda/limits/storage/held-quota';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';
import { getQueue, type QueueItem } from '../../lambda/queues/storage/queues';
import { sqsQueueCounts } from '../../lambda/queues/storage/service-queues';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'fault-held-handover', seed: 20, services: ['dynamodb'] });

async function heldMessage() {
  const name = unique('hh');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const t0 = Date.now();
  expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 1000 })).status).toBe(201);
  await afterIndexLag();
  const queue = (await getQueue(t.namespace, name)) as QueueItem;
  // Due within the handover window from then on. The tick hands over every due message of the
  // lane's table, so the test looks at its own queue, not at the tick's totals.
  return { at: t0 + 200_000, inSqs: async () => ((c) => c.visible + c.inFlight + c.delayed)((await sqsQueueCounts(queue.sqs_queue))!) };
}

const lostAnswer = (update: string) =>
  t.injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: 1, matches: (input) => String(input.UpdateExpression).startsWith(update) && JSON.stringify(input.Key).includes(`NS#${t.namespace}#`) });

it('hands a message over in the tick whose claim answer was lost', async () => {
  const held = await heldMessage();
  lostAnswer('SET #s = :handing');
  await tick(held.at);
  expect(t.injector.unused).toBe(0);
  expect(await held.inSqs()).toBe(1);
});

it('gives the held quota back once when the finish answer was lost', async () => {
  const before = await heldUsage(t.namespace);
  const held = await heldMessage();
  expect(await heldUsage(t.namespace)).toEqual({ messages: before.messages + 1, bytes: before.bytes + 4 });
  lostAnswer('SET #s = :state');
  await tick(held.at);
  expect(t.injector.unused).toBe(0);
  expect(await held.inSqs()).toBe(1);
  expect(await heldUsage(t.namespace)).toEqual(before);
});
