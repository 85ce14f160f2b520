/**
 * Held-message packs (lambda/schedules/storage/held-packs.ts) on the local engines
 * (DynamoDB Local and fauxqs, the real tick with a clock moved forward): scenarios where a
 * promise of docs/design/0015-long-delays-held-in-dynamodb.md ("Packs") is expected to hold.
 */
import { client } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { heldPackTestbed, slotTombstoneOf, tickAt as tick, withFault } from '../fixtures/held-packs';
import { injectDynamoFault, slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { tick as runTick } from '../../lambda/schedules/tick';
import { heldUsage } from '../../lambda/limits/storage/held-quota';
import { getQueue, getQueueCounters, type QueueItem } from '../../lambda/queues/storage/queues';
import { CLAIM_MS } from '../../lambda/schedules/storage/scheduler';
import { refusingOneEntry } from '../fixtures/sqs-refusals';
import { sqsQueueCounts } from '../../lambda/queues/storage/service-queues';
import { QUIET_MS, reconcileQueue } from '../../lambda/queues/sweep';

jest.setTimeout(120_000);

const { server, ns, q, cancel, slotOf, packOf, held, handOver } = heldPackTestbed('dpa');

it('a cancel that failed after marking its slot, retried only after the pack was handed over, still gives its queue room back', async () => {
  const h = await held(['p', 'q'], 5 * 3600);
  const { name, ids, before } = h;
  // The slot's tombstone write is refused every attempt (throttled): the slot is marked on the pack.
  const fault = injectDynamoFault({ when: slotTombstoneOf(ids[0]), mode: 'before', times: 100, name: 'ThrottlingException' });
  const first = await withFault(fault, () => cancel(ids[0]));
  expect(first.status).toBeGreaterThanOrEqual(500);
  // The client retries only after the tick handed the pack over (its other message).
  expect(await handOver(h)).toEqual([ids[1]]);
  const retry = await cancel(ids[0]);
  expect(retry.status).toBe(200);
  // Nothing is held any more: the cancelled message's room is given back like the delivered one's.
  expect(await heldUsage(ns.name)).toEqual(before);
  expect((await q.get(name)).message_count).toBe(0);
});

it('a cancel whose slot is marked just before the pack is claimed answers 200 with its queue room given back, with no fault at all', async () => {
  const h = await held(['r', 's'], 5 * 3600);
  const { name, ids, before } = h;
  // The cancel's second write (the slot's tombstone) lands 4 s late, as under load.
  const slow = slowDynamoAnswers({ when: slotTombstoneOf(ids[0]), ms: 4000, timing: 'before' });
  slow.arm();
  try {
    const answer = cancel(ids[0]);
    // The slot is marked on the pack (its first write); the tick claims and hands the pack over meanwhile.
    for (let i = 0; i < 50 && !(await packOf(ids[0])).cancelled?.size; i++) await new Promise((r) => setTimeout(r, 50));
    await tick(h.due + 1000);
    expect((await answer).status).toBe(200);
  } finally {
    slow.stop();
  }
  expect(slow.hits.length).toBe(1);
  expect(await q.drain(name)).toEqual([ids[1]]);
  expect(await heldUsage(ns.name)).toEqual(before);
  expect((await q.get(name)).message_count).toBe(0);
});

it('a pack whose messages\' TTL in the queue ends before their due time: counted until the TTL, not sent, counts and quota back to zero', async () => {
  const h = await held(['t1', 't2'], 3 * 3600, { message_ttl_seconds: 1200 });
  const { name, before, at: t0 } = h;
  const queue = (await getQueue(ns.name, name)) as QueueItem;
  expect(new Set((await Promise.all(h.ids.map(slotOf))).map((s) => s.pack)).size).toBe(1);
  expect((await getQueueCounters(ns.name, queue.id, t0 + 1000)).message_count).toBe(2);
  expect((await getQueueCounters(ns.name, queue.id, t0 + 1320_000)).message_count).toBe(0);
  expect(await handOver(h)).toEqual([]);
  const after = await getQueueCounters(ns.name, queue.id, t0 + 3 * 3600_000 + 2000);
  expect({ count: after.message_count, bytes: after.bytes, held: after.held.count, heldBytes: after.held.bytes }).toEqual({ count: 0, bytes: 0, held: 0, heldBytes: 0 });
  expect(await heldUsage(ns.name)).toEqual(before);
});

it('two ticks at once hand a pack over once', async () => {
  const { name, ids, due, before } = await held(['a', 'b', 'c'], 2 * 3600);
  await Promise.all([tick(due + 1000), tick(due + 1000)]);
  expect((await q.drain(name)).sort()).toEqual([...ids].sort());
  expect((await q.get(name)).message_count).toBe(0);
  expect(await heldUsage(ns.name)).toEqual(before);
});

it('messages of one request due in different minutes: packed per minute, each cancel and handover right', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const before = await heldUsage(ns.name);
  const published = await q.publishBatch(topic, [0, 0, 300, 300, 600].map((d, k) => ({ payload: `m${k}`, delay_seconds: 3 * 3600 + d })));
  const ids = published.message_ids as string[];
  const slots = await Promise.all(ids.map(slotOf));
  expect(new Set(slots.slice(0, 4).map((s) => s.pack)).size).toBe(2);
  expect((await cancel(ids[1])).status).toBe(200);
  expect((await cancel(ids[2])).status).toBe(200);
  expect((await q.get(name)).message_count).toBe(3);
  await tick(Date.parse(published.timestamp) + 3 * 3600_000 + 600_000 + 1000);
  expect((await q.drain(name)).sort()).toEqual([ids[0], ids[3], ids[4]].sort());
  expect((await q.get(name)).message_count).toBe(0);
  expect(await heldUsage(ns.name)).toEqual(before);
});

