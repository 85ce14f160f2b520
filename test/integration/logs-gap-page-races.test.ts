/**
 * Gap pages (docs/design/0029-gap-pages-by-highest-end.md). Promise: a read racing a conversion of old-form pages
 * or a trim still passes every lost position and returns exactly the 201'd messages. The race is
 * made deterministic: the conversion (or a sweeper visit) runs inside the reader's own page Query,
 * before it is sent or after it answered.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding } from '../fixtures/logs';
import { finishBlock, reserveBlock } from '../../lambda/logs/storage/log-reservations';
import { getHead, type LogRef } from '../../lambda/logs/storage/log-heads';
import { convertOldPages } from '../../lambda/logs/storage/log-gap-pages';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { sweepStream } from '../../lambda/streams/sweep';
import { ddb } from '../../lambda/core/storage/client';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';
import { lostBlock, toOldForm, onSlowClock } from '../fixtures/gap-pages';

jest.setTimeout(300_000);
const DAY = 86_400_000;

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('r16r');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());
afterEach(() => jest.restoreAllMocks());

/** Runs `act` once, at the first gap-page Query of the prefix `lo` sent after this call: before it is sent, or after it answered. */
function onPageQuery(lo: string, when: 'before' | 'after', act: () => Promise<unknown>) {
  const c = ddb();
  const send = c.send.bind(c) as (x: unknown, ...r: unknown[]) => Promise<any>;
  let done = false;
  jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    const hit = !done && cmd instanceof QueryCommand && String(cmd.input.ExpressionAttributeValues?.[':lo'] ?? '').startsWith(lo);
    if (hit) done = true;
    if (hit && when === 'before') await act();
    const out = await send(cmd, ...rest);
    if (hit && when === 'after') await act();
    return out;
  }) as never);
  return () => done;
}

/** One partition: an expired message, a late-settled wide gap, 3 pages and some head gaps, 'mid', more gaps, 'fresh'. */
async function layout() {
  const { name, topic } = await logs.stream({ retention_days: 1, partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const past = Date.now() - DAY - 120_000;
  await appendToStreams({ namespace: ns.name, now: past }, [binding], [published('expired', past)]);
  // Held in flight on a slow clock, so the machine's load cannot age it dead (test/fixtures/gap-pages.ts).
  await onSlowClock(async () => {
    const early = (await reserveBlock(ref, { count: 2, bytes: 6, lastIndex: { 0: 1 } }))!;
    for (let i = 0; i < 2 * HEAD_MAX_GAPS + 4; i++) await lostBlock(ref, 2);
    await logs.publish(topic, { payload: 'mid' });
    expect(await finishBlock(ref, early, { n: 2, b: 6 })).toEqual({ n: 2, b: 6 });
  });
  for (let i = 0; i < HEAD_MAX_GAPS + 3; i++) await lostBlock(ref, 2);
  await logs.publish(topic, { payload: 'fresh' });
  return { name, s, ref };
}

for (const when of ['before', 'after'] as const) {
  it(`a read of an unmarked head with the conversion ${when} its old-form Query passes every lost position`, async () => {
    const { name, ref } = await layout();
    await toOldForm(ref);
    const fired = onPageQuery('GAPS#', when, async () => {
      jest.restoreAllMocks();
      expect(await convertOldPages(ref, (await getHead(ref))!)).toBe(true);
    });
    const got = await logs.read(name, { start_offset: 1 });
    expect(fired()).toBe(true);
    expect((await headOf(ref.namespace, ref.id))!.sg_k).toBe(1);
    expect(got.messages.map((m) => m.payload)).toEqual(['mid', 'fresh']);
  });

  it(`a read with a sweeper's trim ${when} its gap-page Query returns exactly the 201'd messages, and the count agrees`, async () => {
    const { name, s, ref } = await layout();
    const fired = onPageQuery('GAPE#', when, async () => {
      jest.restoreAllMocks();
      for (let v = 0; v < 3; v++) await sweepStream(s, { now: Date.now() });
    });
    const got = await logs.read(name, { start_offset: 0 });
    expect(fired()).toBe(true);
    expect((await headOf(ref.namespace, ref.id))!.earliest).toBeGreaterThan(0);
    expect(got.messages.map((m) => m.payload)).toEqual(['mid', 'fresh']);
    expect((await logs.getStream(name)).message_count).toBe(2);
    expect((await logs.read(name, { consumer_group: 'later' })).messages.map((m) => m.payload)).toEqual(['mid', 'fresh']);
  });
}
