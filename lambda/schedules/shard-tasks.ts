/**
 * The tick that scales out: the minute's tick (the coordinator) looks which due-index shards have
 * a held message due within the handover window (a query of one key per shard, in parallel) and
 * sends one task per such shard to the tick tasks queue (lambda/schedules/storage/tick-tasks.ts); the
 * scheduler function's SQS event source runs each task in its own invocation, up to
 * {@link TICK_WORKERS} at once, each with its own deadline and memory (lib/constructs/scheduler.ts).
 *
 * - Two workers over one shard at once (a task received twice, or a slow worker beside the next
 *   minute's) are safe: every handover is a conditional claim (lambda/schedules/storage/scheduler.ts).
 * - A task is stale once a tick period has passed since it was sent: the next tick has sent its
 *   own for the shard, so a stale one (received again after a failure, or late behind a full
 *   event source) is dropped rather than run beside it.
 * - Without the queue (a process of the admin CLI, or tests that drive the tick in-process) the
 *   tick hands over every shard itself (./tick.ts).
 */
import { DUE_SHARDS, HANDOVER_WINDOW_MS } from '../core/rules/delays';
import { sendShardTasks, type ShardTask } from './storage/tick-tasks';
import { dueDelayedKeys } from './storage/scheduler';
import { publishMessages } from '../publishing/publish';
import { handOverDue, type HandoverStats } from './delayed';

/** A task older than this (wall time since it was sent) is stale: the next tick sent another. */
const STALE_TASK_MS = 60_000;

/** The shards with a held message due within the handover window of `now`. */
async function dueShards(now: number): Promise<number[]> {
  const upTo = now + HANDOVER_WINDOW_MS;
  const found = await Promise.all(Array.from({ length: DUE_SHARDS }, async (_, shard) => ((await dueDelayedKeys(shard, upTo, 1)).keys.length ? shard : -1)));
  return found.filter((s) => s >= 0);
}

/** Sends a task for each shard with something due: how many. */
export async function fanOutHandovers(now: number): Promise<number> {
  const shards = await dueShards(now);
  const sent = Date.now();
  if (shards.length) await sendShardTasks(shards.map((shard) => ({ kind: 'handover', shard, now, sent })));
  return shards.length;
}

/**
 * Runs one shard's task until `deadline`: its clock is the coordinator's plus the wall time since
 * it was sent (the tests and the bench move the coordinator's clock ahead). Undefined when stale.
 */
export async function runShardTask(task: ShardTask, opts: { deadline?: number; log?: (msg: string, data: unknown) => void }): Promise<HandoverStats | undefined> {
  const age = Math.max(0, Date.now() - task.sent);
  if (age > STALE_TASK_MS) return undefined;
  return handOverDue(task.now + age, { shards: [task.shard], deadline: opts.deadline, log: opts.log, republish: publishMessages });
}
