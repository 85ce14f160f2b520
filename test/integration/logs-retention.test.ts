/**
 * Retention of streams and subscriptions on DynamoDB Local (docs/streams-and-subscriptions.md, retention):
 * a consume never returns a message past retention, even before the sweeper has run; the sweeper
 * moves `earliest` only over messages past retention or over the size cap by the log's true size;
 * a publish that fails after reserving positions (or dies before clearing its reservation) leaves
 * a gap, not drifting counters, so nothing inside retention is ever trimmed because of it.
 *
 * Messages "published in the past" go through the real publish sinks with an earlier clock; the
 * sweeper's visit of one log is called directly.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding, subscriptionBinding, unstorable } from '../fixtures/logs';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { appendToSubscriptions } from '../../lambda/subscriptions/storage/subscription-log';
import { reserveBlock } from '../../lambda/logs/storage/log-reservations';
import { sweepStream } from '../../lambda/streams/sweep';
import { sweepSubscription } from '../../lambda/subscriptions/sweep';
import { PENDING_SETTLE_MS } from '../../lambda/logs/rules/log-horizon';
import { scaled } from '../fixtures/time-scale';

jest.setTimeout(60_000);

const DAY = 86_400_000;
const GIB = 1024 ** 3;
let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('ret');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

describe('stream retention by age', () => {
  it('never returns a message past retention, before or after the sweeper, and trims only those', async () => {
    const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 3 });
    const { binding } = await streamBinding(ns.name, name);
    const past = Date.now() - DAY - 60_000;
    await appendToStreams({ namespace: ns.name, now: past }, [binding], ['old-a', 'old-b', 'old-c'].map((p, i) => published(p, past, { partition_key: `k${i}` })));
    await logs.publishBatch(topic, ['new-a', 'new-b'].map((payload, i) => ({ payload, partition_key: `k${i}` })));

    // Not swept yet: the expired messages are still stored, but no consume returns them.
    const before = await logs.read(name);
    expect(before.messages.map((m) => m.payload)).toEqual(['new-a', 'new-b']);
    expect(before.messages.map((m) => m.offset)).toEqual([3, 4]);
    expect((await logs.read(name, { start_offset: 0, partition: 0 })).messages.every((m) => m.payload.startsWith('new'))).toBe(true);
    // A reader positioned in the expired range moves on past it.
    expect((await logs.read(name, { start_offset: 1, max_messages: 1 })).next_offset).toBe(4);

    const { s } = await streamBinding(ns.name, name);
    expect((await sweepStream(s, { now: Date.now() })).trimmed).toBe(3);
    const d = await logs.getStream(name);
    expect([d.earliest_offset, d.latest_offset, d.message_count]).toEqual([3, 5, 2]);
    // A second sweep finds nothing more: the new messages are inside retention.
    expect((await sweepStream(s, { now: Date.now() })).trimmed).toBeUndefined();
    expect((await logs.read(name)).messages.map((m) => m.payload)).toEqual(['new-a', 'new-b']);
  });
});

describe('subscription retention by age', () => {
  it('never returns a message past message_ttl_seconds, even unswept, and moves the cursor past it', async () => {
    // 1 s at the suite's time scale: 'fresh' is published and consumed within it (a CI run on
    // loaded cores took longer, and the message had rightly expired when it was first read).
    const ttl = Math.round(scaled(1000) / 1000);
    const { name, topic } = await logs.subscription({ message_ttl_seconds: ttl });
    await logs.publish(topic, { payload: 'short-lived' });
    await new Promise((r) => setTimeout(r, ttl * 1000 + 100));
    await logs.publish(topic, { payload: 'fresh' });
    expect((await logs.consume(name, { subscriber_id: 'a' })).messages.map((m) => m.payload)).toEqual(['fresh']);
    expect((await logs.consume(name, { subscriber_id: 'a' })).messages).toEqual([]);
  });
});

describe('size limits by the true size', () => {
  const quarter = (tag: string) => `${tag}:${'q'.repeat(250_000 - tag.length - 1)}`;

  it('trims a subscription over max_size_mb down to the cap and not one message more', async () => {
    const { name, topic } = await logs.subscription({ max_size_mb: 1 });
    for (const tag of ['m1', 'm2', 'm3', 'm4', 'm5']) await logs.publish(topic, { payload: quarter(tag) });
    const { s } = await subscriptionBinding(ns.name, name);
    // 5 × 250,000 bytes = 1.25 MB: without the oldest, 1,000,000 ≤ 1 MiB.
    expect((await sweepSubscription(s, { now: Date.now() })).trimmed).toBe(1);
    expect((await sweepSubscription(s, { now: Date.now() })).trimmed).toBeUndefined();
    const got = await logs.consume(name, { subscriber_id: 'late', max_messages: 10 });
    expect(got.messages.map((m) => m.payload.split(':')[0])).toEqual(['m2', 'm3', 'm4', 'm5']);
    expect((await logs.getSubscription(name)).message_count).toBe(4);
  });

  it('counts a failed publish as a gap: nothing inside the cap is trimmed and the counters stay exact', async () => {
    const { name, topic } = await logs.subscription({ max_size_mb: 1 });
    for (const tag of ['m1', 'm2', 'm3', 'm4']) await logs.publish(topic, { payload: quarter(tag) });
    const { s, binding } = await subscriptionBinding(ns.name, name);
    // Reserves 200,000 more bytes (1.2 MB in all), then fails to store the chunk.
    await expect(appendToSubscriptions({ namespace: ns.name, now: Date.now() }, [binding], [unstorable(Date.now())])).rejects.toThrow();
    const head = (await headOf(ns.name, s.id))!;
    expect(head.pending).toEqual({});
    expect(Object.values(head.gaps)).toEqual([{ s: 4, n: 1, b: 200_000 }]);
    expect((await sweepSubscription(s, { now: Date.now() })).trimmed).toBeUndefined();
    expect((await logs.getSubscription(name)).message_count).toBe(4);
    expect((await logs.consume(name, { subscriber_id: 'early', max_messages: 10 })).messages.map((m) => m.payload.split(':')[0])).toEqual(['m1', 'm2', 'm3', 'm4']);
    await logs.publish(topic, { payload: quarter('m6') });
    // Now really over the cap (1.25 MB): exactly the oldest is excluded, at read time already
    // (a consume never returns a message the cap excludes), then by the sweeper.
    const got = await logs.consume(name, { subscriber_id: 'reader', max_messages: 10 });
    expect(got.messages.map((m) => m.payload.split(':')[0])).toEqual(['m2', 'm3', 'm4', 'm6']);
    expect((await sweepSubscription(s, { now: Date.now() })).trimmed).toBe(1);
    expect((await logs.getSubscription(name)).message_count).toBe(4);
  });

  it('trims a stream over max_size_gb by its true size, after a failed publish too', async () => {
    const { name, topic } = await logs.stream({ partition_count: 2 });
    for (const p of ['aaaa', 'bbbb', 'cccc']) await logs.publish(topic, { payload: p, partition_key: p });
    const { s, binding } = await streamBinding(ns.name, name);
    await expect(appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [unstorable(Date.now())])).rejects.toThrow();
    // A cap of 8 bytes: the 12 bytes stored exceed it by one message; the failed 200,000 do not count.
    expect((await sweepStream({ ...s, max_size_gb: 8 / GIB }, { now: Date.now() })).trimmed).toBe(1);
    expect((await logs.read(name)).messages.map((m) => m.payload)).toEqual(['bbbb', 'cccc']);
    const d = await logs.getStream(name);
    expect([d.earliest_offset, d.latest_offset, d.message_count]).toEqual([1, 4, 2]);
  });
});

describe('many failed publishes (an outage)', () => {
  it('settles the dead reservations of an outage, one run of them in one record, and keeps the gaps few, the counters exact', async () => {
    const { name, topic } = await logs.stream();
    await logs.publish(topic, { payload: 'kept' });
    const { s, binding } = await streamBinding(ns.name, name);
    // 130 publishes that failed to store, and 120 that died before clearing their reservation.
    for (let i = 0; i < 130; i++) await expect(appendToStreams({ namespace: ns.name, now: Date.now() }, [binding], [unstorable(Date.now())])).rejects.toThrow();
    for (let i = 0; i < 120; i++) await reserveBlock({ namespace: ns.name, id: s.id }, { count: 1, bytes: 3, lastIndex: { 0: 0 } });
    await logs.publish(topic, { payload: 'after' });
    const later = Date.now() + PENDING_SETTLE_MS + 1000;
    // The 120 dead reservations are consecutive and have no record: one run, settled by one
    // record with one gap (lambda/logs/storage/log-records.ts); the second visit finds nothing to settle.
    expect((await sweepStream(s, { now: later })).settled).toBe(1);
    expect((await sweepStream(s, { now: later })).settled ?? 0).toBe(0);
    const head = (await headOf(ns.name, s.id))!;
    expect(head.pending).toEqual({});
    expect(Object.keys(head.gaps).length).toBeLessThanOrEqual(100);
    // What the head's gaps no longer hold was spilled to gap pages, counted on the head (sg_n).
    expect(Object.values(head.gaps).reduce((n, g) => n + g.n, 0) + (head.sg_n ?? 0)).toBe(250);
    const d = await logs.getStream(name);
    expect([d.earliest_offset, d.latest_offset, d.message_count]).toEqual([0, 252, 2]);
    expect((await logs.read(name)).messages.map((m) => m.payload)).toEqual(['kept', 'after']);
  }, 150_000); // 250 sequential failing publishes: about 50 s on a loaded machine
});

describe('a publish that dies after reserving', () => {
  it('holds readers back until the sweeper settles it, then leaves a gap and exact counters', async () => {
    const { name, topic } = await logs.stream();
    await logs.publish(topic, { payload: 'before' });
    const { s } = await streamBinding(ns.name, name);
    // A publish that reserved offsets 1-2 and died before writing anything.
    await reserveBlock({ namespace: ns.name, id: s.id }, { count: 2, bytes: 10, lastIndex: { 0: 1 } });
    await logs.publish(topic, { payload: 'after' });
    const held = await logs.read(name);
    expect(held.messages.map((m) => m.payload)).toEqual(['before']);
    expect(held.next_offset).toBe(1);

    const stats = await sweepStream(s, { now: Date.now() + PENDING_SETTLE_MS + 1000 });
    expect(stats.settled).toBe(1);
    const head = (await headOf(ns.name, s.id))!;
    expect(head.pending).toEqual({});
    expect(Object.values(head.gaps)).toEqual([{ s: 1, n: 2, b: 10 }]);
    const all = await logs.read(name);
    expect(all.messages.map((m) => [m.offset, m.payload])).toEqual([[0, 'before'], [3, 'after']]);
    expect((await logs.getStream(name)).message_count).toBe(2);
  });
});