it('another namespace cannot cancel a packed message, nor a pack by its id', async () => {
  const other = await createTestNamespace('dpo');
  const q2 = queueApi(client(server.baseUrl, other.key));
  const h = await held(['i', 'j'], 3 * 3600);
  const { name, ids } = h;
  const foreign = await q2.call('DELETE', `/messages/${ids[0]}/delivery`);
  expect([foreign.status, foreign.body.error?.code]).toEqual([404, 'MESSAGE_NOT_FOUND']);
  const packId = (await slotOf(ids[0])).pack.split('#').pop() as string;
  const byPack = await cancel(packId);
  expect(byPack.status).toBe(404);
  expect((await q.get(name)).message_count).toBe(2);
  expect((await handOver(h)).sort()).toEqual([...ids].sort());
});

it('a pack of 12 whose SQS batch send stored all but one message: each message reaches the queue exactly once after the retry', async () => {
  const h = await held(Array.from({ length: 12 }, (_, i) => `s${i}`), 2 * 3600);
  const { name, before } = h;
  const sqsQueue = ((await getQueue(ns.name, name)) as QueueItem).sqs_queue;
  const due = h.due + 1000;
  // SQS refuses the first entry of the first batch (a partial failure: the others are stored).
  const poisoned = await refusingOneEntry(sqsQueue, () => tick(due));
  expect(poisoned.size).toBe(1);
  await tick(due + CLAIM_MS + 1000);
  expect((await q.drain(name)).sort()).toEqual([...h.ids].sort());
  expect((await q.get(name)).message_count).toBe(0);
  expect(await heldUsage(ns.name)).toEqual(before);
});

it('a publish answered 5xx because one of its held units was not stored leaves none of its messages deliverable or counted', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const before = await heldUsage(ns.name);
  // Two messages due in one minute (a pack) and a lone one due five minutes later (one item): the
  // lone one's write is refused, the pack's writes go through.
  const fault = injectDynamoFault({ when: (c) => /^BatchWrite/.test(c.command) && JSON.stringify(c.input).includes('"payload":"lone-5xx"'), mode: 'before', times: 20, name: 'InternalServerError' });
  const res = await withFault(fault, () =>
    q.call('POST', `/topics/${topic}/messages/batch`, {
      messages: [
        { payload: 'pk1', delay_seconds: 8 * 3600 },
        { payload: 'pk2', delay_seconds: 8 * 3600 },
        { payload: 'lone-5xx', delay_seconds: 8 * 3600 + 300 },
      ],
    }),
  );
  expect(fault.hits.length).toBeGreaterThan(0);
  expect(res.status).toBeGreaterThanOrEqual(500);
  // The client cannot know the ids of what was stored (no 201), so cannot cancel them: it retries.
  const seen = { count: (await q.get(name)).message_count, held: (await heldUsage(ns.name)).messages - before.messages };
  await tick(Date.now() + 8 * 3600_000 + 600_000);
  expect({ ...seen, delivered: (await q.drain(name)).length }).toEqual({ count: 0, held: 0, delivered: 0 });
});

