/**
 * The sweeper's tasks: background upkeep that no request pays for. The sweeper Lambda runs every
 * task on an EventBridge schedule (every minute); the local runtime runs them on a timer.
 *
 * A run has a time budget, shared out among the tasks (what one leaves unused goes to the next).
 * There are two kinds of task:
 *
 * - A **plain task** (`{ name, run(now, ctx) }`) bounds its own work per run.
 * - A **resource task** (`{ name, kind, visit, purge?, perNamespace? }`) is driven by
 *   {@link runResourceTask}, which makes it scale and keeps it fair:
 *   - it walks every resource of `kind`, namespace by namespace in name order (one index Query
 *     finds the next namespace that has one, ../storage/sweep-sources.ts), and
 *     calls `visit(resource, ctx)` on at most `perNamespace` resources of a namespace before
 *     moving on: a namespace with thousands of resources gets the same turn per round as one with
 *     a single resource, and takes several rounds;
 *   - it calls `purge(job, ctx)` on the purge jobs of deleted resources of `kind` in turn (a share
 *     of the task's time first), removing the job when `purge` answers `done`;
 *   - it stops at the deadline (or after `maxVisits`) and stores where it stopped in the metadata
 *     table (../storage/sweep-cursors.ts): the next run resumes there, and a round that needs many
 *     runs still reaches every resource.
 *   So that one resource's backlog (a million messages to trim) delays no other, `visit` and
 *   `purge` must do bounded work with bounded memory per call (a page or so) and keep their own
 *   progress in their resource's records; the next round continues it.
 *
 * A task is its feature's (`lambda/<feature>/sweep.ts`); the shapes are lambda/core/sweep-task.ts,
 * so that this file imports the tasks and no feature imports the sweeper. To plug a task in: add it
 * to {@link SWEEP_TASKS} (the queue task, lambda/queues/sweep.ts, is the smallest example).
 * `visit` may throw: the error is logged and counted, and the round goes on.
 */
import { closePurgeJob, nextNamespaceWith, purgeJobsPage, resourcesPage } from '../core/storage/sweep-sources';
import type { ResourceKind } from '../core/storage/keys';
import type { PlainTask, ResourceTask, SweepContext, SweepStats } from '../core/sweep-task';
import { getNamespaceCursor, getSweepCursor, saveSweepCursor, setNamespaceCursor } from './storage/sweep-cursors';
import { queuesTask } from '../queues/sweep';
import { streamsTask } from '../streams/sweep';
import { subscriptionsTask } from '../subscriptions/sweep';
import { webhooksTask } from '../webhooks/sweep';

export type SweepTask = PlainTask | ResourceTask<any>;

const SWEEP_TASKS: SweepTask[] = [
  queuesTask,
  streamsTask,
  subscriptionsTask,
  webhooksTask,
];

/**
 * A run's budget: the sweeper Lambda's timeout is 2 minutes and the schedule 1 minute
 * (lib/constructs/sweeper.ts), so a run ends well before the next one is due.
 */
const SWEEP_BUDGET_MS = 40_000;
const PURGE_SHARE = 1 / 3;

/** Finds the next namespace after `afterNs` that has a resource of `kind` (tests narrow it). */
export type NamespaceSource = (kind: ResourceKind, afterNs: string | undefined) => Promise<string | undefined>;

export interface ResourceRunOptions {
  /** Stop after this many visits (tests stop a round midway with it). */
  maxVisits?: number;
  namespaces?: NamespaceSource;
}

const add = (into: SweepStats, more: SweepStats | undefined) => {
  for (const [k, v] of Object.entries(more ?? {})) into[k] = (into[k] ?? 0) + v;
};

