/**
 * A long poll waits with eventually consistent polls and reads the head strongly (with the
 * reservation records' Query) only when a poll shows news (lambda/logs/storage/log-waits.ts `waitForNews`).
 *
 * Since reservations moved off the head into records, the head item alone no longer holds the
 * blocks in flight: its horizon is its `next`, past the true one, while any block is in flight.
 * Before the fix every poll then answered "news", and the long poll read the head strongly and
 * queried the records every poll interval (200 ms to 1 s), for as long as the block was in flight
 * (up to lambda/logs/rules/log-horizon.ts `PENDING_SETTLE_MS` for a dead one): a review's repro, seen
 * failing with 14 strong reads and 14 Queries in one wait (the control: 2 and 0).
 *
 * The bulkhead (lambda/queues/bulkhead.ts `withLongPollSlot`) runs a long poll as a first
 * second and then the rest, each starting with its strong read: 2 strong reads, one Query each at
 * most, is what an idle wait costs.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { namespaceTestbed } from '../fixtures/testbed';
import { logApi, streamBinding, subscriptionBinding } from '../fixtures/logs';
import { ddb } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { finishBlock, reserveBlock } from '../../lambda/logs/storage/log-reservations';

jest.setTimeout(60_000);

const { ns, call } = namespaceTestbed('pollreads');
const logs = logApi(call);
afterEach(() => jest.restoreAllMocks());

/** Counts the strong reads of the log's partition key (head, group, cursor) and the records' Queries. */
function countReads(id: string) {
  const c = ddb();
  const send = c.send.bind(c);
  const n = { strong: 0, recordQueries: 0 };
  jest.spyOn(c, 'send').mockImplementation(((cmd: unknown, ...rest: unknown[]) => {
    if (cmd instanceof GetCommand && cmd.input.ConsistentRead && String(cmd.input.Key?.pk).includes(id)) n.strong++;
    if (cmd instanceof QueryCommand && String(cmd.input.ExpressionAttributeValues?.[':pk']).includes(id) && cmd.input.ExpressionAttributeValues?.[':lo'] !== undefined) n.recordQueries++;
    return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
  }) as never);
  return n;
}

it.each([
  ['nothing in flight', false],
  ['a block in flight', true],
])('a stream long poll waiting with %s does not read the head strongly at every poll', async (_, inFlight) => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { s } = await streamBinding(ns.name, name);
  // A publish that reserved and is still writing (or died): a block in flight at offset 0, no record.
  if (inFlight) await reserveBlock({ namespace: ns.name, id: s.id }, { count: 1, bytes: 2, lastIndex: { 0: 0 } });
  // The head was just written: wait out the eventually consistent reads' lag (local/aws-harsh),
  // during which a poll that shows no head checks it strongly, as in AWS.
  await afterIndexLag();
  const n = countReads(s.id);
  const read = await logs.read(name, { timeout_seconds: 4 });
  expect(read.messages).toEqual([]);
  // Nothing new happened during the wait: one strong read per run of the bulkhead, no more.
  expect({ strong: n.strong, recordQueries: n.recordQueries <= n.strong }).toEqual({ strong: 2, recordQueries: true });
});

it.each([
  ['nothing in flight', false],
  ['a block in flight', true],
])('a subscription long poll waiting with %s does not read the head strongly at every poll', async (_, inFlight) => {
  const { name } = await logs.subscription();
  const { s } = await subscriptionBinding(ns.name, name);
  if (inFlight) await reserveBlock({ namespace: ns.name, id: s.id }, { count: 1, bytes: 2 });
  // The head was just written: wait out the eventually consistent reads' lag (local/aws-harsh),
  // during which a poll that shows no head checks it strongly, as in AWS.
  await afterIndexLag();
  const n = countReads(s.id);
  const got = await logs.consume(name, { subscriber_id: 'w', timeout_seconds: 4 });
  expect(got.messages).toEqual([]);
  // Per run of the bulkhead: the head (with the records' Query) and the cursor, strongly, once each.
  expect({ strong: n.strong, recordQueries: n.recordQueries <= 2 }).toEqual({ strong: 4, recordQueries: true });
});

it('a long poll held back by a block in flight returns the message after it once the block is recorded, woken by its polls alone', async () => {
  const { name, topic } = await logs.stream({ partition_count: 1 });
  const { s } = await streamBinding(ns.name, name);
  const ref = { namespace: ns.name, id: s.id };
  const r = await reserveBlock(ref, { count: 1, bytes: 2, lastIndex: { 0: 0 } });
  const reading = logs.read(name, { timeout_seconds: 20 });
  await new Promise((res) => setTimeout(res, 1_500));
  await logs.publish(topic, { payload: 'behind' }); // offset 1: behind the block in flight, not readable yet
  await new Promise((res) => setTimeout(res, 1_500));
  // Block 0's publish ends having stored nothing: its record (and gap) releases offset 1. Written
  // here, not by a publish, it wakes no poller in this process (lambda/logs/storage/log-arrivals.ts), as from
  // another container: only the waiting poller's own reads can see it.
  await finishBlock(ref, r!, { n: 1, b: 2 });
  const read = await reading;
  // Had the polls missed the record, the consume would have answered empty at its 20 s timeout.
  expect(read.messages.map((m) => m.offset)).toEqual([1]);
});

it('arrivals held back by a block in flight wake the long poll for one strong read each at most, not in a loop', async () => {
  const { name, topic } = await logs.stream({ partition_count: 1 });
  const { s } = await streamBinding(ns.name, name);
  // Block 0 in flight for the whole wait: every message published after it stays unreadable, yet
  // each publish announces its arrival to the waiting poller (lambda/logs/storage/log-arrivals.ts).
  await reserveBlock({ namespace: ns.name, id: s.id }, { count: 1, bytes: 2, lastIndex: { 0: 0 } });
  await afterIndexLag();
  // The strong reads of the head item alone: a publish's own strong reads of the log's records are
  // not the poller's.
  const c = ddb();
  const send = c.send.bind(c);
  const head = JSON.stringify(metaKeys.logHead(ns.name, s.id));
  const n = { strong: 0 };
  jest.spyOn(c, 'send').mockImplementation(((cmd: unknown, ...rest: unknown[]) => {
    if (cmd instanceof GetCommand && cmd.input.ConsistentRead && JSON.stringify(cmd.input.Key) === head) n.strong++;
    return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
  }) as never);
  const reading = logs.read(name, { timeout_seconds: 4 });
  let published = 0;
  for (let burst = 0; burst < 5; burst++) {
    await new Promise((res) => setTimeout(res, 500));
    await Promise.all([0, 1, 2, 3].map(() => logs.publish(topic, { payload: 'behind' })));
    published += 4;
  }
  const read = await reading;
  expect(read.messages).toEqual([]);
  // One strong read per run of the bulkhead, and at most one per announcement after it (the
  // announcements made during a read wake one read between them).
  expect(n.strong).toBeGreaterThan(2);
  expect(n.strong).toBeLessThanOrEqual(2 + published);
});
