/**
 * The tick that scales out (DynamoDB Local and fauxqs, the clock moved ahead): a tick bounded by
 * its deadline leaves nothing claimed after it, and shard workers running at once over the same
 * shards hand each message over once.
 *
 * Workload: the deadline case holds 1,000 messages, one item each, against a 1.5 s deadline, far
 * more than a tick finishes by then (a loaded run handed over 57), so a tick that claimed every
 * shard's page at once would finish hundreds after its deadline, over the bound of 100. The
 * shard-worker cases hold 300 (three packs of 100: each shard's page at once by two workers) and
 * 200 one item each (over 64 shards, nearly every shard has one). The queues are drained 100 a
 * consume with one batch ack each (test/fixtures/queues.ts), not one ack call per message.
 */
import { namespaceTestbed } from '../fixtures/testbed';
import { queueApi, unique } from '../fixtures/queues';
import { afterIndexLag } from '../fixtures/harsh-waits';
import { heldStates } from '../../lambda/schedules/storage/held-packs';
import { handler as schedulerFunction, schedulerHandler } from '../../lambda/handlers/scheduler';
import { DUE_SHARDS } from '../../lambda/core/rules/delays';
import type { ShardTask } from '../../lambda/schedules/storage/tick-tasks';
import type { SQSEvent } from 'aws-lambda';
import { lambdaContext } from '../../local/lambda-context';
import { startLocalTickTasks } from '../../local/tick-tasks';
import type { TickStats } from '../../lambda/schedules/tick';
import { handOverDue } from '../../lambda/schedules/delayed';
import { publishMessages } from '../../lambda/publishing/publish';

jest.setTimeout(300_000);

const { ns, call } = namespaceTestbed('dlf');
const q = queueApi(call);

/**
 * Holds `count` messages on a queue of its own, all due `delaySeconds` from now (batches of 100,
 * packed a hundred a pack: lambda/schedules/storage/held-packs.ts), or with `apart` each message of a request
 * a minute before the one before it (the first due `delaySeconds` from now), so each is an item of
 * its own in its shard (packs are per request).
 */
async function hold(count: number, delaySeconds: number, apart = false) {
  const { name, topic } = await q.createOnOwnTopic();
  const ids: string[] = [];
  let timestamp = '';
  for (let i = 0; i < count; i += 100) {
    const batch = await q.publishBatch(topic, Array.from({ length: Math.min(100, count - i) }, (_, k) => ({ payload: `m${i + k}`, delay_seconds: delaySeconds - (apart ? k * 60 : 0) })));
    ids.push(...batch.message_ids);
    timestamp = batch.timestamp;
  }
  await afterIndexLag();
  return { name, ids, due: Date.parse(timestamp) + delaySeconds * 1000 };
}

/** How many of `ids` (this namespace's held messages) are in `state` (their state items, read strongly consistently). */
async function inState(ids: string[], state: string): Promise<number> {
  const items = await heldStates(ns.name, ids);
  return items.filter((i) => i.state === state).length;
}

it('a tick past its deadline claims only what it can finish by then, leaves nothing claimed, and the next ticks hand the rest over once', async () => {
  // One item each (a minute apart), not packs of 100 (those are handed over well within the
  // deadline). 1,000 messages and 1.5 s since 2026-11-30 (2,000 and 3 s before: the same ratio
  // of work to deadline, half the suite's CPU for this case; a loaded run handed over 57 by then).
  const { name, ids, due } = await hold(1000, 4 * 3600, true);
  const at = due + 1000;
  // A deadline far shorter than the work: the tick must stop claiming in time, not claim every
  // shard's page at once and finish them long after (a Lambda timeout would cut those off).
  const first = await handOverDue(at, { deadline: Date.now() + 1500, republish: publishMessages });
  expect(first.handed).toBeLessThan(ids.length);
  expect(first.finishedAfterDeadline).toBeLessThanOrEqual(Math.max(100, first.handed / 4));
  expect(await inState(ids, 'handing')).toBe(0);
  for (let tick = 0; tick < 20 && (await inState(ids, 'pending')) > 0; tick++) await handOverDue(at, { republish: publishMessages });
  const got = await q.drain(name);
  expect(got.length).toBe(ids.length);
  expect(new Set(got)).toEqual(new Set(ids));
});

/** An SQS event of the tick tasks queue carrying one task per shard, as the coordinator sends them. */
function allShardsEvent(now: number): SQSEvent {
  const sent = Date.now();
  return {
    Records: Array.from({ length: DUE_SHARDS }, (_, shard) => {
      const task: ShardTask = { kind: 'handover', shard, now, sent };
      return { messageId: `task-${shard}`, body: JSON.stringify(task) } as SQSEvent['Records'][number];
    }),
  };
}

it('two shard workers at once over the same shards hand each message over once', async () => {
  const { name, ids, due } = await hold(300, 2 * 3600 + 600);
  const at = due + 1000;
  const ctx = () => lambdaContext('msg-scheduler', unique('req'), 60_000);
  await Promise.all([schedulerFunction(allShardsEvent(at), ctx()), schedulerFunction(allShardsEvent(at), ctx())]);
  expect(await inState(ids, 'handing')).toBe(0);
  expect(await inState(ids, 'sent')).toBe(ids.length);
  const got = await q.drain(name);
  expect(got.length).toBe(ids.length);
  expect(new Set(got)).toEqual(new Set(ids));
});

it('the minute\'s tick sends one task per due shard to the tick tasks queue, and the local shard workers hand every message over', async () => {
  const { name, ids, due } = await hold(200, 5 * 3600, true);
  const at = due + 1000;
  const workers = await startLocalTickTasks({ queueName: unique('tick-tasks') });
  try {
    const stats = (await schedulerHandler({ clock: { now: () => at } })({}, lambdaContext('msg-scheduler', unique('req'), 60_000))) as TickStats;
    // 200 messages over 64 shards: nearly every shard has one (and other files' due ones count too).
    expect(stats.shardTasks).toBeGreaterThan(32);
    expect(stats.shardTasks).toBeLessThanOrEqual(DUE_SHARDS);
    expect(stats.delayed.handed).toBe(0); // handed over by the workers, not by the tick
    const got: string[] = [];
    for (let i = 0; i < 60 && got.length < ids.length; i++) got.push(...(await q.drain(name)));
    expect(got.length).toBe(ids.length);
    expect(new Set(got)).toEqual(new Set(ids));
    expect(await inState(ids, 'sent')).toBe(ids.length);
  } finally {
    await workers.stop();
  }
});
