/**
 * The scheduler tick (issue 20 item 4): every minute (an EventBridge rule in AWS, the runtime's
 * timer locally), hands over held messages due within 14 minutes and makes every schedule run
 * that is due. Overlapping or repeated ticks are safe: every handover and run is claimed with a
 * conditional write first.
 */
import { handOverDue, type HandoverStats } from './delayed';
import { runDueSchedules, type RunStats } from './runs';
import { publishMessages } from '../publishing/publish';

export interface TickStats {
  delayed: HandoverStats;
  schedules: RunStats;
  /** How late the latest handover or run was (seconds). */
  lagSeconds: number;
}

export async function tick(now: number, opts: { deadline?: number; log?: (msg: string, data: unknown) => void } = {}): Promise<TickStats> {
  const [delayed, schedules] = await Promise.all([
    handOverDue(now, { deadline: opts.deadline, log: opts.log, republish: publishMessages }),
    runDueSchedules(now, { deadline: opts.deadline, log: opts.log }),
  ]);
  return { delayed, schedules, lagSeconds: Math.max(delayed.maxLateMs, schedules.maxLateMs, 0) / 1000 };
}
