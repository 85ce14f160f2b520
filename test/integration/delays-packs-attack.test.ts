/**
 * Attack review of held-message packs (lambda/storage/held-packs.ts) on the local engines
 * (DynamoDB Local and fauxqs, the real tick with a clock moved forward): scenarios where a
 * promise of docs/design/0015-long-delays-held-in-dynamodb.md ("Packs") is expected to hold.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { injectDynamoFault } from '../fixtures/dynamo-calls';
import { tick as runTick } from '../../lambda/schedules/tick';
import { heldUsage } from '../../lambda/storage/held-quota';

jest.setTimeout(120_000);

const tick = async (now: number) => {
  await afterIndexLag();
  return runTick(now);
};

let server: TestServer;
let ns: Awaited<ReturnType<typeof createTestNamespace>>;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('dpa');
  q = queueApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

async function drain(queue: string): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const got = await q.consume(queue, { timeout_seconds: 1, max_messages: 10 });
    if (!got.length) return ids;
    for (const m of got) {
      ids.push(m.message_id);
      await q.ack(queue, m.message_id, m.receipt_handle);
    }
  }
}

const cancel = (id: string) => q.call('DELETE', `/messages/${id}/delivery`);

it('a cancel that failed after marking its slot, retried only after the pack was handed over, still gives its queue room back', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const before = await heldUsage(ns.name);
  const published = await q.publishBatch(topic, ['p', 'q'].map((payload) => ({ payload, delay_seconds: 5 * 3600 })));
  const ids = published.message_ids as string[];
  // The slot's tombstone write is refused every attempt (throttled): the slot is marked on the pack.
  const fault = injectDynamoFault({
    when: (c) => /^Update(Item)?Command$/.test(c.command) && String(c.input.UpdateExpression).startsWith('SET #s = :cancelled, done_at = :now, release_until') && JSON.stringify(c.input.Key).includes(ids[0]),
    mode: 'before',
    times: 100,
    name: 'ThrottlingException',
  });
  fault.arm();
  let first;
  try {
    first = await cancel(ids[0]);
  } finally {
    fault.stop();
  }
  expect(first.status).toBeGreaterThanOrEqual(500);
  // The client retries only after the tick handed the pack over (its other message).
  await tick(Date.parse(published.timestamp) + 5 * 3600_000 + 1000);
  expect(await drain(name)).toEqual([ids[1]]);
  const retry = await cancel(ids[0]);
  expect(retry.status).toBe(200);
  // Nothing is held any more: the cancelled message's room is given back like the delivered one's.
  expect(await heldUsage(ns.name)).toEqual(before);
  expect((await q.get(name)).message_count).toBe(0);
});
