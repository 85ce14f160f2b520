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
import { headOf, logApi, streamBinding } from '../fixtures/logs';
import { finishBlock, reserveBlock } from '../../lambda/storage/log-reservations';
import type { LogRef } from '../../lambda/storage/log-heads';
import { ddb, tableName } from '../../lambda/storage/client';
import { HEAD_MAX_GAPS } from '../../lambda/domain/retention';

jest.setTimeout(180_000);

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

/** A publish call of `count` messages that stored none of them: its block is a gap. */
async function lostBlock(ref: LogRef, count: number): Promise<void> {
  const r = (await reserveBlock(ref, { count, bytes: count * 3, lastIndex: { 0: count - 1 } }))!;
  expect(await finishBlock(ref, r, { n: count, b: count * 3 })).toEqual({ n: count, b: count * 3 });
}

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
