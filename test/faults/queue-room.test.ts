/**
 * Queue side of a failed publish: a publish whose SQS send fails after it reserved room in its
 * queue (the counters' message_count and bytes, checked against max_size_mb) gives that room back
 * (lambda/queues/sink.ts), so the counters never drift into a false "queue full".
 */
import { afterNewQueueDelay } from '../fixtures/harsh-waits';
import { getQueue, getQueueCounters } from '../../lambda/queues/storage/queues';
import { QUIET_MS, RECONCILE_EVERY_MS, reconcileQueue } from '../../lambda/queues/sweep';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'fault-queue-room', seed: 15, services: ['sqs'] });

const everyAttempt = Number.POSITIVE_INFINITY;
const unavailable = { code: 'ServiceUnavailable', status: 503 };
const timeout = { code: 'TimeoutError', status: 0 };

/** A queue of `settings` on a topic of its own. */
async function newQueue(settings: Record<string, unknown> = {}) {
  const name = unique('q');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#`, ...settings })).status).toBe(201);
  // The placed faults are for sends to a ready queue, not the new queue's first second.
  await afterNewQueueDelay();
  return { name, topic: `${name}/t` };
}

const messageCount = async (name: string): Promise<number> => (await t.api.call('GET', `/queues/${name}`)).body?.data.message_count;

/** The stored counters (the API shows message_count only, and never below 0). */
async function counters(queueId: string) {
  const c = await getQueueCounters(t.namespace, queueId);
  return { message_count: c.message_count, bytes: c.bytes };
}

async function consume(name: string, visibility = 300) {
  const res = await t.api.call('POST', `/queues/${name}/messages/consume`, { max_messages: 100, timeout_seconds: 0, visibility_timeout_seconds: visibility });
  expect(res.status).toBe(200);
  return res.body?.data.messages as { message_id: string; payload: string; receipt_handle: string; receive_count: number }[];
}

describe('queue room under a failed send', () => {
  it('gives back the room of a publish whose send failed on every attempt, so a queue near its cap still takes a message that fits', async () => {
    // 1 MiB of room; four messages of ~240 KB fit, a fifth would not.
    const overflow = await newQueue();
    const { name, topic } = await newQueue({ max_size_mb: 1, dead_letter_topic: overflow.topic });
    const payload = (c: string) => c.repeat(240_000);
    for (const c of ['a', 'b', 'c']) expect((await t.api.call('POST', `/topics/${topic}/messages`, { payload: payload(c) })).status).toBe(201);
    expect(await messageCount(name)).toBe(3);
    const q = (await getQueue(t.namespace, name))!;
    const before = await counters(q.id);
    expect(before).toEqual({ message_count: 3, bytes: expect.any(Number) });

    t.injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: unavailable, timing: 'before', attempts: everyAttempt });
    const failed = await t.api.call('POST', `/topics/${topic}/messages`, { payload: payload('x') });
    expect(t.injector.unused).toBe(0);
    expect(failed.status).toBe(503);
    expect(failed.body?.error?.code).toBe('SERVICE_UNAVAILABLE');
    expect(await messageCount(name)).toBe(3);
    expect(await counters(q.id)).toEqual(before);

    // The fourth fits only if the failed publish's ~240 KB were given back; otherwise the queue
    // counts itself full and dead-letters it to the overflow queue (the publish still answers 201).
    expect((await t.api.call('POST', `/topics/${topic}/messages`, { payload: payload('d') })).status).toBe(201);
    expect(await messageCount(name)).toBe(4);
    expect(await messageCount(overflow.name)).toBe(0);
    expect((await consume(name)).map((m) => m.payload[0]).sort()).toEqual(['a', 'b', 'c', 'd']);
    // And the queue is really near its cap: a fifth message goes to the overflow queue.
    expect((await t.api.call('POST', `/topics/${topic}/messages`, { payload: payload('e') })).status).toBe(201);
    expect(await messageCount(name)).toBe(4);
    expect(await messageCount(overflow.name)).toBe(1);
  });

  it('a send applied in SQS though every answer was lost: 503 and its room given back; each SDK attempt stored a copy, each copy is delivered and acked, so the count is low until the sweeper reconciles', async () => {
    const { name, topic } = await newQueue();
    const q = (await getQueue(t.namespace, name))!;
    const attemptsBefore = t.injector.stats.attempts['sqs after TimeoutError'] ?? 0;
    t.injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: timeout, timing: 'after', attempts: everyAttempt });
    const failed = await t.api.call('POST', `/topics/${topic}/messages`, { payload: 'lost answer' });
    expect(t.injector.unused).toBe(0);
    expect(failed.status).toBe(503);
    expect(failed.body?.error?.code).toBe('SERVICE_UNAVAILABLE');
    // The reservation is given back in full: the sink cannot tell a lost answer from a refusal.
    expect(await counters(q.id)).toEqual({ message_count: 0, bytes: 0 });
    expect(await messageCount(name)).toBe(0);

    // Every SDK attempt reached fauxqs and stored the message: one SQS copy per attempt (3 with
    // the SDK's default retry strategy), all of one service message.
    const attempts = (t.injector.stats.attempts['sqs after TimeoutError'] ?? 0) - attemptsBefore;
    expect(attempts).toBeGreaterThanOrEqual(2);
    const copies = [...t.injector.sqsCopies].filter(([k]) => k.includes(`/${q.sqs_queue} `));
    expect(copies).toEqual([[expect.any(String), attempts]]);
    const messageId = copies[0][0].split(' ')[1];

    // At least once: the 503 publish is delivered, once per SQS copy. A consume returns one copy
    // and leaves the others hidden for its visibility, a receive spent on each: the k-th copy
    // comes with receive_count k. The ack record of a delivery lives only until that delivery's visibility ends,
    // and the other copies reappear just then: each copy's ack answers 200 and takes one message
    // off the counters.
    const deliveries: number[] = [];
    const acks: number[] = [];
    for (let i = 0; i < 60 && acks.length < attempts; i++) {
      const got = await consume(name, 5);
      expect(got.length).toBeLessThanOrEqual(1);
      for (const m of got) {
        expect({ id: m.message_id, payload: m.payload }).toEqual({ id: messageId, payload: 'lost answer' });
        deliveries.push(m.receive_count);
        acks.push((await t.api.call('POST', `/queues/${name}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle })).status);
      }
      if (!got.length) await new Promise((r) => setTimeout(r, 500));
    }
    expect(deliveries).toEqual(Array.from({ length: attempts }, (_, k) => k + 1));
    expect(acks).toEqual(Array(attempts).fill(200));
    expect(await consume(name)).toEqual([]);

    // So the stored count ends `attempts` below the truth (the API shows 0, never less), and the
    // next messages read 0 until the sweeper reconciles with SQS. Low, never a false "full".
    expect(await counters(q.id)).toMatchObject({ message_count: -attempts });
    expect((await t.api.call('POST', `/topics/${topic}/messages`, { payload: 'next' })).status).toBe(201);
    expect(await messageCount(name)).toBe(0);
    const c = await getQueueCounters(t.namespace, q.id);
    expect(await reconcileQueue(q, c.changed_at + QUIET_MS + RECONCILE_EVERY_MS)).toBe(true);
    expect(await messageCount(name)).toBe(1);
  });
});
