/**
 * Exact counts of stream logs while the sweeper trims (DESIGN.md section 7 `message_count`), on
 * DynamoDB Local with the real publish sinks and the real sweeper task:
 *
 * - a gap spill that lands between the sweeper's read of the head and its move of `earliest` is
 *   not counted twice (the move is conditional on what it read);
 * - past the gap pages one visit takes, `earliest` stops where no gap it leaves spans it;
 * - `consumer_count` and `subscriber_count` count past DynamoDB's 1 MB page, and say when they are
 *   a lower bound (more member records than one count reads).
 */
import { BatchWriteCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding } from '../fixtures/logs';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { spillGaps } from '../../lambda/logs/storage/log-gaps';
import { getHead, type LogRef } from '../../lambda/logs/storage/log-heads';
import { MAX_COUNTED } from '../../lambda/logs/storage/log-members';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { subscriptionBinding } from '../fixtures/logs';
import { sweepStream } from '../../lambda/streams/sweep';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';
import { lostBlock } from '../fixtures/gap-pages';

jest.setTimeout(180_000);

const DAY = 86_400_000;
let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('cnt');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());
afterEach(() => jest.restoreAllMocks());

/** A stream of one partition: one message past retention, then `blocks` lost blocks of `count`, then one fresh message. */
async function streamWithGaps(blocks: number, count: number) {
  const { name, topic } = await logs.stream({ retention_days: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const past = Date.now() - DAY - 120_000;
  await appendToStreams({ namespace: ns.name, now: past }, [binding], [published('expired', past)]);
  for (let i = 0; i < blocks; i++) await lostBlock(ref, count);
  await logs.publish(topic, { payload: 'fresh' });
  return { name, s, ref };
}

describe('exact counts while the sweeper moves earliest', () => {
  it('does not count a gap twice when a spill lands between the read of the head and the move', async () => {
    const { name, s, ref } = await streamWithGaps(1, 2);
    const client = ddb();
    const send = client.send.bind(client);
    let spilled = false;
    jest.spyOn(client, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
      const isMove = (cmd instanceof UpdateCommand && String(cmd.input.ConditionExpression).startsWith('earliest = :from')) || (cmd instanceof TransactWriteCommand && String(cmd.input.TransactItems?.[0]?.Update?.ConditionExpression).startsWith('earliest = :from'));
      if (isMove && !spilled) {
        spilled = true;
        // A publish whose gap was the head's 33rd spills every head gap to a page: here, now.
        expect(await spillGaps(ref, (await getHead(ref))!)).toBe(true);
      }
      return (send as (c: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
    }) as never);
    await sweepStream(s, { now: Date.now() });
    jest.restoreAllMocks();
    expect(spilled).toBe(true);
    // The expired message is trimmed now or at the next visit; the count is exact either way.
    const d = await logs.getStream(name);
    expect(d.message_count).toBe(d.earliest_offset === 0 ? 2 : 1);
    await sweepStream(s, { now: Date.now() });
    const after = await logs.getStream(name);
    expect([after.earliest_offset, after.message_count]).toEqual([3, 1]);
    expect((await logs.read(name)).messages.map((m) => m.payload)).toEqual(['fresh']);
  });

  it('past the gap pages one visit takes, leaves no gap spanning the new earliest (counts stay exact)', async () => {
    // Nine pages of HEAD_MAX_GAPS + 1 gaps each, of blocks of 2: more pages than a visit takes (8).
    const { name, s, ref } = await streamWithGaps(9 * (HEAD_MAX_GAPS + 1) + 2, 2);
    expect((await headOf(ns.name, s.id))!.sg_n).toBeGreaterThan(0);
    let d = await logs.getStream(name);
    expect(d.message_count).toBe(2);
    for (let visit = 0; visit < 3; visit++) {
      await sweepStream(s, { now: Date.now() });
      d = await logs.getStream(name);
      // What the stream holds from earliest on: the fresh message, and the expired one until it is passed.
      expect(d.message_count).toBe(d.earliest_offset === 0 ? 2 : 1);
    }
    expect(d.earliest_offset).toBe((await getHead(ref))!.next - 1);
  });
});

/** `n` member records (`GROUP#` or `CURSOR#`) of a log seen now, each padded to about `bytes`. */
async function members(logId: string, prefix: string, seenAttr: string, n: number, bytes: number): Promise<void> {
  const pad = 'x'.repeat(bytes);
  for (let i = 0; i < n; i += 25) {
    const items = Array.from({ length: Math.min(25, n - i) }, (_, j) => ({ PutRequest: { Item: { ...metaKeys.logMember(ns.name, logId, `${prefix}m${String(i + j).padStart(5, '0')}`), [seenAttr]: Date.now(), pad } } }));
    await ddb().send(new BatchWriteCommand({ RequestItems: { [tableName('meta')]: items } }));
  }
}

describe('member counts', () => {
  it('consumer_count: counts groups past one 1 MB page exactly', async () => {
    const { name } = await logs.stream();
    const { s } = await streamBinding(ns.name, name);
    // 300 records of ~4 KB: 1.2 MB, more than one Query page holds.
    await members(s.id, 'GROUP#', 'seen', 300, 4000);
    const d = await logs.getStream(name);
    expect(d.consumer_count).toBe(300);
    expect(d.consumer_count_is_lower_bound).toBeUndefined();
  });

  it('subscriber_count: says it is a lower bound past the records one count reads', async () => {
    const { name } = await logs.subscription();
    const { s } = await subscriptionBinding(ns.name, name);
    await members(s.id, 'CURSOR#', 'last_seen', MAX_COUNTED + 50, 10);
    const d = await logs.getSubscription(name);
    expect(d.subscriber_count).toBeGreaterThanOrEqual(MAX_COUNTED);
    expect(d.subscriber_count).toBeLessThanOrEqual(MAX_COUNTED + 50);
    expect(d.subscriber_count_is_lower_bound).toBe(true);
  });
});
