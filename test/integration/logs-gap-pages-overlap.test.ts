/**
 * Gap pages keyed by their highest end (docs/design/0029-gap-pages-by-highest-end.md). Promise: every reader reads
 * exactly the 201'd messages, none inside a gap, whatever the pages' layout (overlapping pages, a
 * wide page of a gap settled late, more pages than a visit takes), before and after the sweeper's
 * conversion of old-form pages (two sweepers at once) and after each trim; `message_count` agrees.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding } from '../fixtures/logs';
import { finishBlock, reserveBlock } from '../../lambda/logs/storage/log-reservations';
import type { LogRef } from '../../lambda/logs/storage/log-heads';
import { allGapPages } from '../../lambda/logs/storage/log-gap-pages';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { sweepStream } from '../../lambda/streams/sweep';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';
import { lostBlock, toOldForm, onSlowClock } from '../fixtures/gap-pages';

jest.setTimeout(300_000);

const DAY = 86_400_000;

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('r16');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/** Reads from every offset in [lo, hi] and compares with the live messages at or after it. */
async function readsFromEverywhere(name: string, live: Map<number, string>, lo: number, hi: number, step = 1) {
  const bad: string[] = [];
  for (let p = lo; p <= hi; p += step) {
    const got = (await logs.read(name, { start_offset: p })).messages.map((m) => `${m.offset}:${m.payload}`);
    const want = [...live].filter(([o]) => o >= p).map(([o, v]) => `${o}:${v}`);
    if (JSON.stringify(got) !== JSON.stringify(want)) bad.push(`from ${p}: ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
  }
  return bad;
}

it('overlapping old-form pages (a late wide gap, more than a visit takes): reads from every offset, two sweepers converting at once, then trims', async () => {
  const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const past = Date.now() - DAY - 120_000;
  await appendToStreams({ namespace: ns.name, now: past }, [binding], [published('expired', past)]);
  // Held in flight on a slow clock, so the machine's load cannot age it dead (test/fixtures/gap-pages.ts).
  await onSlowClock(async () => {
    const early = (await reserveBlock(ref, { count: 2, bytes: 6, lastIndex: { 0: 1 } }))!;
    for (let i = 0; i < 9 * HEAD_MAX_GAPS + 4; i++) await lostBlock(ref, 2);
    await logs.publish(topic, { payload: 'mid' });
    expect(await finishBlock(ref, early, { n: 2, b: 6 })).toEqual({ n: 2, b: 6 });
  });
  for (let i = 0; i < HEAD_MAX_GAPS; i++) await lostBlock(ref, 2);
  await logs.publish(topic, { payload: 'fresh' });
  const head = (await headOf(ns.name, s.id))!;
  const mid = 3 + 2 * (9 * HEAD_MAX_GAPS + 4);
  const live = new Map([[mid, 'mid'], [head.next - 1, 'fresh']]);
  const gapsBefore = (await allGapPages(ref)).flatMap((p) => Object.keys(p.g)).sort();
  await toOldForm(ref);
  expect(await readsFromEverywhere(name, live, 0, head.next, 7)).toEqual([]);
  expect((await logs.getStream(name)).message_count).toBe(3);
  // Two sweepers at once: one converts, the other loses the race or finds nothing to do.
  await Promise.all([sweepStream(s, { now: Date.now() }), sweepStream(s, { now: Date.now() })]);
  const after = (await headOf(ns.name, s.id))!;
  if (after.earliest === 0) {
    expect((await allGapPages(ref)).flatMap((p) => Object.keys(p.g)).sort()).toEqual(gapsBefore);
  }
  for (let visit = 0; visit < 8; visit++) {
    await sweepStream(s, { now: Date.now() });
    const h = (await headOf(ns.name, s.id))!;
    const d = await logs.getStream(name);
    const readable = [...live].filter(([o]) => o >= h.earliest);
    expect({ visit, count: d.message_count }).toEqual({ visit, count: readable.length + (h.earliest === 0 ? 1 : 0) });
    expect(await readsFromEverywhere(name, live, h.earliest, head.next, 13)).toEqual([]);
  }
  expect((await headOf(ns.name, s.id))!.earliest).toBe(mid);
});
