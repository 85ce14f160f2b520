/**
 * Streams and subscriptions pay the long-poll slot only when they would wait (lambda/queues/
 * bulkhead.ts), as queues do: the first second runs without a slot, and a consume that finds
 * messages in it writes no slot item; one that found nothing takes a slot for the rest of its wait
 * and goes on from where the first second ended.
 */
import { randomUUID } from 'node:crypto';
import { config, resetConfig } from '../../lambda/core/config';
import { slotPeriodMs } from '../../lambda/queues/bulkhead';
import { namespaceSlotShards } from '../../lambda/queues/rules/long-poll-limits';
import { namespaceSlotsInUse } from '../../lambda/queues/storage/long-poll-slots';
import { ddb } from '../../lambda/core/storage/client';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';

jest.setTimeout(60_000);

const savedPool = process.env.MSG_LONG_POLL_POOL;
let server: TestServer;
beforeAll(async () => {
  process.env.MSG_LONG_POLL_POOL = `first-wait-test-${randomUUID()}`;
  resetConfig();
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
  if (savedPool === undefined) delete process.env.MSG_LONG_POLL_POOL;
  else process.env.MSG_LONG_POLL_POOL = savedPool;
  resetConfig();
});

/** The slot writes (UpdateItems on LONGPOLL items) made while `run` runs. */
async function slotWrites<T>(run: () => Promise<T>): Promise<{ result: T; writes: string[] }> {
  const writes: string[] = [];
  const name = `slot-writes-${randomUUID()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'UpdateCommand' || context.commandName === 'UpdateItemCommand') {
        const pk = String((args.input as { Key?: { pk?: unknown } }).Key?.pk ?? '');
        if (pk.includes('LONGPOLL')) writes.push(pk);
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await run(), writes };
  } finally {
    ddb().middlewareStack.remove(name);
  }
}

const kinds = [
  { kind: 'stream', create: '/streams', consume: '/streams/r/messages/consume', body: { consumer_group: 'g' } },
  { kind: 'subscription', create: '/subscriptions', consume: '/subscriptions/r/messages/consume', body: { subscriber_id: 'sub' } },
] as const;

describe.each(kinds)('$kind consumes', ({ create, consume, body }) => {
  it('a consume that finds messages in its first second writes no slot item', async () => {
    const ns = await createTestNamespace('fw');
    const api = client(server.baseUrl, ns.key);
    expect((await api('POST', create, { name: 'r', topic_filter: 'fw/#' })).status).toBe(201);
    expect((await api('POST', '/topics/fw/x/messages', { payload: 'here' })).status).toBe(201);
    const { result: res, writes } = await slotWrites(() => api('POST', consume, { ...body, timeout_seconds: 30 }));
    expect(res.status).toBe(200);
    expect(res.body.data.messages.map((m: { payload: string }) => m.payload)).toEqual(['here']);
    expect(res.headers['x-long-poll-shortened']).toBeUndefined();
    expect(writes).toEqual([]);
  });

  it('a consume that found nothing in its first second takes a slot for the rest and returns what arrives then', async () => {
    const ns = await createTestNamespace('fw');
    const api = client(server.baseUrl, ns.key);
    expect((await api('POST', create, { name: 'r', topic_filter: 'fw/#' })).status).toBe(201);
    const started = Date.now();
    // From `latest` for the stream: the rest of the wait goes on from the first second's position.
    const waiting = api('POST', consume, { ...body, ...(create === '/streams' ? { start_offset: 'latest' } : {}), timeout_seconds: 10 });
    const end = Date.now() + 8_000;
    // The test namespaces' consume limit (1,000,000 a minute) splits their slots over items.
    const inUse = () => namespaceSlotsInUse(ns.name, namespaceSlotShards(1_000_000, config().longPollLimits.perNamespace), slotPeriodMs());
    while ((await inUse()) !== 1) {
      if (Date.now() > end) throw new Error('no slot taken');
      await new Promise((r) => setTimeout(r, 50));
    }
    // Not before the first, unslotted second ended.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect((await api('POST', '/topics/fw/x/messages', { payload: 'later' })).status).toBe(201);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.data.messages.map((m: { payload: string }) => m.payload)).toEqual(['later']);
    expect(Date.now() - started).toBeLessThan(9_000);
    expect(await inUse()).toBe(0);
  });
});

it('a queue consume of an empty queue waits about its timeout_seconds, though its unslotted first second took a little longer', async () => {
  const ns = await createTestNamespace('fw');
  const api = client(server.baseUrl, ns.key);
  expect((await api('POST', '/queues', { name: 'q', topic_filter: 'fw/#' })).status).toBe(201);
  // The first second (a 1 s long poll and the consume's reads) takes a little over 1 s: the rest
  // must still be waited, not rounded away (three in a row: the first consume of a queue is slower).
  const took: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    const res = await api('POST', '/queues/q/messages/consume', { timeout_seconds: 2 });
    took.push(Date.now() - started);
    expect({ status: res.status, count: res.body.data.count, shortened: res.headers['x-long-poll-shortened'] }).toEqual({ status: 200, count: 0, shortened: undefined });
  }
  expect(took.filter((ms) => ms < 1800)).toEqual([]);
});
