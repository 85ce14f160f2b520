/**
 * A held message reaches each target once (DynamoDB Local and fauxqs, the real tick with a clock
 * moved forward): a handover that partly failed sends again only to the targets, and only the
 * messages, that SQS did not store; a cancel whose queue release failed releases on its retry.
 */
import type { SendMessageBatchCommandInput, SendMessageBatchCommandOutput } from '@aws-sdk/client-sqs';
import { namespaceTestbed } from '../fixtures/testbed';
import { queueApi, unique } from '../fixtures/queues';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { tick as runTick } from '../../lambda/schedules/tick';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { getQueue } from '../../lambda/queues/storage/queues';
import { CLAIM_MS } from '../../lambda/schedules/storage/scheduler';
import { injectDynamoFault } from '../fixtures/dynamo-calls';

jest.setTimeout(120_000);

const tick = async (now: number) => {
  await afterIndexLag();
  return runTick(now);
};

const { ns, call } = namespaceTestbed('dlo');
const q = queueApi(call);

/** SQS names of queues of the test namespace. */
const sqsName = async (queue: string) => (await getQueue(ns.name, queue))?.sqs_queue as string;

/** Runs `fn` with SQS sends refused by `refuse` (an SDK middleware, as SQS itself would answer). */
async function withSends<T>(refuse: (url: string, input: SendMessageBatchCommandInput) => 'all' | string[] | undefined, fn: () => Promise<T>): Promise<T> {
  const name = `refuse-${unique('m')}`;
  sqsClient().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand') return next(args);
      const input = args.input as SendMessageBatchCommandInput;
      const verdict = refuse(input.QueueUrl ?? '', input);
      if (verdict === 'all') throw Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable', $fault: 'server' });
      if (!verdict?.length) return next(args);
      // Entries SQS reports as failed (SendMessageBatch's partial failure): the others are stored.
      const kept = (input.Entries ?? []).filter((e) => !verdict.includes(e.Id as string));
      const out = (kept.length ? await next({ ...args, input: { ...input, Entries: kept } }) : { output: { Successful: [], Failed: [] }, response: {} }) as { output: SendMessageBatchCommandOutput };
      out.output.Failed = [...(out.output.Failed ?? []), ...verdict.map((Id) => ({ Id, SenderFault: false, Code: 'InternalError', Message: 'refused by the test' }))];
      return out as never;
    },
    { step: 'initialize', name },
  );
  try {
    return await fn();
  } finally {
    sqsClient().middlewareStack.remove(name);
  }
}

it('sends again only to the target that failed, and only the messages of a batch SQS did not store', async () => {
  const topicRoot = unique('two');
  const a = unique('qa');
  const b = unique('qb');
  await q.create({ name: a, topic_filter: `${topicRoot}/#` });
  await q.create({ name: b, topic_filter: `${topicRoot}/#` });
  const [sqsA, sqsB] = await Promise.all([sqsName(a), sqsName(b)]);
  // 40 messages over the 32 shards: some shard hands over two or more in one send.
  const published = await q.publishBatch(`${topicRoot}/t`, Array.from({ length: 40 }, (_, i) => ({ payload: `m${i}`, delay_seconds: 7200 })));
  const due = Date.parse(published.timestamp) + 7200_000 + 1000;
  // In queue A, the first message of every send of two or more is refused, every time it is sent.
  const poisoned = new Set<string>();
  await withSends(
    (url, input) => {
      if (url.endsWith(`/${sqsB}`)) return 'all';
      if (!url.endsWith(`/${sqsA}`)) return undefined;
      const entries = input.Entries ?? [];
      if (entries.length >= 2) poisoned.add(entries[0].MessageBody as string);
      return entries.filter((e) => poisoned.has(e.MessageBody as string)).map((e) => e.Id as string);
    },
    () => tick(due),
  );
  const refusedInA = poisoned.size;
  expect(refusedInA).toBeGreaterThan(0);
  const firstA = await q.drain(a);
  expect(firstA.length).toBe(40 - refusedInA);
  expect(await q.drain(b)).toEqual([]);
  // The claims expire: the next tick sends what was not stored, and nothing else.
  await tick(due + CLAIM_MS + 1000);
  const secondA = await q.drain(a);
  expect(secondA).toHaveLength(refusedInA);
  expect(new Set([...firstA, ...secondA]).size).toBe(40);
  expect((await q.drain(b)).sort()).toEqual([...published.message_ids].sort());
});

it('a cancel whose queue release failed answers 5xx, and its retry gives the room back (once)', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  const queueId = (await getQueue(ns.name, name))?.id as string;
  const { message_id } = await q.publish(topic, { payload: 'never', delay_seconds: 4 * 3600 });
  expect((await q.get(name)).message_count).toBe(1);
  // The queue's counters refuse the release, as DynamoDB does when throttled.
  const fault = injectDynamoFault({
    // The cancel's give-back is a one-item transaction (applied once under the SDK's retries).
    when: (c) => {
      const update = /^TransactWrite(Items)?Command$/.test(c.command) ? (c.input.TransactItems as { Update?: Record<string, unknown> }[] | undefined)?.[0]?.Update : /^Update(Item)?Command$/.test(c.command) ? c.input : undefined;
      return !!update && String(update.UpdateExpression).includes('message_count') && JSON.stringify(update.Key).includes(queueId);
    },
    mode: 'before',
    times: 100,
    name: 'ThrottlingException',
  });
  fault.arm();
  let first;
  try {
    first = await q.call('DELETE', `/messages/${message_id}/delivery`);
  } finally {
    fault.stop();
  }
  expect(fault.hits.length).toBeGreaterThan(0);
  expect(first.status).toBeGreaterThanOrEqual(500);
  expect((await q.get(name)).message_count).toBe(1);
  const retry = await q.call('DELETE', `/messages/${message_id}/delivery`);
  expect(retry.status).toBe(200);
  expect(retry.body.data).toMatchObject({ message_id, status: 'cancelled' });
  expect((await q.get(name)).message_count).toBe(0);
  // Answered the same again, without giving the room back twice.
  expect((await q.call('DELETE', `/messages/${message_id}/delivery`)).status).toBe(200);
  expect((await q.get(name)).message_count).toBe(0);
});

it('starts no handover and no schedule run once the tick\'s deadline has passed: they are left to the next tick', async () => {
  const { name, topic } = await q.createOnOwnTopic();
  // Due at about the same time: the held message in 61 minutes, the schedule's one run in 60.
  const { timestamp } = await q.publish(topic, { payload: 'later', delay_seconds: 3660 });
  const schedule = await q.call('POST', '/schedules', { name: unique('dl'), every: 3600, topic, payload: 'run' });
  const due = Math.max(Date.parse(timestamp) + 3660_000, Date.parse(schedule.body.data.next_run_at)) + 1000;
  await afterIndexLag();
  const late = await runTick(due, { deadline: Date.now() - 1 });
  expect(late.delayed.found + late.schedules.runs).toBe(0);
  expect(await q.drain(name)).toEqual([]);
  await tick(due);
  expect(await q.drain(name)).toHaveLength(2);
});
