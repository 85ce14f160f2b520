/**
 * A long poll of a stream or subscription is woken at once by a publish in the same container,
 * even one that lands while the consume is still making its first read, before it waits
 * (lambda/logs/storage/log-arrivals.ts `watchArrivals`).
 *
 * Before the fix the consume listened for arrivals only while it waited: an arrival announced
 * during its first read (the group's record, the cursor, the batch read) was lost, and the
 * consume learnt of the message only from its eventually consistent polls, which see a write a
 * second late locally (local/aws-harsh/dynamodb-reads.ts), as AWS may: the conformance case
 * "streams: long polling returns as soon as a message arrives" failed in a CI run on loaded
 * cores, the answer 2.3 s after the publish at 1 s. Here the publish is made inside the
 * consume's first read, so the race is not left to timing: the consume must answer without
 * having polled at all.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { namespaceTestbed } from '../fixtures/testbed';
import { logApi, streamBinding, subscriptionBinding, uniq } from '../fixtures/logs';
import { ddb } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';
import { afterIndexLag } from '../fixtures/harsh-waits';

jest.setTimeout(60_000);

const { ns, call } = namespaceTestbed('pollwake');
const logs = logApi(call);
afterEach(() => jest.restoreAllMocks());

/**
 * Runs `publish` inside the first storage call that `during` picks (a call of the consume's first
 * read), and counts the eventually consistent reads of the log's head (the long poll's polls).
 */
function publishDuring(id: string, during: (cmd: unknown) => boolean, publish: () => Promise<unknown>) {
  const c = ddb();
  const send = c.send.bind(c);
  const seen = { polls: 0, published: false };
  jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    if (cmd instanceof GetCommand && cmd.input.ConsistentRead === false && String(cmd.input.Key?.pk).includes(id)) seen.polls++;
    if (!seen.published && during(cmd)) {
      seen.published = true;
      await publish();
    }
    return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
  }) as never);
  return seen;
}

it('a stream long poll from latest returns a message published during its first read without waiting for a poll', async () => {
  const { name, topic } = await logs.stream({ partition_count: 1 });
  const { s } = await streamBinding(ns.name, name);
  await logs.publish(topic, { payload: 'old' });
  await afterIndexLag();
  const group = uniq('g');
  // The group's record, written after the head was read (and `latest` fixed from it).
  const seen = publishDuring(s.id, (cmd) => cmd instanceof UpdateCommand && JSON.stringify(cmd.input.Key).includes(group), () => logs.publish(topic, { payload: 'fresh' }));
  const read = await logs.read(name, { consumer_group: group, start_offset: 'latest', timeout_seconds: 10 });
  expect(seen.published).toBe(true);
  expect({ payloads: read.messages.map((m) => m.payload), polls: seen.polls }).toEqual({ payloads: ['fresh'], polls: 0 });
});

it('a subscription long poll returns a message published during its first read without waiting for a poll', async () => {
  const { name, topic } = await logs.subscription();
  const { s } = await subscriptionBinding(ns.name, name);
  await afterIndexLag();
  const subscriber = uniq('w');
  // The subscriber's cursor, read strongly after the head.
  const seen = publishDuring(
    s.id,
    (cmd) => cmd instanceof GetCommand && cmd.input.ConsistentRead === true && JSON.stringify(cmd.input.Key).includes(subscriber),
    () => logs.publish(topic, { payload: 'fresh' }),
  );
  const got = await logs.consume(name, { subscriber_id: subscriber, timeout_seconds: 10 });
  expect(seen.published).toBe(true);
  expect({ payloads: got.messages.map((m) => m.payload), polls: seen.polls }).toEqual({ payloads: ['fresh'], polls: 0 });
});

/**
 * Runs `publish` once the `nth` strong read of the log's head item has been answered, before the
 * consume gets that answer: the head read before the publish, its answer handed over after the
 * publish announced its arrival (a head read whose answer is slow to come back, the process
 * busy). Counts the polls made from the publish on.
 */
function publishAfterHeadRead(ref: { namespace: string; id: string }, nth: number, publish: () => Promise<unknown>) {
  const c = ddb();
  const send = c.send.bind(c);
  const head = JSON.stringify(metaKeys.logHead(ref.namespace, ref.id));
  const seen = { polls: 0, headReads: 0, published: false };
  jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    if (seen.published && cmd instanceof GetCommand && cmd.input.ConsistentRead === false && String(cmd.input.Key?.pk).includes(ref.id)) seen.polls++;
    const out = await (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
    if (!seen.published && cmd instanceof GetCommand && cmd.input.ConsistentRead === true && JSON.stringify(cmd.input.Key) === head && ++seen.headReads === nth) {
      seen.published = true;
      await publish();
    }
    return out;
  }) as never);
  return seen;
}

// The consume's first strong read of the head, and the one that starts the rest of the wait after
// the bulkhead's unslotted first second (lambda/queues/bulkhead.ts).
describe.each([
  ['the first run', 1],
  ['the second run of the bulkhead', 2],
])('a publish landing while the head read of %s is answered', (_, nth) => {
  it('wakes a stream long poll without waiting for a poll', async () => {
    const { name, topic } = await logs.stream({ partition_count: 1 });
    const { s } = await streamBinding(ns.name, name);
    await logs.publish(topic, { payload: 'old' });
    await afterIndexLag();
    const seen = publishAfterHeadRead({ namespace: ns.name, id: s.id }, nth, () => logs.publish(topic, { payload: 'fresh' }));
    const read = await logs.read(name, { consumer_group: uniq('g'), start_offset: 'latest', timeout_seconds: 10 });
    expect(seen.published).toBe(true);
    expect({ payloads: read.messages.map((m) => m.payload), polls: seen.polls }).toEqual({ payloads: ['fresh'], polls: 0 });
  });

  it('wakes a subscription long poll without waiting for a poll', async () => {
    const { name, topic } = await logs.subscription();
    const { s } = await subscriptionBinding(ns.name, name);
    await afterIndexLag();
    const seen = publishAfterHeadRead({ namespace: ns.name, id: s.id }, nth, () => logs.publish(topic, { payload: 'fresh' }));
    const got = await logs.consume(name, { subscriber_id: uniq('w'), timeout_seconds: 10 });
    expect(seen.published).toBe(true);
    expect({ payloads: got.messages.map((m) => m.payload), polls: seen.polls }).toEqual({ payloads: ['fresh'], polls: 0 });
  });
});
