/**
 * The scheduler tick: every minute (an EventBridge rule in AWS, the runtime's
 * timer locally), hands over held messages due within 14 minutes and makes every schedule run
 * that is due. Overlapping or repeated ticks are safe: every handover and run is claimed with a
 * conditional write first.
 */
import { handOverDue, type HandoverStats } from './delayed';
import { runDueSchedules, type RunStats } from './runs';
import { publishMessages } from '../publishing/publish';
import { hasTickTasksQueue } from './storage/tick-tasks';
import { fanOutHandovers } from './shard-tasks';

export interface TickStats {
  delayed: HandoverStats;
  schedules: RunStats;
  /** How late the latest handover or run was (seconds). */
  lagSeconds: number;
  /** Shard tasks sent to the workers (the tick that scales out: ./shard-tasks.ts); 0 when it handed over itself. */
  shardTasks: number;
}

export const noHandovers = (): HandoverStats => ({ found: 0, handed: 0, dropped: 0, droppedTargets: 0, failed: 0, maxLateMs: 0, peakInFlightBytes: 0, peakClaimed: 0, finishedAfterDeadline: 0 });

/**
 * The minute's tick as the scheduler function runs it: with a tick tasks queue, the held messages'
 * shards go to the shard workers (./shard-tasks.ts) and the schedule runs are made here; without
 * one, {@link tick} does both here.
 */
export async function coordinate(now: number, opts: { deadline?: number; log?: (msg: string, data: unknown) => void } = {}): Promise<TickStats> {
  if (!hasTickTasksQueue()) return tick(now, opts);
  const [tasks, schedules] = await Promise.allSettled([fanOutHandovers(now), runDueSchedules(now, { deadline: opts.deadline, log: opts.log })]);
  if (tasks.status === 'rejected') throw tasks.reason;
  if (schedules.status === 'rejected') throw schedules.reason;
  return { delayed: noHandovers(), schedules: schedules.value, lagSeconds: Math.max(schedules.value.maxLateMs, 0) / 1000, shardTasks: tasks.value };
}

export async function tick(now: number, opts: { deadline?: number; log?: (msg: string, data: unknown) => void } = {}): Promise<TickStats> {
  // Both halves end before the tick answers, also when one fails (Lambda freezes what a handler
  // left running: lambda/schedules/runs.ts); the tick then fails with the first error.
  const [delayed, schedules] = await Promise.allSettled([
    handOverDue(now, { deadline: opts.deadline, log: opts.log, republish: publishMessages }),
    runDueSchedules(now, { deadline: opts.deadline, log: opts.log }),
  ]);
  if (delayed.status === 'rejected') throw delayed.reason;
  if (schedules.status === 'rejected') throw schedules.reason;
  return { delayed: delayed.value, schedules: schedules.value, lagSeconds: Math.max(delayed.value.maxLateMs, schedules.value.maxLateMs, 0) / 1000, shardTasks: 0 };
}
