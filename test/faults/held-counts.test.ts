/**
 * A held message's count in its queue (DESIGN.md section 6, `message_count`) under the faults the
 * harsh layer gives (./injector.ts): an answer lost after DynamoDB applied a write, so the SDK sends
 * the same write again; a write that fails every attempt. The quiet-queue reconciliation
 * (lambda/queues/sweep.ts) sets the count to SQS's own plus the queue's held amount, so a held
 * amount one too high or too low stays in the count: it must end once per message, exactly.
 * Also: the tick answers only once every handover it started has ended (Lambda freezes what an
 * invocation leaves running).
 */
import { afterIndexLag, afterNewQueueDelay } from '../fixtures/harsh-waits';
import { tick } from '../../lambda/schedules/tick';
import { getQueue, getQueueCounters, pruneExpiryBuckets, type QueueItem } from '../../lambda/queues/storage/queues';
import { QUIET_MS, RECONCILE_EVERY_MS, reconcileQueue } from '../../lambda/queues/sweep';
import { sqsQueueCounts } from '../../lambda/queues/storage/service-queues';
import { CLAIM_MS } from '../../lambda/schedules/storage/scheduler';
import { RELEASE_LEASE_MS } from '../../lambda/schedules/storage/scheduler-cancel';
import { heldStates } from '../../lambda/schedules/storage/held-packs';
import { cancelDelivery } from '../../lambda/schedules/cancel';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';
import type { OneShot } from './fault-kinds';

jest.setTimeout(90_000);

const t = placedFaults({ namespace: 'fault-held-counts', seed: 33, services: ['dynamodb', 'sqs'] });

afterEach(() => t.injector.clearOneShots());

/** A queue with one held message (due 1000 s after now): the queue, its message id and a tick time it is due within the handover window. */
async function heldMessage(): Promise<{ queue: QueueItem; id: string; at: number }> {
  const name = unique('hc');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const t0 = Date.now();
  const res = await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 1000 });
  expect(res.status).toBe(201);
  await afterIndexLag();
  const queue = (await getQueue(t.namespace, name)) as QueueItem;
  return { queue, id: (res.body as { data: { message_id: string } }).data.message_id, at: t0 + 200_000 };
}

/** The same fault on the queue's counters write that carries held amounts, whether sent as an UpdateItem or in a transaction. */
function onHeldCounters(queue: QueueItem, o: Omit<OneShot, 'service' | 'command' | 'matches'>, what: RegExp, calls = 1) {
  const matches = (input: Record<string, unknown>) => {
    const s = JSON.stringify(input);
    return s.includes(queue.id) && what.test(s);
  };
  for (const command of ['UpdateItemCommand', 'TransactWriteItemsCommand']) for (let i = 0; i < calls; i++) t.injector.failNext({ service: 'dynamodb', command, matches, ...o });
}

const lostAnswer = { kind: { code: 'InternalServerError', status: 500 }, timing: 'after' as const, attempts: 1 };
const failing = { kind: { code: 'InternalServerError', status: 500 }, timing: 'before' as const, attempts: Number.POSITIVE_INFINITY };

async function inSqs(queue: QueueItem) {
  const c = (await sqsQueueCounts(queue.sqs_queue))!;
  return c.visible + c.inFlight + c.delayed;
}

/** The count after a reconciliation once the queue is quiet (its counters last changed before `after`). */
async function reconciledCount(queue: QueueItem, after: number) {
  const at = Math.max(after, Date.now()) + QUIET_MS + RECONCILE_EVERY_MS;
  expect(await reconcileQueue(queue, at)).toBe(true);
  const c = await getQueueCounters(t.namespace, queue.id, at);
  return { count: c.message_count, held: c.held.count };
}

