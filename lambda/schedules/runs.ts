/**
 * Schedule runs (issue 20 item 3): every schedule whose next run is due publishes one message
 * through the ordinary publish path (routing, the namespace's publish budget), then moves to its
 * next time after now. A run whose publish is refused (no binding matches the topic, the publish
 * budget is spent, a payload over the limits after its placeholders) is recorded as the run's
 * `last_error`; a failure of the service itself leaves the claim to expire, and the next tick
 * retries the same run with the same message id.
 */
import { newId } from '../domain/clock';
import { ApiError } from '../domain/errors';
import { assertMessageSize } from '../domain/message';
import { DUE_SHARDS } from '../domain/delays';
import { nextRunAfter, runMessage } from '../domain/schedules';
import { getSchedulerItems } from '../storage/scheduler';
import { claimRun, dueScheduleKeys, finishRun, type ScheduleItem } from '../storage/schedules';
import { publishMessages } from '../publishing/publish';
import { spendHookPublish } from '../webhooks/hook-budget';

export interface RunStats {
  /** Runs made (a message published or an error recorded). */
  runs: number;
  published: number;
  /** Runs whose publish was refused; recorded in last_error. */
  refused: number;
  /** Runs left to the next tick (a dependency failed). */
  failed: number;
  /** How late the latest run was against its scheduled time (ms). */
  maxLateMs: number;
}

export async function runDueSchedules(now: number, opts: { pageSize?: number; deadline?: number; log?: (msg: string, data: unknown) => void } = {}): Promise<RunStats> {
  const stats: RunStats = { runs: 0, published: 0, refused: 0, failed: 0, maxLateMs: 0 };
  const deadline = opts.deadline ?? Number.POSITIVE_INFINITY;
  await Promise.all(
    Array.from({ length: DUE_SHARDS }, async (_, shard) => {
      let start: Record<string, unknown> | undefined;
      do {
        const page = await dueScheduleKeys(shard, now, opts.pageSize ?? 100, start);
        start = page.next;
        if (!page.keys.length) continue;
        const items = await getSchedulerItems<ScheduleItem>(page.keys);
        await Promise.all(items.map((s) => runOne(s, now, stats, opts.log)));
      } while (start && Date.now() < deadline);
    }),
  );
  return stats;
}

async function runOne(s: ScheduleItem, now: number, stats: RunStats, log?: (msg: string, data: unknown) => void) {
  const t = s.next_run_at;
  if (t === undefined || t > now || !s.config.enabled) return;
  if (s.claim_until !== undefined && s.claim_until >= now) return; // another tick is on it
  // A retry of a claimed run keeps its message id: a consumer sees the same id twice at worst.
  const messageId = s.claim_time === t && s.claim_msg ? s.claim_msg : newId(now);
  if (!(await claimRun(s, t, messageId, now))) return;
  let record: { last_run_at: number; last_message_id?: string; last_error?: string };
  try {
    const input = runMessage(s.config, s.name, t);
    assertMessageSize(input);
    const refusedBy = await spendHookPublish(s.namespace, now);
    if (refusedBy) throw new ApiError(429, 'RATE_LIMIT_EXCEEDED', `publish ${refusedBy}`);
    await publishMessages(s.namespace, s.config.topic, [input], now, { messageIds: [messageId] });
    record = { last_run_at: t, last_message_id: messageId };
    stats.published++;
  } catch (e) {
    if (!(e instanceof ApiError)) {
      stats.failed++;
      log?.('schedule run failed; retried by a later tick once its claim expires', { namespace: s.namespace, schedule: s.name, scheduled_time: new Date(t).toISOString(), error: (e as Error).message });
      return;
    }
    record = { last_run_at: t, last_error: `${e.code}: ${e.message}` };
    stats.refused++;
  }
  stats.runs++;
  stats.maxLateMs = Math.max(stats.maxLateMs, now - t);
  // Missed runs (an outage) are not made one by one: the next run is the first after now.
  await finishRun(s, t, messageId, record, nextRunAfter(s.config, Math.max(t, now), s.anchor));
}
