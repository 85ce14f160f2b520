/**
 * One counter write per API publish call (docs/rate-limits.md, docs/design/0025): the request's
 * count on the namespace's `publish` counter and the call's fan-out writes are one conditional
 * UpdateItem of one item, whose refusal still tells the two 429 categories apart. Counted here
 * from the writes the service sends to the rate-limit counters, with their consumed capacity.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { sleep } from '../../lambda/core/rules/clock';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, dynamoClient, tableName } from '../../lambda/core/storage/client';
import { counterKey } from '../../lambda/limits/storage/rate-limits';
import { windowOf } from '../../lambda/core/rules/rate-limits';

jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Waits for the next minute when fewer than `seconds` are left in this one (fixed windows). */
async function roomInWindow(seconds = 20) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await sleep(left + 50);
}

/** The write calls made to namespace `ns`'s rate counters while `run` runs, with their write units. */
async function rateWrites(ns: string, run: () => Promise<unknown>): Promise<{ calls: number; units: number }> {
  const seen = { calls: 0, units: 0 };
  const name = `rate-writes-${ns}`;
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      const onCounter = JSON.stringify(input.Key ?? {}).includes(`NS#${ns}#RATE#`);
      if (!onCounter || !['UpdateItemCommand', 'PutItemCommand'].includes(String(context.commandName))) return next(args);
      input.ReturnConsumedCapacity = 'TOTAL';
      seen.calls++;
      try {
        const out = await next(args);
        seen.units += (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
        return out;
      } catch (e) {
        // A refused conditional write is billed too (DynamoDB charges the write units it would have used).
        seen.units += 1;
        throw e;
      }
    },
    { step: 'initialize', name },
  );
  try {
    await run();
  } finally {
    dynamoClient().middlewareStack.remove(name);
  }
  return seen;
}

