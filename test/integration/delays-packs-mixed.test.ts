/**
 * Held-message packs (docs/design/0032-held-message-packs.md): one publish request whose messages go to a queue and, by a
 * webhook's condition, some of them to a webhook too (so two packs of different targets), with a
 * cancel of a message of the mixed pack. Local engines and the local webhook delivery; the tick's
 * clock is moved to 3 s before the due time so the delivery job waits out the rest in SQS.
 */
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { slotsOf, tickAt } from '../fixtures/held-packs';

jest.setTimeout(90_000);

const bed = webhookTestbed('dpm');

it('a request packed per targets (queue + webhook, queue only): each message reaches each of its targets once, the cancelled one none', async () => {
  const recv = await bed.receivers.start();
  const topic = unique('t');
  await createWebhook(bed.call, { url: recv.url, topic_filter: topic, condition: { field: 'properties.kind', operator: '==', value: 'hook' } });
  const q = queueApi(bed.call);
  const queue = unique('q');
  await q.create({ name: queue, topic_filter: topic });
  const deliverAt = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 2 * 3600_000 + 10_000).toISOString();
  const kinds = ['hook', 'other', 'hook', 'other', 'hook'];
  const res = await bed.call('POST', `/topics/${topic}/messages/batch`, { messages: kinds.map((kind, i) => ({ payload: `m${i}`, properties: { kind }, deliver_at: deliverAt })) });
  expect(res.status).toBe(201);
  const ids = res.body.data.message_ids as string[];
  const slots = await slotsOf(bed.ns.name, ids);
  const packOf = new Map(slots.map((s) => [s.message_id, s.pack]));
  expect(new Set(slots.map((s) => s.pack)).size).toBe(2);
  expect(packOf.get(ids[0])).toBe(packOf.get(ids[2]));
  expect(packOf.get(ids[1])).not.toBe(packOf.get(ids[0]));
  expect((await q.get(queue)).message_count).toBe(5);
  // One message of the mixed pack is cancelled.
  expect((await bed.call('DELETE', `/messages/${ids[2]}/delivery`)).status).toBe(200);
  expect((await q.get(queue)).message_count).toBe(4);
  await tickAt(Date.parse(deliverAt) - 3000);
  const got = await recv.waitFor(2, 30_000);
  await new Promise((r) => setTimeout(r, 3000));
  expect(recv.requests.map((r) => JSON.parse(r.body.toString('utf8')).message_id).sort()).toEqual([ids[0], ids[4]].sort());
  expect(got.length).toBe(2);
  const inQueue: string[] = [];
  for (let i = 0; i < 20 && inQueue.length < 4; i++) {
    const batch = await q.consume(queue, { timeout_seconds: 1, max_messages: 10 });
    for (const m of batch) {
      inQueue.push(m.message_id);
      await q.ack(queue, m.message_id, m.receipt_handle);
    }
  }
  expect(inQueue.sort()).toEqual([ids[0], ids[1], ids[3], ids[4]].sort());
  expect((await q.consume(queue, { timeout_seconds: 1, max_messages: 10 })).length).toBe(0);
  expect((await q.get(queue)).message_count).toBe(0);
});
