/**
 * Ordered queues (extension, `ordering: "fifo"`) through the real local gateway on DynamoDB Local
 * and fauxqs: an SQS FIFO queue in high-throughput mode; per-key publish order under 5 concurrent
 * consumers with one consumer per key at a time; a publish retried with the same Idempotency-Key
 * stored once; dead-lettering that keeps each key's order; only the queue's own default delay.
 */
import { DeleteQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi, unique, type ConsumedMessage } from '../fixtures/queues';
import { scaled } from '../fixtures/time-scale';
import { getQueue } from '../../lambda/queues/storage/queues';
import { queueUrl, sqsClient } from '../../lambda/core/adapters/sqs';
import { createSqsQueue, sqsQueueCounts } from '../../lambda/queues/storage/service-queues';
import { queuesTask } from '../../lambda/queues/sweep';
import { sweep } from '../../lambda/sweeper/tasks';

/** One sweep of the queue task alone. */
const sweepQueues = (now: number) => sweep(now, () => undefined, { tasks: [queuesTask] });

jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let call: ReturnType<typeof client>;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('qf');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

async function fifoQueue(settings: Record<string, unknown> = {}) {
  const name = unique('f');
  await q.create({ name, topic_filter: `${name}/#`, ordering: 'fifo', ...settings });
  return { name, topic: `${name}/t` };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('an ordered queue', () => {
  it('is an SQS FIFO queue in high-throughput mode, named under the stack prefix within 80 characters', async () => {
    const { name } = await fifoQueue();
    const got = await q.get(name);
    expect(got.ordering).toBe('fifo');
    expect(got).not.toHaveProperty('delay_seconds');
    const sqsName = (await getQueue(ns.name, name))!.sqs_queue;
    expect(sqsName).toMatch(/^msg_[0-9A-Z]{26}\.fifo$/);
    // AWS (and the harsh local SQS) may answer QueueDoesNotExist for a second after CreateQueue.
    await sleep(1100);
    const attrs = await sqsClient().send(new GetQueueAttributesCommand({ QueueUrl: queueUrl(sqsName), AttributeNames: ['All'] }));
    expect(attrs.Attributes).toMatchObject({ FifoQueue: 'true', DeduplicationScope: 'messageGroup', FifoThroughputLimit: 'perMessageGroupId', ContentBasedDeduplication: 'false' });
  });

  it('keeps each partition key in publish order under 5 concurrent consumers, one consumer per key at a time', async () => {
    const { name, topic } = await fifoQueue();
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];
    const perKey = 8;
    // Sequential batches: the publish order of each key is batch by batch, item by item.
    for (let b = 0; b < perKey / 2; b++) {
      await q.publishBatch(topic, keys.flatMap((k) => [0, 1].map((j) => ({ payload: `${k}:${b * 2 + j}`, partition_key: k }))));
    }
    await q.publishBatch(topic, [{ payload: 'nokey:a' }, { payload: 'nokey:b' }]);
    const total = keys.length * perKey + 2;

    const seen: string[] = [];
    const holder = new Map<string, number>();
    const violations: string[] = [];
    const deadline = Date.now() + 45_000;
    await Promise.all(
      Array.from({ length: 5 }, async (_, c) => {
        while (seen.length < total && Date.now() < deadline) {
          const got: ConsumedMessage[] = await q.consume(name, { max_messages: 3, visibility_timeout_seconds: 30, timeout_seconds: 1, consumer_id: `c${c}` });
          for (const m of got) {
            const key = m.payload.split(':')[0];
            if (key !== 'nokey' && holder.has(key) && holder.get(key) !== c) violations.push(`${m.payload} to c${c} while c${holder.get(key)} held ${key}`);
            if (key !== 'nokey') holder.set(key, c);
            seen.push(m.payload);
          }
          await sleep(Math.random() * 20); // "processing"
          // Released before the ack: the next message of the key may come the moment SQS deletes this one.
          for (const m of got) if (holder.get(m.payload.split(':')[0]) === c) holder.delete(m.payload.split(':')[0]);
          if (got.length) expect((await q.ackBatch(name, got.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })))).body.data.acknowledged_count).toBe(got.length);
        }
      }),
    );
    expect(violations).toEqual([]);
    expect(seen.length).toBe(total);
    expect(new Set(seen).size).toBe(total);
    for (const k of keys) expect(seen.filter((p) => p.startsWith(`${k}:`))).toEqual(Array.from({ length: perKey }, (_, i) => `${k}:${i}`));
    expect((await q.get(name)).message_count).toBe(0);
  });

  it('stores a publish retried with the same Idempotency-Key once, where a standard queue stores it twice', async () => {
    const { name: fifo, topic } = await fifoQueue();
    const plain = unique('p');
    await q.create({ name: plain, topic_filter: `${fifo}/#` });
    // The first publish fails after the ordered queue stored the message: the standard queue's
    // SQS queue is gone (behind the service's back), so the publish answers 500 and its
    // Idempotency-Key is not used up.
    const plainSqs = (await getQueue(ns.name, plain))!.sqs_queue;
    await sqsClient().send(new DeleteQueueCommand({ QueueUrl: queueUrl(plainSqs) }));
    const headers = { 'idempotency-key': unique('retry') };
    const body = { messages: [{ payload: 'one', partition_key: 'k' }, { payload: 'two' }] };
    const first = await call('POST', `/topics/${topic}/messages/batch`, body, headers);
    expect(first.status).toBe(500);
    await createSqsQueue({ name: plainSqs, retentionSeconds: 86400, tags: {} });
    const retry = await call('POST', `/topics/${topic}/messages/batch`, body, headers);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();

    const fromFifo = await q.consume(fifo, { max_messages: 10 });
    const more = await q.consume(fifo, { max_messages: 10 });
    expect([...fromFifo, ...more].map((m) => m.payload).sort()).toEqual(['one', 'two']);
    expect((await q.consume(plain, { max_messages: 10 })).map((m) => m.payload).sort()).toEqual(['one', 'two']);
    // A retry within the same key's window after a success is the idempotency record's: replayed.
    const replay = await call('POST', `/topics/${topic}/messages/batch`, body, headers);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('dead-letters each key in order, without holding the key back for the long poll', async () => {
    const dlq = await fifoQueue();
    const { name, topic } = await fifoQueue({ max_retries: 0, dead_letter_topic: dlq.topic });
    await q.publishBatch(topic, ['a1', 'a2', 'a3'].map((payload) => ({ payload, partition_key: 'a' })));
    // Each message is received once and not acked; the next consume finds it out of deliveries,
    // dead-letters it, and returns the key's next message in the same call.
    const firstTimes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const t = Date.now();
      const [m] = await q.consume(name, { visibility_timeout_seconds: 1, timeout_seconds: 5 });
      firstTimes.push(m.payload);
      if (i > 0) expect(Date.now() - t).toBeLessThan(5000); // waited for the visibility (1 s), not to the long poll's end (5 s)
      await sleep(1100);
    }
    expect(firstTimes).toEqual(['a1', 'a2', 'a3']);
    expect(await q.consume(name, { timeout_seconds: 0 })).toEqual([]);
    // The dead-letter queue is ordered too: each message of the key comes once the one before is acked.
    const dead: ConsumedMessage[] = [];
    for (let i = 0; i < 3; i++) {
      const got = await q.consume(dlq.name, { timeout_seconds: 2 });
      dead.push(...got);
      for (const m of got) expect((await q.ack(dlq.name, m.message_id, m.receipt_handle)).status).toBe(200);
    }
    expect(dead.map((m) => [m.payload, m.properties.dlq_source_queue, m.properties.dlq_receive_count])).toEqual([
      ['a1', name, '1'],
      ['a2', name, '1'],
      ['a3', name, '1'],
    ]);
  });

  it('takes only its own default delay: a publish\'s delay_seconds does not change it', async () => {
    const delayed = await fifoQueue({ delay_seconds: 2 });
    const t0 = Date.now();
    await q.publish(delayed.topic, { payload: 'p', partition_key: 'k', delay_seconds: 0 });
    expect(await q.consume(delayed.name, { timeout_seconds: 0 })).toEqual([]);
    const [m] = await q.consume(delayed.name, { timeout_seconds: 10 });
    expect(m.payload).toBe('p');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - t0).toBeLessThanOrEqual(2000 + scaled(2000)); // the first consume is a 1 s long poll

    const plain = await fifoQueue();
    await q.publish(plain.topic, { payload: 'now', delay_seconds: 900 });
    expect((await q.consume(plain.name, { timeout_seconds: 0 })).map((x) => x.payload)).toEqual(['now']);
  });

  it('refuses an unknown ordering with 422 and a non-string one with 400', async () => {
    const bad = await call('POST', '/queues', { name: unique('f'), topic_filter: 'x/#', ordering: 'lifo' });
    expect(bad.status).toBe(422);
    expect(bad.body.error?.details.fields).toEqual([expect.objectContaining({ field: 'ordering' })]);
    expect((await call('POST', '/queues', { name: unique('f'), topic_filter: 'x/#', ordering: true })).status).toBe(400);
  });

  it('goes with its SQS FIFO queue when deleted (the sweeper purges the .fifo name)', async () => {
    const { name } = await fifoQueue();
    const sqsName = (await getQueue(ns.name, name))!.sqs_queue;
    await q.remove(name);
    await sweepQueues(Date.now());
    expect(await sqsQueueCounts(sqsName)).toBeUndefined();
  });
});
