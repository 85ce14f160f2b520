/**
 * What a sweep task is: the shapes the sweeper (lambda/sweeper/tasks.ts, which schedules and runs
 * the tasks) and the features' `sweep.ts` (which are the tasks: queues, webhooks, streams,
 * subscriptions, and the logs' visits they share) agree on. They live here, below both, so that
 * the sweeper imports the features' tasks and no feature imports the sweeper. How a resource task
 * is driven (rounds, fairness between namespaces, cursors, the purge share) is said in
 * lambda/sweeper/tasks.ts.
 */
import type { PurgeJob, ResourceItem } from './storage/resources';
import type { ResourceKind } from './storage/keys';

export interface SweepStats {
  [counter: string]: number;
}

/** What a task's run may use. */
export interface SweepContext {
  /** The clock tasks judge expiry by (tests pass a later one). */
  now: number;
  /** Epoch ms (real time) after which a task starts no further work. */
  deadline: number;
  log: (msg: string, data: object) => void;
}

export interface PlainTask {
  name: string;
  run(now: number, ctx: SweepContext): Promise<SweepStats>;
}

export interface ResourceTask<T extends ResourceItem = ResourceItem> {
  /** Names the task's cursor: unique per task. */
  name: string;
  kind: ResourceKind;
  /** Bounded work on one live resource; returns counters to add to the run's stats. */
  visit(resource: T, ctx: SweepContext): Promise<SweepStats>;
  /** Bounded work on one deleted resource; `done` once nothing of it is left. */
  purge?(job: PurgeJob, ctx: SweepContext): Promise<{ done: boolean; stats?: SweepStats }>;
  /** Resources of one namespace visited per turn. @default 25 */
  perNamespace?: number;
}
