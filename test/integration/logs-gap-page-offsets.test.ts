/**
 * Gap pages (docs/design/0029-gap-pages-by-highest-end.md). Promise: a read from any offset (inside, between or
 * after pages) returns exactly the 201'd messages, also when a block in flight cuts the readable
 * end inside the pages' span (the Query's upper bound `to - 1 + sg_w`) and when pages overlap
 * (two gaps settled late, each joining a page of later gaps).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, streamBinding } from '../fixtures/logs';
import { finishBlock, reserveBlock } from '../../lambda/logs/storage/log-reservations';
import type { LogRef } from '../../lambda/logs/storage/log-heads';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';
import { lostBlock, onSlowClock } from '../fixtures/gap-pages';

jest.setTimeout(300_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('r16o');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

async function mismatches(name: string, live: [number, string][], lo: number, hi: number) {
  const bad: string[] = [];
  for (let p = lo; p <= hi; p++) {
    const got = (await logs.read(name, { start_offset: p })).messages.map((m) => `${m.offset}:${m.payload}`);
    const want = live.filter(([o]) => o >= p).map(([o, v]) => `${o}:${v}`);
    if (JSON.stringify(got) !== JSON.stringify(want)) bad.push(`from ${p}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
  return bad;
}

it('reads from every offset over overlapping pages, with a block in flight inside their span and after it settles', async () => {
  const { name, topic } = await logs.stream({ partition_count: 1 });
  const { s } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const live: [number, string][] = [];
  const pub = async (p: string) => {
    await logs.publish(topic, { payload: p });
    live.push([(await headOf(ns.name, s.id))!.next - 1, p]);
  };
  await pub('a');
  // early1 and early2 are held in flight on a slow clock, so the machine's load cannot age them
  // dead (test/fixtures/gap-pages.ts).
  const next = await onSlowClock(async () => {
    const early1 = (await reserveBlock(ref, { count: 3, bytes: 9, lastIndex: { 0: 2 } }))!;
    for (let i = 0; i < HEAD_MAX_GAPS + 3; i++) await lostBlock(ref, 2);
    await pub('b');
    const early2 = (await reserveBlock(ref, { count: 2, bytes: 6, lastIndex: { 0: 1 } }))!;
    for (let i = 0; i < HEAD_MAX_GAPS + 5; i++) await lostBlock(ref, 1);
    await pub('c');
    // early1 settled late: its gap joins the head's later gaps; then a page of them.
    expect(await finishBlock(ref, early1, { n: 3, b: 9 })).toEqual({ n: 3, b: 9 });
    for (let i = 0; i < HEAD_MAX_GAPS; i++) await lostBlock(ref, 2);
    await pub('d');
    const upTo = (await headOf(ns.name, s.id))!.next;
    // early2 still in flight: every read stops before it.
    const cut = live.filter(([o]) => o < early2.start);
    expect(await mismatches(name, cut, 0, early2.start)).toEqual([]);
    expect(await finishBlock(ref, early2, { n: 2, b: 6 })).toEqual({ n: 2, b: 6 });
    return upTo;
  });
  for (let i = 0; i < HEAD_MAX_GAPS; i++) await lostBlock(ref, 1);
  await pub('e');
  expect(await mismatches(name, live, 0, next + HEAD_MAX_GAPS + 1)).toEqual([]);
  expect((await logs.getStream(name)).message_count).toBe(live.length);
});
