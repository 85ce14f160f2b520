/**
 * A shard worker's SQS batch (the scheduler function's tick tasks event source,
 * lib/constructs/scheduler.ts): each record's task (one a batch in the stack), run by
 * ./shard-tasks.ts, their handover stats merged into the tick's shape for its metrics.
 */
import { parseShardTask } from './storage/tick-tasks';
import { runShardTask } from './shard-tasks';
import { noHandovers, type TickStats } from './tick';
import type { HandoverStats } from './delayed';

type Log = (msg: string, data: unknown) => void;

/**
 * Runs the batch's tasks until `deadline`. A task that failed is not reported for a retry (no
 * batch item failures): the claims it left expire and the next minute's task for its shard takes
 * them (a retry after the visibility timeout would be stale); it is logged and counted.
 */
export async function runShardBatch(
  records: readonly { messageId: string; body: string }[],
  opts: { deadline: number; log: Log; info: Log },
): Promise<{ stats: TickStats; batchItemFailures: { itemIdentifier: string }[] }> {
  const { deadline, log } = opts;
  const delayed = noHandovers();
  await Promise.all(
    records.map(async (r) => {
      const task = parseShardTask(r.body);
      if (!task) return log('not a tick task; dropped', { message_id: r.messageId });
      try {
        const s = await runShardTask(task, { deadline, log });
        if (s) add(delayed, s);
        else opts.info('stale tick task dropped', { shard: task.shard, sent: task.sent });
      } catch (e) {
        log('shard task failed; its shard is taken again by the next tick', { shard: task.shard, error: (e as Error).message });
      }
    }),
  );
  const stats = { delayed, schedules: { runs: 0, published: 0, refused: 0, failed: 0, maxLateMs: 0 }, lagSeconds: delayed.maxLateMs / 1000, shardTasks: 0 };
  return { stats, batchItemFailures: [] };
}

function add(to: HandoverStats, s: HandoverStats) {
  for (const k of ['found', 'handed', 'dropped', 'droppedTargets', 'failed', 'finishedAfterDeadline'] as const) to[k] += s[k];
  for (const k of ['maxLateMs', 'peakInFlightBytes', 'peakClaimed'] as const) to[k] = Math.max(to[k], s[k]);
}
