/**
 * The tick's handover at scale (DynamoDB Local and fauxqs, the real tick with a clock moved
 * forward): claim and finish write a small item whatever the message's size; the messages in
 * flight are bounded by bytes; namespaces take turns within a page.
 */
import { namespaceTestbed } from '../fixtures/testbed';
import { queueApi, unique } from '../fixtures/queues';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { tick } from '../../lambda/schedules/tick';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, dynamoClient, tableName } from '../../lambda/core/storage/client';
import { schedulerKeys } from '../../lambda/core/storage/keys';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { handOverDue } from '../../lambda/schedules/delayed';
import { publishMessages } from '../../lambda/publishing/publish';

jest.setTimeout(120_000);

const { ns, call } = namespaceTestbed('dls');
const q = queueApi(call);

/** Runs `fn` recording the table write units (ReturnConsumedCapacity) of every UpdateItem whose key names `marker`. */
async function recordingUpdates<T>(marker: string, fn: () => Promise<T>): Promise<{ result: T; units: number[] }> {
  const name = unique('units');
  const units: number[] = [];
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (context.commandName !== 'UpdateItemCommand' || !JSON.stringify(input.Key).includes(marker)) return next(args);
      input.ReturnConsumedCapacity = 'INDEXES';
      const out = await next(args);
      const c = (out.output as { ConsumedCapacity?: { Table?: { CapacityUnits?: number } } }).ConsumedCapacity;
      units.push(c?.Table?.CapacityUnits ?? Number.NaN);
      return out;
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await fn(), units };
  } finally {
    dynamoClient().middlewareStack.remove(name);
  }
}

it('claims and finishes a 50 KB held message with one write unit each (a small item, not the message)', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const payload = 'x'.repeat(50 * 1024);
  const { message_id, timestamp } = await q.publish(topic, { payload, delay_seconds: 3 * 3600 });
  await afterIndexLag();
  const { result, units } = await recordingUpdates(`DELAYED#${message_id}`, () => tick(Date.parse(timestamp) + 3 * 3600_000 + 1000));
  expect(result.delayed.handed).toBeGreaterThanOrEqual(1);
  // The claim and the finish (DynamoDB bills an update by the larger of the item before and
  // after, in 1 KB units: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
  expect(units.length).toBeGreaterThanOrEqual(2);
  for (const u of units) expect(u).toBeLessThanOrEqual(1);
  const got = await q.drain(name);
  expect(got).toEqual([message_id]);
});

/** Runs `fn` recording the most message bytes in SQS sends at once (SendMessageBatch bodies in flight). */
async function recordingSendBytes<T>(fn: () => Promise<T>): Promise<{ result: T; peak: number }> {
  const name = unique('bytes');
  let now = 0;
  let peak = 0;
  sqsClient().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand') return next(args);
      const bytes = ((args.input as { Entries?: { MessageBody?: string }[] }).Entries ?? []).reduce((n, e) => n + (e.MessageBody?.length ?? 0), 0);
      now += bytes;
      peak = Math.max(peak, now);
      try {
        return await next(args);
      } finally {
        now -= bytes;
      }
    },
    { step: 'initialize', name },
  );
  try {
    return { result: await fn(), peak };
  } finally {
    sqsClient().middlewareStack.remove(name);
  }
}

it('holds at most its byte budget of messages in flight, and hands every one over', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const payload = 'y'.repeat(50 * 1024);
  // 16 messages of 50 KB over the 32 shards: without a byte bound each shard's send goes at once.
  const published = await q.publishBatch(topic, Array.from({ length: 16 }, () => ({ payload, delay_seconds: 5 * 3600 })));
  await afterIndexLag();
  const budget = 300 * 1024;
  const { result, peak } = await recordingSendBytes(() => handOverDue(Date.parse(published.timestamp) + 5 * 3600_000 + 1000, { inFlightBytes: budget, republish: publishMessages }));
  // The handover takes every due message of the table (other tests' too): ours are checked by the drain below.
  expect(result.handed).toBeGreaterThanOrEqual(16);
  expect(peak).toBeGreaterThan(0);
  expect(peak).toBeLessThanOrEqual(budget);
  expect(result.peakInFlightBytes).toBeLessThanOrEqual(budget);
  expect((await q.drain(name)).sort()).toEqual([...published.message_ids].sort());
});

const bodyOf = async (messageId: string) => (await ddb().send(new GetCommand({ TableName: tableName('scheduler'), Key: schedulerKeys.delayedBody(ns.name, messageId), ConsistentRead: true }))).Item;

it('keeps a message that fits one write unit in one item, and a cancel deletes a larger one\'s body', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const small = await q.publish(topic, { payload: 'small', delay_seconds: 6 * 3600 });
  expect(await bodyOf(small.message_id)).toBeUndefined();
  const large = await q.publish(topic, { payload: 'z'.repeat(20 * 1024), delay_seconds: 6 * 3600 });
  expect((await bodyOf(large.message_id))?.message).toMatchObject({ message_id: large.message_id });
  expect((await q.get(name)).message_count).toBe(2);
  for (const id of [small.message_id, large.message_id]) expect((await q.call('DELETE', `/messages/${id}/delivery`)).status).toBe(200);
  expect(await bodyOf(large.message_id)).toBeUndefined();
  expect((await q.get(name)).message_count).toBe(0);
});

it('counts the rest of the delay from when the send goes out, not from before the writes that precede it', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const { message_id, timestamp } = await q.publish(topic, { payload: 'late', delay_seconds: 7 * 3600 });
  const due = Date.parse(timestamp) + 7 * 3600_000;
  await afterIndexLag();
  // The queue's counters write before the send (touchQueueCounters) answers 1.5 s late, as a
  // throttled or queued DynamoDB call may; the send's DelaySeconds must still end at the due time.
  const slow = unique('slow');
  const sends = unique('sends');
  dynamoClient().middlewareStack.add(
    (next) => async (args) => {
      if ((args.input as { UpdateExpression?: string }).UpdateExpression === 'SET changed_at = :now') await new Promise((r) => setTimeout(r, 1500));
      return next(args);
    },
    { step: 'initialize', name: slow },
  );
  const seen: { wall: number; delay: number }[] = [];
  sqsClient().middlewareStack.add(
    (next) => async (args) => {
      const entries = (args.input as { Entries?: { MessageBody?: string; DelaySeconds?: number }[] }).Entries ?? [];
      for (const e of entries) if (e.MessageBody?.includes(message_id)) seen.push({ wall: Date.now(), delay: e.DelaySeconds ?? 0 });
      return next(args);
    },
    { step: 'initialize', name: sends },
  );
  const now = due - 10 * 60_000;
  const wall = Date.now();
  try {
    await tick(now);
  } finally {
    dynamoClient().middlewareStack.remove(slow);
    sqsClient().middlewareStack.remove(sends);
  }
  expect(seen).toHaveLength(1);
  // The tick's clock when the send went out, and when SQS makes the message visible.
  const visible = now + (seen[0].wall - wall) + seen[0].delay * 1000;
  expect(Math.abs(visible - due)).toBeLessThanOrEqual(600); // whole seconds: 500 ms of rounding
  expect(await q.drain(name)).toEqual([]); // still delayed in SQS
});
