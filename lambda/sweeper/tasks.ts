/**
 * The sweeper's tasks: background upkeep that no request pays for. The sweeper Lambda runs every
 * task on an EventBridge schedule (every minute); the local runtime runs them on a timer. Each
 * task is bounded per run (it resumes on the next run), so one run never outlives its Lambda.
 */
import { sweepQueues } from './queues';
import { sweepStreams } from './streams';
import { sweepSubscriptions } from './subscriptions';
import { sweepWebhooks } from './webhooks';

export interface SweepStats {
  [counter: string]: number;
}

export interface SweepTask {
  name: string;
  run(now: number): Promise<SweepStats>;
}

export const SWEEP_TASKS: SweepTask[] = [
  { name: 'queues', run: sweepQueues },
  { name: 'streams', run: sweepStreams },
  { name: 'subscriptions', run: sweepSubscriptions },
  { name: 'webhooks', run: sweepWebhooks },
];

/** Runs every task; one failing task does not stop the others. */
export async function sweep(now: number, log: (msg: string, data: object) => void = () => undefined): Promise<Record<string, SweepStats | { error: string }>> {
  const out: Record<string, SweepStats | { error: string }> = {};
  for (const task of SWEEP_TASKS) {
    try {
      out[task.name] = await task.run(now);
    } catch (e) {
      out[task.name] = { error: (e as Error).message };
      log(`sweep task ${task.name} failed`, { error: (e as Error).message });
    }
  }
  return out;
}
