/**
 * Held-message packs (docs/design/0032-held-message-packs.md): a cancel by id when DynamoDB applied one of the cancel's
 * writes and its answer was lost, so the SDK sent the same write again and met its own write. The
 * cancel should answer 200 once, with the queue's message_count and the held quota down by one.
 */
import { afterIndexLag } from '../fixtures/harsh-waits';
import { heldUsage } from '../../lambda/limits/storage/held-quota';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'fault-held-pack-cancel', seed: 44, services: ['dynamodb'] });

const lostAnswer = (update: string) =>
  t.injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', kind: { code: 'InternalServerError', status: 500 }, timing: 'after', attempts: 1, matches: (input) => String(input.UpdateExpression).startsWith(update) });

/** A queue holding two messages of 4 bytes for a delay beyond 900 s (one request: a pack, or two requests: one item each); the id of the first. */
async function twoHeld(packed: boolean) {
  const name = unique('hp');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  let id: string;
  if (packed) {
    const res = await t.api.call('POST', `/topics/${name}/t/messages/batch`, { messages: [{ payload: 'held', delay_seconds: 2000 }, { payload: 'held', delay_seconds: 2000 }] });
    expect(res.status).toBe(201);
    id = res.body?.data.message_ids[0];
  } else {
    const res = await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 2000 });
    expect(res.status).toBe(201);
    id = res.body?.data.message_id;
    expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 2000 })).status).toBe(201);
  }
  await afterIndexLag();
  return { name, id };
}

it.each([
  ['a packed message, the mark of its slot on the pack', true, 'ADD cancelled :slot'],
  ['a packed message, its slot\'s tombstone', true, 'SET #s = :cancelled, done_at = :now, release_until'],
  ['a message held as one item, its cancel write', false, 'SET #s = :cancelled, done_at = :now, #ttl'],
])('cancel of %s with its answer lost: 200 once, one message given back', async (_, packed, update) => {
  const before = await heldUsage(t.namespace);
  const { name, id } = await twoHeld(packed);
  expect((await t.api.call('GET', `/queues/${name}`)).body?.data.message_count).toBe(2);
  lostAnswer(update);
  const cancel = await t.api.call('DELETE', `/messages/${id}/delivery`);
  const unused = t.injector.unused;
  t.injector.clearOneShots();
  expect(unused).toBe(0);
  // A client retrying at once (the 503's Retry-After is 1 s) is answered the same.
  const again = await t.api.call('DELETE', `/messages/${id}/delivery`);
  expect([cancel.status, again.status, (await t.api.call('GET', `/queues/${name}`)).body?.data.message_count]).toEqual([200, 200, 1]);
  expect(await heldUsage(t.namespace)).toEqual({ messages: before.messages + 1, bytes: before.bytes + 4 });
});
