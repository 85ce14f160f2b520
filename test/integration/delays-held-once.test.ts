/**
 * The end of a held message's held part in a queue applies once per message and queue
 * (lambda/schedules/held-ends.ts, `held_open` on the state item), however many handovers of it
 * end it: here two ends of one packed message's part race as two workers' would (DynamoDB Local).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { endHeldTogether } from '../../lambda/schedules/held-ends';
import { slotEntry, type PackItem, type SlotItem } from '../../lambda/schedules/storage/held-packs';
import { schedulerKeys } from '../../lambda/core/storage/keys';
import { getQueue, getQueueCounters, queueBindingSettings, type QueueItem } from '../../lambda/queues/storage/queues';
import { getSchedulerItems } from '../../lambda/schedules/storage/scheduler';
import type { PublishedMessage } from '../../lambda/core/rules/message';

jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

it('two ends of one packed message\'s held part at once: the held count drops by one, the other slot stays open', async () => {
  const ns = await createTestNamespace('dho');
  const q = queueApi(client(server.baseUrl, ns.key));
  const { name, topic } = await q.createOnOwnTopic();
  const queue = (await getQueue(ns.name, name)) as QueueItem;
  const published = await q.publishBatch(topic, ['o1', 'o2'].map((payload) => ({ payload, delay_seconds: 2 * 3600 })));
  const [slot] = await getSchedulerItems<SlotItem>([schedulerKeys.delayed(ns.name, published.message_ids[0])]);
  const stateKey = { pk: slot.pack, sk: schedulerKeys.delayed('', '').sk };
  const [body] = await getSchedulerItems<{ messages: PublishedMessage[] }>([{ pk: slot.pack, sk: schedulerKeys.delayedBody('', '').sk }]);
  const entry = slotEntry(slot.slot, '0'); // the queue is the pack's first target
  expect((await getSchedulerItems<PackItem & { held_open?: Set<string> }>([stateKey]))[0].held_open?.has(entry)).toBe(true);
  const at = Date.now();
  expect((await getQueueCounters(ns.name, queue.id, at)).held.count).toBe(2);
  const end = () => endHeldTogether(ns.name, queue.id, [{ message: body.messages[slot.slot], mark: { ...stateKey, entry } }], queueBindingSettings(queue).message_ttl_seconds, at);
  await Promise.all([end(), end()]);
  await end();
  expect((await getQueueCounters(ns.name, queue.id, at)).held.count).toBe(1);
  const open = (await getSchedulerItems<{ held_open?: Set<string> }>([stateKey]))[0].held_open;
  expect([...(open ?? [])]).toEqual([slotEntry(1 - slot.slot, '0')]);
});
