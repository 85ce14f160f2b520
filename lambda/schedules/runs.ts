/**
 * Schedule runs: every schedule whose next run is due publishes one message per scheduled time
 * through the ordinary publish path (routing, the namespace's publish budget), oldest first, each
 * time a tick reaches within the lateness bound made once (lambda/schedules/rules/schedules.ts
 * nextAfterRun). A retryable failure (the service's own, 5xx, 429) gives the claim back and the
 * next tick retries the same run with the same message id while the run's window is open; a
 * refusal that would answer the same again (no binding matches the topic, a payload over the
 * limits after its placeholders), or a retryable one past the window, is the run's `last_error`.
 */
import { newId } from '../core/rules/clock';
import { ApiError } from '../core/rules/errors';
import { assertMessageSize } from '../core/rules/message';
import { DUE_SHARDS } from '../core/rules/delays';
import { isRetryableFailure, LATENESS_BOUND_MS, nextAfterRun, runMessage, runWindowOpen } from './rules/schedules';
import { getSchedulerItems } from './storage/scheduler';
import { claimRun, dueScheduleKeys, finishRun, releaseRun, type ScheduleItem } from './storage/schedules';
import { publishMessages } from '../publishing/publish';
import { spendScheduleRun } from '../limits/storage/held-quota';
import { spendHookPublish } from '../webhooks/hook-budget';

export interface RunStats {
  /** Runs made (a message published or an error recorded). */
  runs: number;
  published: number;
  /** Runs whose publish was refused for good (or past its retry window); recorded in last_error. */
  refused: number;
  /** Runs left to a later tick: a retryable failure within the run's window, or a failed write of the run's own claim or record. */
  failed: number;
  /** How late the latest run was against its scheduled time (ms). */
  maxLateMs: number;
}

/**
 * Makes every due run, shard by shard, page by page. A run that fails with an error of its own
 * (its claim's or its record's write) is left to a later tick and the others go on; the tick
 * answers only once every run it started has ended, then fails with the first such error. It must
 * not end before: Lambda freezes the execution environment once the handler has answered
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html), and a run left
 * running would hold its claim (two minutes) with its publish or its record not made.
 */
export async function runDueSchedules(now: number, opts: { pageSize?: number; deadline?: number; log?: (msg: string, data: unknown) => void } = {}): Promise<RunStats> {
  const stats: RunStats = { runs: 0, published: 0, refused: 0, failed: 0, maxLateMs: 0 };
  const deadline = opts.deadline ?? Number.POSITIVE_INFINITY;
  const errors: unknown[] = [];
  const failed = (e: unknown, where: Record<string, unknown>) => {
    errors.push(e);
    if (where.schedule !== undefined) stats.failed++;
    opts.log?.('schedule runs failed; left to a later tick', { ...where, error: (e as Error).message });
  };
  await Promise.all(
    Array.from({ length: DUE_SHARDS }, async (_, shard) => {
      let start: Record<string, unknown> | undefined;
      // The deadline is checked before each page and each run (a run started is finished).
      try {
        while (Date.now() < deadline) {
          const page = await dueScheduleKeys(shard, now, opts.pageSize ?? 100, start);
          start = page.next;
          if (page.keys.length) {
            const items = await getSchedulerItems<ScheduleItem>(page.keys);
            await Promise.all(items.map((s) => runSchedule(s, now, deadline, stats, opts.log).catch((e) => failed(e, { namespace: s.namespace, schedule: s.name }))));
          }
          if (!start) break;
        }
      } catch (e) {
        failed(e, { shard }); // the index or the items unreadable: the shard's rest waits for the next tick
      }
    }),
  );
  if (errors.length) throw errors[0];
  return stats;
}

/** At most this many runs of one schedule per tick: the times within the lateness bound (6 of an `every: 60`) and the collapsed one. */
const MAX_RUNS_PER_TICK = 10;

/** Makes every due run of one schedule, oldest first, until one is left to a later tick. */
async function runSchedule(first: ScheduleItem, now: number, deadline: number, stats: RunStats, log?: (msg: string, data: unknown) => void) {
  let s: ScheduleItem | undefined = first;
  for (let n = 0; s && n < MAX_RUNS_PER_TICK && Date.now() < deadline; n++) s = await runOne(s, now, stats, log);
}

/** Makes the schedule's due run; answers the schedule as it is afterwards when its next run may be due too. */
async function runOne(s: ScheduleItem, now: number, stats: RunStats, log?: (msg: string, data: unknown) => void): Promise<ScheduleItem | undefined> {
  const t = s.next_run_at;
  if (t === undefined || t > now || !s.config.enabled) return undefined;
  if (s.claim_until !== undefined && s.claim_until >= now) return undefined; // another tick is on it
  // A retry of a claimed run keeps its message id (a consumer sees the same id twice at worst) and its window.
  const retry = s.claim_time === t && s.claim_msg !== undefined;
  const messageId = retry ? (s.claim_msg as string) : newId(now);
  const since = retry && s.claim_since !== undefined ? s.claim_since : now;
  if (!(await claimRun(s, t, messageId, since, now))) return undefined;
  let record: { last_run_at: number; last_message_id?: string; last_error?: string };
  try {
    const input = runMessage(s.config, s.name, t);
    assertMessageSize(input);
    await spendScheduleRun(s.namespace, now);
    const refusedBy = await spendHookPublish(s.namespace, now);
    if (refusedBy) throw new ApiError(429, 'RATE_LIMIT_EXCEEDED', `publish ${refusedBy}`);
    await publishMessages(s.namespace, s.config.topic, [input], now, { messageIds: [messageId] });
    record = { last_run_at: t, last_message_id: messageId };
    stats.published++;
  } catch (e) {
    const where = { namespace: s.namespace, schedule: s.name, scheduled_time: new Date(t).toISOString(), error: (e as Error).message };
    if (isRetryableFailure(e) && runWindowOpen(t, since, now)) {
      stats.failed++;
      log?.('schedule run failed; retried by the next tick within its window', { ...where, retry_until: new Date(Math.max(t, since) + LATENESS_BOUND_MS).toISOString() });
      await releaseRun(s, t, messageId, now);
      return undefined;
    }
    // A refusal that would answer the same again, or a retryable one past the run's window.
    const why = e instanceof ApiError ? `${e.code}: ${e.message}` : 'SERVICE_UNAVAILABLE: the service could not publish this run within its retry window';
    if (!(e instanceof ApiError)) log?.('schedule run given up after its retry window', where);
    record = { last_run_at: t, last_error: why };
    stats.refused++;
  }
  stats.runs++;
  stats.maxLateMs = Math.max(stats.maxLateMs, now - t);
  const moved = await finishRun(s, t, messageId, record, (item) => nextAfterRun(item.config, t, now, item.anchor));
  if (moved?.skipped_from !== undefined && moved.skipped_from !== s.skipped_from) {
    log?.('schedule times more than the lateness bound late were skipped', { namespace: s.namespace, schedule: s.name, from: new Date(moved.skipped_from).toISOString(), until: moved.skipped_until === undefined ? null : new Date(moved.skipped_until).toISOString() });
  }
  return moved;
}
