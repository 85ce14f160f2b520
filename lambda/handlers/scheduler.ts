/**
 * The scheduler tick Lambda, invoked every minute by its own EventBridge rule
 * (lib/constructs/scheduler.ts): lambda/schedules/tick.ts. No lease: overlapping ticks are safe
 * (every handover and run is a conditional claim), so a slow tick never holds the next one back.
 * The same function is the shard worker: an SQS event of the tick tasks queue hands over each
 * task's shard (lambda/schedules/shard-batch.ts). The local runtime runs the same tick on its
 * timer and the same workers through its local event source (local/runtime.ts, local/tick-tasks.ts).
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { systemClock, type Clock } from '../core/rules/clock';
import { countMetric, gaugeMetric, LOG_METRICS_OPTIONS, logger, metrics, METRIC } from '../core/observability';
import { coordinate, type TickStats } from '../schedules/tick';
import { runShardBatch } from '../schedules/shard-batch';

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

/** A shard worker's batch (../schedules/shard-batch.ts), then its metrics. */
async function work(event: SQSEvent, deadline: number, log: (msg: string, data: unknown) => void): Promise<SQSBatchResponse> {
  const { stats, batchItemFailures } = await runShardBatch(event.Records, { deadline, log, info: (msg, data) => logger.info(msg, data as Record<string, unknown>) });
  recordTick(stats);
  logger.info('shard tasks done', { stats: stats.delayed as unknown as Record<string, unknown> });
  return { batchItemFailures };
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
