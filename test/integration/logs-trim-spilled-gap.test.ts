/**
 * Checks "the sweeper's trim skips absent messages" and "counts agree with what readers
 * read" (docs/design/0001-log-storage.md).
 *
 * The trim treats as absent only the whole gaps on the head (lambda/logs/sweep.ts: its
 * `absentPositions([head.gaps])`), not those spilled to gap pages. Scenario: a 2-partition stream
 * with 1 day of retention holds an expired message (offset 0); then a publish of two messages
 * fails (offset 1 in partition A cannot be stored) and its offset-2 chunk (partition B) lands after
 * the block was recorded as a whole gap [1, 2] that every reader passes (a put sent in time that
 * lands late, lambda/logs/rules/log-gaps.ts); 32 more failed publishes spill the head's gaps, that
 * one included, to a page (lambda/logs/rules/retention.ts HEAD_MAX_GAPS); then 'fresh' is published. The
 * sweeper's walk meets offset 2, does not know it absent, keeps it and moves `earliest` to 2,
 * inside the spilled gap; the page is keyed by its lowest gap end (2), not below the new earliest,
 * so the gap is not split, and the head still counts its 2 messages in its spilled total.
 *
 * Observed: message_count 0 while every reader reads 'fresh' (and the count stays so until the
 * kept message's retention ends: the trim is skipped until then). Expected: message_count 1.
 *
 * Since gap pages are keyed by their highest end, the trim splits the spilled gap it
 * stops in and the count agrees; the walk still stopped at the absent message (earliest 2, the
 * failed publishes after it kept until that message's retention ends). Now the walk reads the
 * spilled gaps it crosses, passes the absent message, and moves earliest to 'fresh'.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { appendToStreams, streamLogKey } from '../../lambda/streams/storage/stream-log';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { ttlSeconds } from '../../lambda/core/storage/keys';
import { encodeMessage } from '../../lambda/logs/rules/log-chunks';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { logApi, published, streamBinding, unstorable } from '../fixtures/logs';
import { sweepStream } from '../../lambda/streams/sweep';
import { partitionFor } from '../../lambda/streams/rules';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';
import type { Binding } from '../../lambda/core/storage/resources';
import { getHead } from '../../lambda/logs/storage/log-heads';

jest.setTimeout(180_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('r13trim');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

const keyIn = (partition: number) => ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].find((k) => partitionFor(k, 2, 0) === partition)!;

it('a stream: a trim passes a stored message of a spilled whole gap as absent, so message_count and earliest agree with what readers read', async () => {
  const { name } = await logs.stream({ partition_count: 2, retention_days: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const old = Date.now() - 2 * 86_400_000;
  const append = (now: number, messages: ReturnType<typeof published>[]) => appendToStreams({ namespace: ns.name, now }, [binding as Binding], messages);
  await append(old, [published('expired', old, { partition_key: keyIn(0) })]); // offset 0
  // Offsets 1 and 2: the first not stored, the second stored; the whole block a gap.
  const inside = published('inside', Date.now(), { partition_key: keyIn(1) });
  await expect(append(Date.now(), [{ ...unstorable(Date.now()), partition_key: keyIn(0) }, inside])).rejects.toThrow();
  // Its partition-B chunk lands late (a put sent in time, lambda/logs/rules/log-gaps.ts), as it was sent.
  const late = { log: streamLogKey(s.id, 1), first: 2, last: 2, at: Date.now(), p: 1, pc: 0, n: 1, b: inside.size, ttl: ttlSeconds(Date.now() + 86_400_000 * 2), m: [encodeMessage(inside, 2, 7 + 200_000, false)] };
  await ddb().send(new PutCommand({ TableName: tableName('streamLog'), Item: late }));
  for (let i = 0; i < HEAD_MAX_GAPS; i++) await expect(append(Date.now(), [unstorable(Date.now())])).rejects.toThrow();
  await append(Date.now(), [published('fresh', Date.now())]);
  await sweepStream(s, { now: Date.now() });
  await sweepStream(s, { now: Date.now() });
  const d = await logs.getStream(name);
  const messages = (await logs.read(name, { consumer_group: 'all' })).messages;
  const read = messages.map((m) => m.payload);
  const earliest = (await getHead({ namespace: ns.name, id: s.id }))?.earliest;
  expect({ read, message_count: d.message_count, earliest }).toEqual({ read: ['fresh'], message_count: 1, earliest: messages[0]?.offset });
});
