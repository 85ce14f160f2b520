/**
 * Gap pages (docs/design/0001-log-storage.md). Promise: after trims, `message_count` and the
 * consumer lag (the `streamLag` gauge of a consume, lambda/handlers/streams.ts) agree with what
 * readers read.
 *
 * Scenario: a block reserved first and settled late (a dead publish) joins a page of later gaps,
 * so the spilled span starts at position 1 (`sg_s`); the sweeper trims past it, dropping that page
 * (earliest moves to 'mid'); the pages left hold only gaps after 'mid'. A consume of one message
 * from earliest reads 'mid' and has one message ('fresh') left to read.
 *
 * Observed before the fix: the lag after it counted every lost position of the pages left as unread (119 for 1, every run):
 * lambda/logs/rules/retention.ts `unreadCount` subtracts spilled gaps only when the whole span
 * `sg_s`..`sg_e` lies after the reader, and the trim drops pages without moving `sg_s`, so once a
 * trim has passed the first spilled gap no reader past it ever has the spilled gaps subtracted,
 * even when every page left lies after it. `message_count` (2) is exact, so the two disagree.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding, subscriptionBinding } from '../fixtures/logs';
import { finishBlock, reserveBlock } from '../../lambda/logs/storage/log-reservations';
import type { LogRef } from '../../lambda/logs/storage/log-heads';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { sweepStream } from '../../lambda/streams/sweep';
import { appendToSubscriptions } from '../../lambda/subscriptions/storage/subscription-log';
import { sweepSubscription } from '../../lambda/subscriptions/sweep';
import { consumeStream } from '../../lambda/streams/operations';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';
import { allGapPages, firstPosition } from '../../lambda/logs/storage/log-gap-pages';
import { lostBlock, onSlowClock } from '../fixtures/gap-pages';

jest.setTimeout(180_000);

const DAY = 86_400_000;

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('r16l');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

it('after a trim past the first spilled gap, the lag of a reader at earliest counts only what is left to read', async () => {
  const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const past = Date.now() - DAY - 120_000;
  await appendToStreams({ namespace: ns.name, now: past }, [binding], [published('expired', past)]);
  // Held in flight on a slow clock, so the machine's load cannot age it dead (test/fixtures/gap-pages.ts).
  await onSlowClock(async () => {
    const early = (await reserveBlock(ref, { count: 2, bytes: 6, lastIndex: { 0: 1 } }))!;
    for (let i = 0; i < HEAD_MAX_GAPS + 4; i++) await lostBlock(ref, 2);
    await logs.publish(topic, { payload: 'mid' });
    expect(await finishBlock(ref, early, { n: 2, b: 6 })).toEqual({ n: 2, b: 6 });
  });
  // Gaps after 'mid', spilled to pages of their own.
  for (let i = 0; i < 2 * HEAD_MAX_GAPS + 2; i++) await lostBlock(ref, 2);
  await logs.publish(topic, { payload: 'fresh' });
  for (let visit = 0; visit < 4; visit++) await sweepStream(s, { now: Date.now() });
  const mid = 3 + 2 * (HEAD_MAX_GAPS + 4);
  const head = (await headOf(ns.name, s.id))!;
  expect(head.earliest).toBe(mid);
  expect((await logs.getStream(name)).message_count).toBe(2);
  const one = await consumeStream(ns.name, name, { consumer_group: 'lag', start_offset: 'earliest', max_messages: 1, timeout_seconds: 0 } as never);
  expect(one.messages.map((m) => m.payload)).toEqual(['mid']);
  // What is left to read: 'fresh' only.
  const rest = await consumeStream(ns.name, name, { consumer_group: 'lag2', start_offset: one.next_offset, max_messages: 1000, timeout_seconds: 0 } as never);
  expect(rest.messages.map((m) => m.payload)).toEqual(['fresh']);
  // The spilled span starts where the pages left do, not where the dropped page did.
  expect(head.sg_s).toBe(Math.min(...(await allGapPages(ref)).map((p) => firstPosition(p.g))));
  expect(head.sg_s).toBeGreaterThan(head.earliest);
  expect(one.lag).toBe(rest.messages.length);
});

// The same without a late gap: 2 pages before 'mid' trimmed, 2 pages (and head gaps) after it left;
// observed lag before the fix 125 for 1 (every run). A reader at the same place before the trim errs high too (the
// span straddles it, as unreadCount documents); after the trim nothing straddles it but `sg_s`.
it('without any late gap: after a trim past the first pages, the lag of a reader at earliest is exact', async () => {
  const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const past = Date.now() - DAY - 120_000;
  await appendToStreams({ namespace: ns.name, now: past }, [binding], [published('expired', past)]);
  for (let i = 0; i < 2 * HEAD_MAX_GAPS + 2; i++) await lostBlock(ref, 2);
  await logs.publish(topic, { payload: 'mid' });
  for (let i = 0; i < 2 * HEAD_MAX_GAPS + 2; i++) await lostBlock(ref, 2);
  await logs.publish(topic, { payload: 'fresh' });
  for (let visit = 0; visit < 4; visit++) await sweepStream(s, { now: Date.now() });
  const head = (await headOf(ns.name, s.id))!;
  expect(head.earliest).toBe(1 + 2 * (2 * HEAD_MAX_GAPS + 2));
  expect((await logs.getStream(name)).message_count).toBe(2);
  const one = await consumeStream(ns.name, name, { consumer_group: 'lag', start_offset: 'earliest', max_messages: 1, timeout_seconds: 0 } as never);
  expect(one.messages.map((m) => m.payload)).toEqual(['mid']);
  expect(one.lag).toBe(1);
});

// Subscriptions trim by the same path (lambda/logs/sweep.ts `visitLog`; they report no lag): the span
// starts at the pages left, and the count and a new subscriber's read agree.
it('a subscription trimmed past its first pages: sg_s starts at the pages left, count and reads agree', async () => {
  const { name, topic } = await logs.subscription({ message_ttl_seconds: 60 });
  const { s, binding } = await subscriptionBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const past = Date.now() - 10 * 60_000;
  await appendToSubscriptions({ namespace: ns.name, now: past }, [binding], [published('expired', past)]);
  for (let i = 0; i < 2 * HEAD_MAX_GAPS + 2; i++) await lostBlock(ref, 2, false);
  await logs.publish(topic, { payload: 'mid' });
  for (let i = 0; i < 2 * HEAD_MAX_GAPS + 2; i++) await lostBlock(ref, 2, false);
  await logs.publish(topic, { payload: 'fresh' });
  for (let visit = 0; visit < 4; visit++) await sweepSubscription(s, { now: Date.now() });
  const head = (await headOf(ns.name, s.id))!;
  expect(head.earliest).toBe(1 + 2 * (2 * HEAD_MAX_GAPS + 2));
  expect(head.sg_s).toBe(Math.min(...(await allGapPages(ref)).map((p) => firstPosition(p.g))));
  expect((await logs.getSubscription(name)).message_count).toBe(2);
  expect((await logs.consume(name, { subscriber_id: 'new', max_messages: 100 })).messages.map((m) => m.payload)).toEqual(['mid', 'fresh']);
});