it('a tick whose finish of a pack lands after the claim expired, while a second worker takes the pack over: counts exact once every copy is consumed', async () => {
  const h = await held(['w1', 'w2', 'w3'], 2 * 3600);
  const { name, topic, before } = h;
  const queue = (await getQueue(ns.name, name)) as QueueItem;
  const packPk = (await slotOf(h.ids[0])).pack;
  const due = h.due + 1000;
  // The first worker's finish of the pack reaches DynamoDB 4 s late (a paused Lambda), after it sent.
  const slow = slowDynamoAnswers({ when: (c) => /^Update(Item)?Command$/.test(c.command) && String(c.input.UpdateExpression).startsWith('SET #s = :state') && JSON.stringify(c.input.Key).includes(packPk), ms: 4000, timing: 'before' });
  slow.arm();
  try {
    let settled = false;
    const first = tick(due).finally(() => (settled = true));
    // The tick reaches the pack after the index lag and whatever else is due (other files share the
    // tables), which takes seconds on a loaded CI machine: wait for the hit, not for a fixed time.
    for (let i = 0; i < 1200 && !slow.hits.length && !settled; i++) await new Promise((r) => setTimeout(r, 50));
    slow.disarm();
    expect(slow.hits.length).toBe(1);
    // A second worker, whose clock is past the first's claim, takes the pack over and hands it over again.
    await runTick(due + CLAIM_MS + 1000);
    await first;
  } finally {
    slow.stop();
  }
  const copies = await q.drain(name);
  // At least once (docs/schedules.md): duplicates with the same message_id are allowed.
  expect([...new Set(copies)].sort()).toEqual([...h.ids].sort());
  const after = await getQueueCounters(ns.name, queue.id, Date.now());
  const seen = { copies: copies.length, count: after.message_count, held: after.held.count, api: (await q.get(name)).message_count, quota: await heldUsage(ns.name) };
  // What it leads to: one more held message, then the quiet-queue reconciliation (which takes the
  // held amounts as they are) sets the count from SQS's and the held count.
  const next = await q.publish(topic, { payload: 'later', delay_seconds: 3 * 3600 });
  const quiet = Date.parse(next.timestamp) + QUIET_MS + 1000;
  expect(await reconcileQueue((await getQueue(ns.name, name)) as QueueItem, quiet)).toBe(true);
  const later = (await getQueueCounters(ns.name, queue.id, quiet)).message_count;
  const c = (await sqsQueueCounts(queue.sqs_queue)) as { visible: number; inFlight: number; delayed: number };
  const inSqs = c.visible + c.inFlight + c.delayed;
  // The count is what SQS holds plus the one held message.
  expect({ ...seen, later }).toEqual({ copies: copies.length, count: 0, held: 0, api: 0, quota: before, later: inSqs + 1 });
});

it('a pack whose body write is refused: the publish answers 5xx, nothing counted, held or handed over', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const before = await heldUsage(ns.name);
  const fault = injectDynamoFault({ when: (c) => /^BatchWrite/.test(c.command) && JSON.stringify(c.input).includes('"dues"') && JSON.stringify(c.input).includes('"payload":"body-refused"'), mode: 'before', times: 20, name: 'InternalServerError' });
  const res = await withFault(fault, () => q.call('POST', `/topics/${topic}/messages/batch`, { messages: ['body-refused', 'b2'].map((payload) => ({ payload, delay_seconds: 7 * 3600 })) }));
  expect(fault.hits.length).toBeGreaterThan(0);
  expect(res.status).toBeGreaterThanOrEqual(500);
  expect((await q.get(name)).message_count).toBe(0);
  expect(await heldUsage(ns.name)).toEqual(before);
  await tick(Date.now() + 7 * 3600_000 + 60_000);
  expect(await q.drain(name)).toEqual([]);
});
