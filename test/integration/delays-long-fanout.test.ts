/**
 * The tick that scales out (DynamoDB Local and fauxqs, the clock moved ahead): a tick bounded by
 * its deadline leaves nothing claimed after it, and shard workers running at once over the same
 * shards hand each message over once.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { getDelayedItems } from '../../lambda/storage/scheduler';
import { schedulerKeys } from '../../lambda/storage/keys';
import { handOverDue } from '../../lambda/schedules/delayed';
import { publishMessages } from '../../lambda/publishing/publish';

jest.setTimeout(300_000);

let server: TestServer;
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('dlf');
  q = queueApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/** Every message id the queue holds, each consumed once and acked. */
async function drain(queue: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const got = await q.consume(queue, { timeout_seconds: 1, max_messages: 10 });
    if (!got.length) return ids;
    await Promise.all(got.map((m) => q.ack(queue, m.message_id, m.receipt_handle)));
    ids.push(...got.map((m) => m.message_id));
  }
}

/** Holds `count` messages on a queue of its own, all due `delaySeconds` from now (batches of 100). */
async function hold(count: number, delaySeconds: number) {
  const { name, topic } = await q.createOnOwnTopic();
  const ids: string[] = [];
  let timestamp = '';
  for (let i = 0; i < count; i += 100) {
    const batch = await q.publishBatch(topic, Array.from({ length: Math.min(100, count - i) }, (_, k) => ({ payload: `m${i + k}`, delay_seconds: delaySeconds })));
    ids.push(...batch.message_ids);
    timestamp = batch.timestamp;
  }
  await afterIndexLag();
  return { name, ids, due: Date.parse(timestamp) + delaySeconds * 1000 };
}

/** How many of `ids` (this namespace's held messages) are in `state` (their state items, read strongly consistently). */
async function inState(ids: string[], state: string): Promise<number> {
  const items = await getDelayedItems(ids.map((id) => schedulerKeys.delayed(ns.name, id)));
  return items.filter((i) => i.state === state).length;
}

it('a tick past its deadline claims only what it can finish by then, leaves nothing claimed, and the next ticks hand the rest over once', async () => {
  const { name, ids, due } = await hold(2000, 2 * 3600);
  const at = due + 1000;
  // A deadline far shorter than the work: the tick must stop claiming in time, not claim every
  // shard's page at once and finish them long after (a Lambda timeout would cut those off).
  const first = await handOverDue(at, { deadline: Date.now() + 3000, republish: publishMessages });
  expect(first.handed).toBeLessThan(ids.length);
  expect(first.finishedAfterDeadline).toBeLessThanOrEqual(Math.max(100, first.handed / 4));
  expect(await inState(ids, 'handing')).toBe(0);
  for (let tick = 0; tick < 20 && (await inState(ids, 'pending')) > 0; tick++) await handOverDue(at, { republish: publishMessages });
  const got = await drain(name);
  expect(got.length).toBe(ids.length);
  expect(new Set(got)).toEqual(new Set(ids));
});
