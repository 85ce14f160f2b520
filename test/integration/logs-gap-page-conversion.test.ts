/**
 * Gap pages (docs/design/0029-gap-pages-by-highest-end.md). Promise: the conversion of old-form pages loses no
 * gap and never runs twice harmfully, also racing spills (failed publishes) and other sweepers;
 * afterwards every gap is in exactly one place, `message_count` is exact and reads return exactly
 * the 201'd messages. Failed publishes, sweeper visits and reads run at once on DynamoDB Local.
 */
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, streamBinding } from '../fixtures/logs';
import { finishBlock, reserveBlock } from '../../lambda/logs/storage/log-reservations';
import type { LogRef } from '../../lambda/logs/storage/log-heads';
import { allGapPages } from '../../lambda/logs/storage/log-gap-pages';
import { sweepStream } from '../../lambda/streams/sweep';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';

jest.setTimeout(300_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('r16c');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

async function lostBlock(ref: LogRef, count: number): Promise<void> {
  const r = (await reserveBlock(ref, { count, bytes: count * 3, lastIndex: { 0: count - 1 } }))!;
  await finishBlock(ref, r, { n: count, b: count * 3 });
}

it('conversion racing failed publishes (spills), two sweepers and readers: every gap once, counts and reads exact', async () => {
  const { name, topic } = await logs.stream({ partition_count: 1 });
  const { s } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  await logs.publish(topic, { payload: 'a' });
  for (let i = 0; i < 20 * HEAD_MAX_GAPS + 5; i++) await lostBlock(ref, 2);
  await logs.publish(topic, { payload: 'b' });
  for (const p of await allGapPages(ref)) {
    const lowest = Math.min(...Object.keys(p.g).map(Number));
    await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: { pk: p.pk, sk: p.sk } }));
    await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { pk: p.pk, sk: `GAPS#${String(lowest).padStart(16, '0')}#old${lowest}`, g: p.g } }));
  }
  await ddb().send(new UpdateCommand({ TableName: tableName('meta'), Key: metaKeys.logHead(ns.name, s.id), UpdateExpression: 'REMOVE sg_w, sg_k' }));
  const reads: string[][] = [];
  const failing = (async () => {
    for (let i = 0; i < 3 * HEAD_MAX_GAPS; i++) await lostBlock(ref, 2);
  })();
  // A visit may fail on a conflict with the publishes' transactions on the head (the sweeper's task
  // framework counts it as an error and visits again); what matters is what the visits leave.
  const visit = () => sweepStream(s, { now: Date.now() }).catch(() => undefined);
  const sweeping = (async () => {
    for (let v = 0; v < 6; v++) await Promise.all([visit(), visit()]);
  })();
  const reading = (async () => {
    for (let r = 0; r < 10; r++) reads.push((await logs.read(name, { start_offset: 1 + 40 * r })).messages.map((m) => m.payload));
  })();
  await Promise.all([failing, sweeping, reading]);
  await logs.publish(topic, { payload: 'c' });
  for (let v = 0; v < 3; v++) await sweepStream(s, { now: Date.now() });
  const head = (await headOf(ns.name, s.id))!;
  const pages = await allGapPages(ref);
  const ends = [...Object.keys(head.gaps ?? {}), ...pages.flatMap((p) => Object.keys(p.g))].map(Number).sort((x, y) => x - y);
  // Every failed publish's gap exactly once: 23 * HEAD_MAX_GAPS + 5 blocks of 2.
  expect(ends.length).toBe(23 * HEAD_MAX_GAPS + 5);
  expect(new Set(ends).size).toBe(ends.length);
  expect(pages.every((p) => p.sk.startsWith('GAPE#'))).toBe(true);
  expect(head.sg_k).toBe(1);
  const spilled = pages.reduce((n, p) => n + Object.values(p.g).reduce((m, g) => m + g.n, 0), 0);
  expect(head.sg_n).toBe(spilled);
  expect((await logs.getStream(name)).message_count).toBe(3);
  expect((await logs.read(name, { consumer_group: 'end' })).messages.map((m) => m.payload)).toEqual(['a', 'b', 'c']);
  for (const r of reads) expect(r.filter((p) => p !== 'b')).toEqual([]);
});