it('counts a held publish once when the answer of its counters write was lost', async () => {
  const name = unique('hc');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const queue = (await getQueue(t.namespace, name)) as QueueItem;
  // The reservation of the held message's room: applied, its answer lost, sent again by the SDK.
  onHeldCounters(queue, lostAnswer, /held_count :hn/);
  expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 1000 })).status).toBe(201);
  expect(t.injector.unused).toBe(1); // one of the two forms was met
  const c = await getQueueCounters(t.namespace, queue.id);
  expect({ count: c.message_count, held: c.held.count }).toEqual({ count: 1, held: 1 });
  await afterNewQueueDelay(); // SQS may not know a queue created a moment ago
  expect(await reconciledCount(queue, Date.now())).toEqual({ count: 1, held: 1 });
});

it('ends the held part once when the answer of its end at the handover was lost', async () => {
  const { queue, at } = await heldMessage();
  onHeldCounters(queue, lostAnswer, /held_count :held_count|held_count :hn/);
  await tick(at);
  expect(t.injector.unused).toBe(1);
  expect(await inSqs(queue)).toBe(1);
  const c = await getQueueCounters(t.namespace, queue.id, at);
  expect({ count: c.message_count, held: c.held.count }).toEqual({ count: 1, held: 0 });
  expect(await reconciledCount(queue, at + 60_000)).toEqual({ count: 1, held: 0 });
});

it('a handover whose held part could not be ended ends it on the retry, without sending the message again', async () => {
  const { queue, id, at } = await heldMessage();
  // Every try of the tick fails (it tries a few times).
  onHeldCounters(queue, failing, /held_count :held_count|held_count :hn/, 5);
  await tick(at).catch(() => undefined);
  t.injector.clearOneShots();
  expect(await inSqs(queue)).toBe(1);
  expect((await getQueueCounters(t.namespace, queue.id, at)).held.count).toBe(1);
  // The retry, once the claim has expired.
  await tick(at + CLAIM_MS + 1000);
  const [item] = await heldStates(t.namespace, [id]);
  expect(item.state).toBe('sent');
  expect(await inSqs(queue)).toBe(1);
  expect(await reconciledCount(queue, at + CLAIM_MS + 60_000)).toEqual({ count: 1, held: 0 });
});

it('a pack whose held part could not be ended ends it on the retry for each of its messages, without sending them again', async () => {
  const name = unique('hp');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const t0 = Date.now();
  // One request, due in the same minute: one pack (lambda/schedules/storage/held-packs.ts).
  const res = await t.api.call('POST', `/topics/${name}/t/messages/batch`, { messages: ['a', 'b', 'c'].map((payload) => ({ payload, delay_seconds: 1000 })) });
  expect(res.status).toBe(201);
  const ids = (res.body as { data: { message_ids: string[] } }).data.message_ids;
  await afterIndexLag();
  const queue = (await getQueue(t.namespace, name)) as QueueItem;
  const at = t0 + 200_000;
  onHeldCounters(queue, failing, /held_count :held_count|held_count :hn/, 5);
  await tick(at).catch(() => undefined);
  t.injector.clearOneShots();
  expect(await inSqs(queue)).toBe(3);
  expect((await getQueueCounters(t.namespace, queue.id, at)).held.count).toBe(3);
  // The retry, once the claim has expired: each message's held part ended once, none sent again.
  await tick(at + CLAIM_MS + 1000);
  expect((await heldStates(t.namespace, ids)).map((i) => i.state)).toEqual(['sent', 'sent', 'sent']);
  expect(await inSqs(queue)).toBe(3);
  expect(await reconciledCount(queue, at + CLAIM_MS + 60_000)).toEqual({ count: 3, held: 0 });
});

