/**
 * The scheduler tick Lambda, invoked every minute by its own EventBridge rule
 * (lib/constructs/scheduler.ts): lambda/schedules/tick.ts. No lease: overlapping ticks are safe
 * (every handover and run is a conditional claim), so a slow tick never holds the next one back.
 * The same function is the shard worker: an SQS event of the tick tasks queue hands over each
 * task's shard (lambda/schedules/shard-tasks.ts). The local runtime runs the same tick on its
 * timer and the same workers through its local event source (local/runtime.ts, local/tick-tasks.ts).
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { systemClock, type Clock } from '../core/rules/clock';
import { countMetric, gaugeMetric, LOG_METRICS_OPTIONS, logger, metrics, METRIC } from '../core/observability';
import { coordinate, noHandovers, type TickStats } from '../schedules/tick';
import { parseShardTask } from '../schedules/storage/tick-tasks';
import { runShardTask } from '../schedules/shard-tasks';
import type { HandoverStats } from '../schedules/delayed';

/** Time kept back from the invocation's remaining time to finish the pages in hand. */
const FINISH_MARGIN_MS = 15_000;

export function schedulerHandler(deps: { clock?: Clock } = {}) {
  const clock = deps.clock ?? systemClock;
  return middy<unknown, TickStats | SQSBatchResponse>({ timeoutEarlyInMillis: 0 })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics, LOG_METRICS_OPTIONS))
    .handler(async (event: unknown, context: Context) => {
      const deadline = Date.now() + Math.max(0, context.getRemainingTimeInMillis() - FINISH_MARGIN_MS);
      const log = (msg: string, data: unknown) => logger.error(msg, data as Record<string, unknown>);
      if (isSqsEvent(event)) return work(event, deadline, log);
      const stats = await coordinate(clock.now(), { deadline, log });
      recordTick(stats);
      logger.info('tick done', { stats: stats as unknown as Record<string, unknown> });
      return stats;
    });
}

const isSqsEvent = (e: unknown): e is SQSEvent => Array.isArray((e as SQSEvent | undefined)?.Records);

/**
 * A shard worker: each record's task (one a batch in the stack). A task that failed is not
 * reported for a retry: the claims it left expire and the next minute's task for its shard takes
 * them (a retry after the visibility timeout would be stale); it is logged and counted.
 */
async function work(event: SQSEvent, deadline: number, log: (msg: string, data: unknown) => void): Promise<SQSBatchResponse> {
  const delayed = noHandovers();
  await Promise.all(
    event.Records.map(async (r) => {
      const task = parseShardTask(r.body);
      if (!task) return log('not a tick task; dropped', { message_id: r.messageId });
      try {
        const s = await runShardTask(task, { deadline, log });
        if (s) add(delayed, s);
        else logger.info('stale tick task dropped', { shard: task.shard, sent: task.sent });
      } catch (e) {
        log('shard task failed; its shard is taken again by the next tick', { shard: task.shard, error: (e as Error).message });
      }
    }),
  );
  recordTick({ delayed, schedules: { runs: 0, published: 0, refused: 0, failed: 0, maxLateMs: 0 }, lagSeconds: delayed.maxLateMs / 1000, shardTasks: 0 });
  logger.info('shard tasks done', { stats: delayed as unknown as Record<string, unknown> });
  return { batchItemFailures: [] };
}

function add(to: HandoverStats, s: HandoverStats) {
  for (const k of ['found', 'handed', 'dropped', 'droppedTargets', 'failed', 'finishedAfterDeadline'] as const) to[k] += s[k];
  for (const k of ['maxLateMs', 'peakInFlightBytes', 'peakClaimed'] as const) to[k] = Math.max(to[k], s[k]);
}

/** The tick's metrics (the dashboard's widgets and the lag alarm read them). */
function recordTick(stats: TickStats): void {
  countMetric(METRIC.delayedHandedOver, stats.delayed.handed);
  countMetric(METRIC.delayedDropped, stats.delayed.dropped);
  countMetric(METRIC.scheduleRuns, stats.schedules.runs);
  countMetric(METRIC.scheduleRunsRefused, stats.schedules.refused);
  gaugeMetric(METRIC.schedulerLag, 'Seconds', stats.lagSeconds);
}

export const handler = schedulerHandler();