/** Purge jobs in turn from where the last run stopped, until the round's end or `deadline`. */
async function purgeRound(task: ResourceTask, ctx: SweepContext, after: string | undefined, deadline: number, stats: SweepStats): Promise<string | undefined> {
  const purge = task.purge;
  if (!purge) return undefined;
  for (;;) {
    const page = await purgeJobsPage(task.kind, after, 25);
    for (const job of page.jobs) {
      if (Date.now() >= deadline) return after;
      try {
        const r = await purge(job, { ...ctx, deadline });
        add(stats, r.stats);
        if (r.done) {
          await closePurgeJob(task.kind, job.id);
          stats.purge_jobs_done = (stats.purge_jobs_done ?? 0) + 1;
        }
      } catch (e) {
        stats.errors = (stats.errors ?? 0) + 1;
        ctx.log(`sweep ${task.name}: purge of ${job.id} failed`, { error: (e as Error).message });
      }
      after = job.sk;
    }
    if (!page.more) return undefined; // the round of purge jobs is complete; the next run starts over
  }
}

/**
 * One run of a resource task (see the module comment): purge jobs, then live resources from the
 * stored cursor on, until the end of the round, the deadline or `maxVisits`.
 */
export async function runResourceTask(task: ResourceTask, ctx: SweepContext, opts: ResourceRunOptions = {}): Promise<SweepStats> {
  const stats: SweepStats = { visited: 0, namespaces: 0 };
  const nextNamespace = opts.namespaces ?? nextNamespaceWith;
  const perNamespace = task.perNamespace ?? 25;
  const cursor = await getSweepCursor(task.name);
  const purgeDeadline = Math.min(ctx.deadline, Date.now() + (ctx.deadline - Date.now()) * PURGE_SHARE);
  cursor.purge_after = await purgeRound(task, ctx, cursor.purge_after, purgeDeadline, stats);
  const out = () => Date.now() >= ctx.deadline || (opts.maxVisits !== undefined && stats.visited >= opts.maxVisits);
  while (!out()) {
    const ns = await nextNamespace(task.kind, cursor.last_ns);
    if (ns === undefined) {
      // The round is complete: the next run starts a new one from the first namespace.
      if (cursor.last_ns !== undefined) cursor.rounds = (cursor.rounds ?? 0) + 1;
      cursor.last_ns = undefined;
      break;
    }
    stats.namespaces++;
    let after = await getNamespaceCursor(ns, task.name);
    const page = await resourcesPage(ns, task.kind, after, perNamespace);
    let stopped = false;
    for (const r of page.items) {
      if (out()) {
        stopped = true;
        break;
      }
      try {
        add(stats, await task.visit(r, ctx));
      } catch (e) {
        stats.errors = (stats.errors ?? 0) + 1;
        ctx.log(`sweep ${task.name}: visit of ${r.namespace}/${r.name} failed`, { error: (e as Error).message });
      }
      stats.visited++;
      after = r.sk;
    }
    if (stopped) {
      // Resume inside this namespace: the round stays before it.
      await setNamespaceCursor(ns, task.name, after);
      break;
    }
    // The namespace's turn is over; it continues after `after` in the next round if it has more.
    await setNamespaceCursor(ns, task.name, page.more ? after : undefined);
    cursor.last_ns = ns;
  }
  await saveSweepCursor(task.name, { ...cursor, updated_at: ctx.now });
  return stats;
}

const isResourceTask = (t: SweepTask): t is ResourceTask => 'visit' in t;

/**
 * Runs every task within `budgetMs`; one failing task does not stop the others. Each task may use
 * its share of what is left (a task that finishes early leaves its time to the next).
 */
export async function sweep(
  now: number,
  log: (msg: string, data: object) => void = () => undefined,
  { budgetMs = SWEEP_BUDGET_MS, tasks = SWEEP_TASKS }: { budgetMs?: number; tasks?: SweepTask[] } = {},
): Promise<Record<string, SweepStats | { error: string }>> {
  const out: Record<string, SweepStats | { error: string }> = {};
  const end = Date.now() + budgetMs;
  for (const [i, task] of tasks.entries()) {
    const ctx: SweepContext = { now, log, deadline: Date.now() + (end - Date.now()) / (tasks.length - i) };
    try {
      out[task.name] = isResourceTask(task) ? await runResourceTask(task, ctx) : await task.run(now, ctx);
    } catch (e) {
      out[task.name] = { error: (e as Error).message };
      log(`sweep task ${task.name} failed`, { error: (e as Error).message });
    }
  }
  return out;
}