it('a tick answers only once every handover it started has ended, also when one of them failed', async () => {
  const failed = await heldMessage();
  const slow = await heldMessage();
  // One message's claim fails (every attempt, never applied) ...
  t.injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', ...failing, matches: (input) => String(input.UpdateExpression).startsWith('SET #s = :handing') && JSON.stringify(input).includes(failed.id) });
  // ... while the other's send to SQS is slow to arrive.
  const slowSend = { service: 'sqs' as const, ms: 3000, matches: (input: Record<string, unknown>) => String(input.QueueUrl ?? '').endsWith(`/${slow.queue.sqs_queue}`) };
  t.injector.addLatency(slowSend);
  try {
    const [ended] = await Promise.allSettled([tick(Math.max(failed.at, slow.at))]);
    expect(ended.status).toBe('rejected');
    // When the invocation ends, Lambda freezes whatever it left running: the slow handover is done by then.
    const [item] = await heldStates(t.namespace, [slow.id]);
    expect(item.state).toBe('sent');
  } finally {
    t.injector.removeLatency(slowSend);
  }
  expect(t.injector.unused).toBe(0);
  expect(await inSqs(slow.queue)).toBe(1);
  await tick(Math.max(failed.at, slow.at) + 1000);
  const [item] = await heldStates(t.namespace, [failed.id]);
  expect(item.state).toBe('sent');
});

it('a cancel whose record of the room given back failed gives it back once, also when retried after its hold', async () => {
  const name = unique('hc');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const queue = (await getQueue(t.namespace, name)) as QueueItem;
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) ids.push(((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 2000 })).body as { data: { message_id: string } }).data.message_id);
  // The room is given back, then its record (the end of the cancel's hold) fails.
  t.injector.failNext({ service: 'dynamodb', command: 'UpdateItemCommand', ...failing, matches: (input) => String(input.UpdateExpression).startsWith('REMOVE release_until') && JSON.stringify(input).includes(ids[0]) });
  const first = await t.api.call('DELETE', `/messages/${ids[0]}/delivery`);
  expect(t.injector.unused).toBe(0);
  // A client's retry once the cancel's hold has expired (or the first answer, if it was 200).
  await cancelDelivery(t.namespace, ids[0], Date.now() + RELEASE_LEASE_MS + 1000);
  expect(first.status === 200 || first.status >= 500).toBe(true);
  const c = await getQueueCounters(t.namespace, queue.id);
  expect({ count: c.message_count, held: c.held.count }).toEqual({ count: 1, held: 1 });
});

it('counts a dozen held publishes at once exactly when the answer of one of their counters writes was lost', async () => {
  const name = unique('hc');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const queue = (await getQueue(t.namespace, name)) as QueueItem;
  // The SDK's retry of that write comes after its backoff, while the others are written.
  onHeldCounters(queue, lostAnswer, /held_count :hn/);
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => t.api.call('POST', `/topics/${name}/t/messages`, { payload: `held ${i}`, delay_seconds: 1000 })));
  expect(answers.map((a) => a.status)).toEqual(Array(12).fill(201));
  expect(t.injector.unused).toBe(1);
  const c = await getQueueCounters(t.namespace, queue.id);
  expect({ count: c.message_count, held: c.held.count }).toEqual({ count: 12, held: 12 });
});

it('a held publish whose expiry bucket write had its answer lost leaves the count once when its TTL ends', async () => {
  const name = unique('hc');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#`, message_ttl_seconds: 1200 })).status).toBe(201);
  const queue = (await getQueue(t.namespace, name)) as QueueItem;
  const t0 = Date.now();
  // The bucket's update (its held part: hn) is applied, its answer lost, and sent again by the SDK.
  onHeldCounters(queue, lostAnswer, /#EXP.*hn :hn|hn :hn.*#EXP/);
  expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'held', delay_seconds: 1000 })).status).toBe(201);
  expect(t.injector.unused).toBe(1);
  // Past its TTL (and the bucket's end), before and after the sweeper's prune.
  const later = t0 + 1200_000 + 120_000;
  for (const prune of [false, true]) {
    if (prune) await pruneExpiryBuckets(t.namespace, queue.id, later);
    const c = await getQueueCounters(t.namespace, queue.id, later);
    expect({ count: c.message_count, held: c.held.count }).toEqual({ count: 0, held: 0 });
  }
});
