/**
 * The long-poll bulkhead (docs/publishing-and-queues.md): at most N consumers wait per namespace
 * and in total; beyond, a consume answers at once with what is there and says so in
 * X-Long-Poll-Shortened. Same code and limits locally as in AWS (lambda/queues/bulkhead.ts).
 */
import { randomUUID } from 'node:crypto';
import { resetConfig } from '../../lambda/core/config';
import { slotPeriodMs } from '../../lambda/queues/bulkhead';
import { poolSlotsInUse, releaseSlot, slotKeys, slotsInUse, takeSlot, type Slot } from '../../lambda/queues/storage/long-poll-slots';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { scaled } from '../fixtures/time-scale';

jest.setTimeout(60_000);

const saved = { total: process.env.MSG_LONG_POLL_MAX_WAITING, perNs: process.env.MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE, pool: process.env.MSG_LONG_POLL_POOL };
let server: TestServer;
beforeAll(async () => {
  // One waiting consumer per namespace, two in the whole pool: a pool of this file's own, since
  // the test files running beside it share the tables (and the default pool).
  process.env.MSG_LONG_POLL_POOL = `bulkhead-test-${randomUUID()}`;
  process.env.MSG_LONG_POLL_MAX_WAITING = '2';
  process.env.MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE = '1';
  resetConfig();
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
  for (const [k, v] of [['MSG_LONG_POLL_MAX_WAITING', saved.total], ['MSG_LONG_POLL_MAX_WAITING_PER_NAMESPACE', saved.perNs], ['MSG_LONG_POLL_POOL', saved.pool]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetConfig();
});

const liveLeases = (key: { pk: string; sk: string }) => slotsInUse(key, slotPeriodMs());
async function until(ok: () => Promise<boolean>, ms = scaled(10_000)) {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function withQueue(prefix: string): Promise<TestNamespace> {
  const ns = await createTestNamespace(prefix);
  expect((await client(server.baseUrl, ns.key)('POST', '/queues', { name: 'q', topic_filter: 'bh/#' })).status).toBe(201);
  return ns;
}
const consume = (ns: TestNamespace, timeout: number) => {
  const started = Date.now();
  return client(server.baseUrl, ns.key)('POST', '/queues/q/messages/consume', { max_messages: 1, timeout_seconds: timeout }).then((res) => ({ res, ms: Date.now() - started }));
};

it('shortens the wait of a second consumer of a namespace and of a consumer beyond the total, and gives the slots back', async () => {
  const [a, b, c] = await Promise.all([withQueue('bha'), withQueue('bhb'), withQueue('bhc')]);
  // Waits long enough to hold their slots through the other consumes' first, unslotted second,
  // and the stream's create and consume: 10 s at the suite's time scale (a CI run's stream consume
  // came after a1's 10 s had ended on loaded cores, and was rightly not shortened).
  const HOLD_S = Math.min(25, Math.round(scaled(10_000) / 1000));
  const a1 = consume(a, HOLD_S);
  await until(async () => (await liveLeases(slotKeys.namespace(a.name))) === 1);
  const b1 = consume(b, HOLD_S);
  await until(async () => (await liveLeases(slotKeys.namespace(b.name))) === 1);

  const a2 = await consume(a, 5);
  expect(a2.res.status).toBe(200);
  expect(a2.res.headers['x-long-poll-shortened']).toBe('namespace');
  expect(a2.res.body.data.messages).toEqual([]);
  // Shortened: about its first, unslotted second (a full wait is 4 s more); at the suite's time scale.
  expect(a2.ms).toBeLessThan(1_000 + scaled(2_000));

  const c1 = await consume(c, 5);
  expect(c1.res.status).toBe(200);
  expect(c1.res.headers['x-long-poll-shortened']).toBe('total');
  expect(c1.ms).toBeLessThan(1_000 + scaled(2_000));

  // A stream's consume goes through the same bulkhead.
  const s = client(server.baseUrl, a.key);
  expect((await s('POST', '/streams', { name: 's', topic_filter: 'bs/#' })).status).toBe(201);
  const streamed = await s('POST', '/streams/s/messages/consume', { consumer_group: 'g', timeout_seconds: 5 });
  expect(streamed.status).toBe(200);
  expect(streamed.headers['x-long-poll-shortened']).toBe('namespace');

  for (const first of [await a1, await b1]) {
    expect(first.res.status).toBe(200);
    expect(first.res.headers['x-long-poll-shortened']).toBeUndefined();
    // Not shortened (those answer within 3 s alone): the first second runs unslotted and the rest of the
    // wait is a whole number of seconds (SQS WaitTimeSeconds is an integer), so a full 10 s wait
    // answers after 9 to 10 s, or a little less by the engine's timers (8.9 s seen on a loaded CI).
    expect(first.ms).toBeGreaterThanOrEqual((HOLD_S - 2) * 1000);
  }
  expect(await liveLeases(slotKeys.namespace(a.name))).toBe(0);
  // The slots are free again: c waits its whole (short) poll.
  const c2 = await consume(c, 1);
  expect(c2.res.headers['x-long-poll-shortened']).toBeUndefined();
  expect(c2.ms).toBeGreaterThanOrEqual(900);
});

it('a consume that asks for no wait takes no slot and is never shortened', async () => {
  const a = await withQueue('bhz');
  // 10 s: its first second runs unslotted, then it holds a slot for the rest (with 3 s, a loaded
  // CI run's first poll took most of the wait and the slot lived too briefly to be seen).
  const a1 = consume(a, 10);
  await until(async () => (await liveLeases(slotKeys.namespace(a.name))) === 1);
  const now = await consume(a, 0);
  expect(now.res.status).toBe(200);
  expect(now.res.headers['x-long-poll-shortened']).toBeUndefined();
  await a1;
});

it('frees the slot of a consumer whose container died within two periods, and a late give-back changes nothing', async () => {
  const ns = `bhx-${randomUUID().slice(0, 8)}`;
  const limits = { perNamespace: 1, total: 1000, pool: process.env.MSG_LONG_POLL_POOL };
  // 400 ms at the suite's time scale: the third's slot must still be live at the read after its take.
  const PERIOD_MS = scaled(400);
  // Timed from before the dead slot's take (its period starts no earlier): timed after the second
  // take, a loaded machine's slow call ate into the bound (372 ms of 400 in a CI run).
  const takenAt = Date.now();
  const dead = await takeSlot(ns, limits, PERIOD_MS); // its container dies: never given back
  expect(dead.taken).toBe(true);
  expect(await takeSlot(ns, limits, PERIOD_MS)).toEqual({ taken: false, full: 'namespace' });
  const third = await until2(async () => {
    const r = await takeSlot(ns, limits, PERIOD_MS);
    return r.taken ? r.slot : undefined;
  }, 5_000);
  // Not before the dead slot's period and the next one ended (its lease could still be live).
  expect(Date.now() - takenAt).toBeGreaterThanOrEqual(PERIOD_MS);
  expect(await liveSlots(slotKeys.namespace(ns), PERIOD_MS)).toBe(1);
  await releaseSlot(third);
  if (dead.taken) await releaseSlot(dead.slot); // late: its count left at the roll-over
  expect(await liveSlots(slotKeys.namespace(ns), PERIOD_MS)).toBe(0);
  expect(await poolSlotsInUse(limits, PERIOD_MS)).toBe(0);
  expect(await takeSlot(ns, limits, PERIOD_MS)).toMatchObject({ taken: true });
});

it('gives exactly the limit, never more nor fewer, however many containers take slots at once', async () => {
  // On new items (a namespace's first long polls), every time: a take whose update failed because
  // the item did not exist yet, then read it made by another container, once answered "full" with
  // room left (1 slot of 3 given, about 1 round in 3 of these under load).
  for (let round = 0; round < 8; round++) {
    const ns = `bhc-${randomUUID().slice(0, 8)}`;
    const limits = { perNamespace: 3, total: 1000, pool: `${process.env.MSG_LONG_POLL_POOL}-${round}` };
    const period = slotPeriodMs();
    const results = await Promise.all(Array.from({ length: 12 }, () => takeSlot(ns, limits, period)));
    const taken = results.flatMap((r) => (r.taken ? [r.slot] : []));
    expect(taken).toHaveLength(3);
    expect(results.filter((r) => !r.taken).every((r) => !r.taken && r.full === 'namespace')).toBe(true);
    expect(await liveSlots(slotKeys.namespace(ns), period)).toBe(3);
    await Promise.all(taken.map((t: Slot) => releaseSlot(t)));
    expect(await liveSlots(slotKeys.namespace(ns), period)).toBe(0);
  }
});

const liveSlots = (key: { pk: string; sk: string }, periodMs: number) => slotsInUse(key, periodMs);
async function until2<T>(probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('a consume that finds messages in its first, shortest long poll takes no slot', async () => {
  const ns = await withQueue('bhbusy');
  const api = client(server.baseUrl, ns.key);
  await new Promise((r) => setTimeout(r, 1500)); // SQS knows a new queue after about a second
  expect((await api('POST', '/topics/bh/x/messages', { payload: 'here' })).status).toBe(201);
  const writes: string[] = [];
  const name = `slot-writes-${randomUUID()}`;
  const { ddb } = await import('../../lambda/core/storage/client');
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
    const { res } = await consume(ns, 30);
    expect(res.status).toBe(200);
    expect(res.body.data.messages).toHaveLength(1);
    expect(res.headers['x-long-poll-shortened']).toBeUndefined();
  } finally {
    ddb().middlewareStack.remove(name);
  }
  expect(writes).toEqual([]);
});
