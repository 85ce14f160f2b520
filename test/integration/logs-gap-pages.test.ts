/**
 * The gap pages a read queries (DESIGN.md section 7, "Gaps are absent"): after many failed
 * publishes spilled their gaps to several pages, a read from a position past the first pages
 * queries only the pages that can hold a gap at or after its position (a key condition, so
 * DynamoDB neither reads nor bills the pages before it), on DynamoDB Local with the real publish
 * sinks, and the sweeper's trim still drops pages as `earliest` passes them.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding } from '../fixtures/logs';
import { finishBlock, reserveBlock } from '../../lambda/logs/storage/log-reservations';
import type { LogRef } from '../../lambda/logs/storage/log-heads';
import { allGapPages } from '../../lambda/logs/storage/log-gap-pages';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { sweepStream } from '../../lambda/streams/sweep';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';
import { lostBlock, toOldForm, onSlowClock } from '../fixtures/gap-pages';

jest.setTimeout(180_000);

const DAY = 86_400_000;

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('gpg');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());
afterEach(() => jest.restoreAllMocks());

/** The gap page items the metadata table's Queries return while `fn` runs. */
async function gapPagesRead<T>(fn: () => Promise<T>): Promise<{ result: T; items: number }> {
  const c = ddb();
  const send = c.send.bind(c);
  let items = 0;
  jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    const out = await (send as (x: unknown, ...r: unknown[]) => Promise<any>)(cmd, ...rest);
    if (cmd instanceof QueryCommand && cmd.input.TableName === tableName('meta')) items += (out.Items ?? []).filter((i: { sk: string }) => i.sk.startsWith('GAP')).length;
    return out;
  }) as never);
  const result = await fn();
  jest.restoreAllMocks();
  return { result, items };
}

it('a read from past the first gap pages queries only the pages at or after its position', async () => {
  const { name, topic } = await logs.stream({ partition_count: 1 });
  const { s } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  await logs.publish(topic, { payload: 'first' });
  // 165 failed publishes of 2 messages (positions 1..330): five pages of HEAD_MAX_GAPS gaps, five on the head.
  const perPage = HEAD_MAX_GAPS;
  for (let i = 0; i < 5 * perPage + 5; i++) await lostBlock(ref, 2);
  await logs.publish(topic, { payload: 'fresh' });
  const head = (await headOf(ns.name, s.id))!;
  expect({ spilled: head.sg_n, onHead: Object.keys(head.gaps ?? {}).length }).toEqual({ spilled: 10 * perPage, onHead: 5 });
  // From inside the fourth page: only the fourth and the fifth can hold a gap at or after it.
  const from = 1 + 3 * perPage * 2 + 4;
  const { result, items } = await gapPagesRead(() => logs.read(name, { start_offset: from }));
  expect(result.messages.map((m) => m.payload)).toEqual(['fresh']);
  expect(items).toBe(2);
  // From the start every page is read, and every lost position is absent.
  const all = await gapPagesRead(() => logs.read(name, { consumer_group: 'all' }));
  expect(all.result.messages.map((m) => m.payload)).toEqual(['first', 'fresh']);
  expect(all.items).toBe(5);
});

/** A stream of one partition: one message past retention, then `blocks` lost blocks of 2, then one fresh message. */
async function expiredThenGaps(blocks: number, late?: (ref: LogRef) => Promise<void>) {
  const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const past = Date.now() - DAY - 120_000;
  await appendToStreams({ namespace: ns.name, now: past }, [binding], [published('expired', past)]);
  if (late) await late(ref);
  else for (let i = 0; i < blocks; i++) await lostBlock(ref, 2);
  await logs.publish(topic, { payload: 'fresh' });
  return { name, s, ref };
}

/** Sweeps until `earliest` stops moving; every visit keeps the count exact. */
async function sweepAll(name: string, s: Parameters<typeof sweepStream>[0]) {
  for (let visit = 0; visit < 6; visit++) {
    await sweepStream(s, { now: Date.now() });
    const d = await logs.getStream(name);
    expect(d.message_count).toBe(d.earliest_offset === 0 ? 2 : 1);
  }
}

it('gap pages written before keyed by their lowest end are read until the sweeper converts them, then trimmed', async () => {
  const { name, s, ref } = await expiredThenGaps(2 * HEAD_MAX_GAPS + 3);
  // Rewrite the pages as a log deployed before keeps them: keyed by their lowest last position, the head unmarked.
  await toOldForm(ref);
  // A read from inside the second page still passes every lost position.
  const mid = await gapPagesRead(() => logs.read(name, { start_offset: 2 * HEAD_MAX_GAPS + 10 }));
  expect(mid.result.messages.map((m) => m.payload)).toEqual(['fresh']);
  expect(mid.items).toBe(2);
  expect((await logs.getStream(name)).message_count).toBe(2);
  await sweepAll(name, s);
  const head = (await headOf(ns.name, s.id))!;
  expect({ sg_k: head.sg_k, sg_n: head.sg_n, earliest: head.earliest, pages: (await allGapPages(ref)).length }).toEqual({ sg_k: 1, sg_n: 0, earliest: head.next - 1, pages: 0 });
  expect((await logs.read(name)).messages.map((m) => m.payload)).toEqual(['fresh']);
});

it('a gap settled late makes a wide page: reads pass it, and a trim to a position inside it still drops its gaps below (counts exact)', async () => {
  const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const past = Date.now() - DAY - 120_000;
  await appendToStreams({ namespace: ns.name, now: past }, [binding], [published('expired', past)]);
  // A block reserved first (positions 1, 2) and settled after later ones: its gap joins the head's later gaps.
  // Held in flight on a slow clock, so the machine's load cannot age it dead (test/fixtures/gap-pages.ts).
  await onSlowClock(async () => {
    const early = (await reserveBlock(ref, { count: 2, bytes: 6, lastIndex: { 0: 1 } }))!;
    for (let i = 0; i < HEAD_MAX_GAPS + 4; i++) await lostBlock(ref, 2);
    await logs.publish(topic, { payload: 'mid' });
    expect(await finishBlock(ref, early, { n: 2, b: 6 })).toEqual({ n: 2, b: 6 });
  });
  for (let i = 0; i < HEAD_MAX_GAPS; i++) await lostBlock(ref, 2);
  await logs.publish(topic, { payload: 'fresh' });
  const head = (await headOf(ns.name, s.id))!;
  const mid = 3 + 2 * (HEAD_MAX_GAPS + 4);
  // The page of the late gap spans from position 1 to past 'mid'.
  expect(head.sg_w).toBeGreaterThan(mid);
  expect((await logs.read(name, { start_offset: 1 })).messages.map((m) => m.payload)).toEqual(['mid', 'fresh']);
  expect((await logs.getStream(name)).message_count).toBe(3);
  for (let visit = 0; visit < 4; visit++) {
    await sweepStream(s, { now: Date.now() });
    const d = await logs.getStream(name);
    expect(d.message_count).toBe(d.earliest_offset === 0 ? 3 : 2);
  }
  expect((await headOf(ns.name, s.id))!.earliest).toBe(mid);
  expect((await logs.read(name, { consumer_group: 'after' })).messages.map((m) => m.payload)).toEqual(['mid', 'fresh']);
});