describe('one counter write per API publish call', () => {
  it.each([
    ['the default limits (one counter item)', undefined],
    ['a publish limit split over several items', { publish: 100_000_000, consume: 1000, management: 1000 }],
  ])('a single and a batch publish each write the rate counters once, with %s', async (_, limits) => {
    const ns = await createTestNamespace('rlone', limits);
    const call = client(server.baseUrl, ns.key);
    const { topic } = await queueApi(call).createOnOwnTopic();
    await roomInWindow();
    const single = await rateWrites(ns.name, async () => expect((await call('POST', `/topics/${topic}/messages`, { payload: 'one' })).status).toBe(201));
    const batch = await rateWrites(ns.name, async () =>
      expect((await call('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: 10 }, (_, i) => ({ payload: `m${i}` })) })).status).toBe(201),
    );
    expect({ single, batch }).toEqual({ single: { calls: 1, units: 1 }, batch: { calls: 1, units: 1 } });
  });

  it('tells the two categories apart from the one refused write: publish 429 first, fan-out 429 still counted', async () => {
    const ns = await createTestNamespace('rlone', { publish: 3, consume: 1000, management: 1000, fanout: 4 });
    const call = client(server.baseUrl, ns.key);
    const q = queueApi(call);
    const { name, topic } = await q.createOnOwnTopic();
    await roomInWindow();
    const batch = (n: number) => ({ messages: Array.from({ length: n }, (_, i) => ({ payload: `m${i}` })) });
    // 3 of 4 writes: admitted, 1 request of 3.
    const first = await call('POST', `/topics/${topic}/messages/batch`, batch(3));
    expect([first.status, first.headers['x-ratelimit-remaining']]).toEqual([201, '2']);
    // 2 more writes do not fit: 429 fanout, and the request still used one of the 3.
    const fan = await call('POST', `/topics/${topic}/messages/batch`, batch(2));
    expect([fan.status, fan.body.error?.details?.category, fan.headers['x-ratelimit-remaining']]).toEqual([429, 'fanout', '1']);
    expect(Number(fan.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The last request of the minute, 1 write: fits both.
    const last = await call('POST', `/topics/${topic}/messages`, { payload: 'last' });
    expect([last.status, last.headers['x-ratelimit-remaining']]).toEqual([201, '0']);
    // Over the publish limit: 429 publish (not fanout), with the headers.
    const over = await call('POST', `/topics/${topic}/messages`, { payload: 'over' });
    expect([over.status, over.body.error?.details?.category, over.headers['x-ratelimit-remaining'], over.headers['x-ratelimit-limit']]).toEqual([429, 'publish', '0', '3']);
    expect((await q.get(name)).message_count).toBe(4);
  });

  it('still counts a publish refused before its charge (404, 413, 422) and answers it with the headers', async () => {
    const ns = await createTestNamespace('rlone', { publish: 3, consume: 1000, management: 1000 });
    const call = client(server.baseUrl, ns.key);
    await roomInWindow();
    const missing = await call('POST', '/topics/nobody/listens/messages', { payload: 'x' });
    expect([missing.status, missing.headers['x-ratelimit-remaining']]).toEqual([404, '2']);
    // A payload over 256 KiB: refused by the operation, not the gateway, so counted.
    const large = await call('POST', '/topics/nobody/listens/messages', { payload: 'x'.repeat(256 * 1024 + 1) });
    expect([large.status, large.headers['x-ratelimit-remaining']]).toEqual([413, '1']);
    const invalid = await call('POST', '/topics/nobody/listens/messages', { nope: true });
    expect([invalid.status, invalid.headers['x-ratelimit-remaining']]).toEqual([422, '0']);
    // The limit is reached: even an invalid publish answers 429, as it did when the middleware counted first.
    const refused = await call('POST', '/topics/nobody/listens/messages', { nope: true });
    expect([refused.status, refused.body.error?.details?.category, refused.headers['x-ratelimit-remaining']]).toEqual([429, 'publish', '0']);
  });

  it("counts an Idempotency-Key's replay, which publishes nothing, and refuses it over the limit", async () => {
    const ns = await createTestNamespace('rlone', { publish: 2, consume: 1000, management: 1000 });
    const call = client(server.baseUrl, ns.key);
    const { name, topic } = await queueApi(call).createOnOwnTopic();
    await roomInWindow();
    const send = () => call('POST', `/topics/${topic}/messages`, { payload: 'once' }, { 'Idempotency-Key': `k-${name}` });
    const first = await send();
    const replay = await send();
    expect([first.status, first.headers['x-ratelimit-remaining']]).toEqual([201, '1']);
    expect([replay.status, replay.headers['idempotent-replayed'], replay.headers['x-ratelimit-remaining']]).toEqual([201, 'true', '0']);
    const over = await send();
    expect([over.status, over.body.error?.details?.category]).toEqual([429, 'publish']);
    expect((await queueApi(call).get(name)).message_count).toBe(1);
  });

  it("a split publish limit whose item 0 is full counts on another item and still charges item 0's budget, exactly", async () => {
    // 60,000 a minute: two items of 30,000 (storage/rate-limits.ts counterShards).
    const ns = await createTestNamespace('rlone', { publish: 60_000, consume: 1000, management: 1000, fanout: 100 });
    const call = client(server.baseUrl, ns.key);
    const q = queueApi(call);
    const { name, topic } = await q.createOnOwnTopic();
    await roomInWindow();
    const window = windowOf(Date.now());
    const item = async (i: number) => (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: counterKey({ namespace: ns.name, category: 'publish', window }, i), ConsistentRead: true }))).Item;
    // Item 0 full, as 30,000 publishes would leave it.
    await ddb().send(new UpdateCommand({ TableName: tableName('meta'), Key: counterKey({ namespace: ns.name, category: 'publish', window }), UpdateExpression: 'SET #c = :n', ExpressionAttributeNames: { '#c': 'count' }, ExpressionAttributeValues: { ':n': 30_000 } }));
    for (const n of [3, 2]) expect((await call('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: n }, (_, i) => ({ payload: `m${i}` })) })).status).toBe(201);
    expect(await item(0)).toMatchObject({ count: 30_000, fanout: 5 });
    expect(await item(1)).toMatchObject({ count: 2 });
    expect((await q.get(name)).message_count).toBe(5);
  });
});
