/**
 * Cancelling a held message when DynamoDB applied a give-back and its answer was lost, so the
 * SDK sent the same ADD again (a probe of "counts exact after held publish + cancel"): the
 * queue's message_count and the namespace's held quota drop by one message, not two.
 */
import { afterIndexLag } from '../fixtures/harsh-waits';
import { heldUsage } from '../../lambda/limits/storage/held-quota';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'fault-held-cancel', seed: 21, services: ['dynamodb'] });

/** The answer of the next write whose update starts with `update` is lost (sent as an UpdateItem or a one-item transaction: one of the two faults is used). */
const lostAnswer = (update: string) => {
  const expression = (input: Record<string, unknown>) => String((input as { TransactItems?: { Update?: { UpdateExpression?: string } }[] }).TransactItems?.[0]?.Update?.UpdateExpression ?? input.UpdateExpression);
  for (const command of ['TransactWriteItemsCommand', 'UpdateItemCommand'])
    t.injector.failNext({ service: 'dynamodb', command, kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: 1, matches: (input) => expression(input).startsWith(update) });
};

/** A queue holding two messages of 4 bytes for a delay beyond 900 s; the id of the first. */
async function twoHeld() {
  const name = unique('hc');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const first = await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 2000 });
  expect(first.status).toBe(201);
  expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 2000 })).status).toBe(201);
  await afterIndexLag();
  return { name, id: first.body?.data.message_id as string };
}

it.each([
  ['the queue counters', 'ADD message_count'],
  ['the held quota', 'ADD n :n'],
])('gives back one message when the answer of %s was lost', async (_, update) => {
  const before = await heldUsage(t.namespace);
  const { name, id } = await twoHeld();
  expect((await t.api.call('GET', `/queues/${name}`)).body?.data.message_count).toBe(2);
  lostAnswer(update);
  const cancel = await t.api.call('DELETE', `/messages/${id}/delivery`);
  expect(t.injector.unused).toBe(1);
  t.injector.clearOneShots();
  expect(cancel.status).toBe(200);
  expect((await t.api.call('GET', `/queues/${name}`)).body?.data.message_count).toBe(1);
  expect(await heldUsage(t.namespace)).toEqual({ messages: before.messages + 1, bytes: before.bytes + 4 });
});
