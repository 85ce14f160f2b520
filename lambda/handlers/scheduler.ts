/**
 * The scheduler tick Lambda (issue 20), invoked every minute by its own EventBridge rule
 * (lib/constructs/scheduler.ts): lambda/schedules/tick.ts. No lease: overlapping ticks are safe
 * (every handover and run is a conditional claim), so a slow tick never holds the next one back.
 * The local runtime runs the same tick on its timer (local/runtime.ts).
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Context } from 'aws-lambda';
import { systemClock, type Clock } from '../domain/clock';
import { countMetric, gaugeMetric, LOG_METRICS_OPTIONS, logger, metrics, METRIC } from '../observability';
import { tick, type TickStats } from '../schedules/tick';

/** Time kept back from the invocation's remaining time to finish the pages in hand. */
const FINISH_MARGIN_MS = 15_000;

export function schedulerHandler(deps: { clock?: Clock } = {}) {
  const clock = deps.clock ?? systemClock;
  return middy<unknown, TickStats>({ timeoutEarlyInMillis: 0 })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics, LOG_METRICS_OPTIONS))
    .handler(async (_event: unknown, context: Context) => {
      const now = clock.now();
      const stats = await tick(now, {
        deadline: Date.now() + Math.max(0, context.getRemainingTimeInMillis() - FINISH_MARGIN_MS),
        log: (msg, data) => logger.error(msg, data as Record<string, unknown>),
      });
      recordTick(stats);
      logger.info('tick done', { stats: stats as unknown as Record<string, unknown> });
      return stats;
    });
}

/** The tick's metrics (the dashboard's widgets and the lag alarm read them). */
export function recordTick(stats: TickStats): void {
  countMetric(METRIC.delayedHandedOver, stats.delayed.handed);
  countMetric(METRIC.delayedDropped, stats.delayed.dropped);
  countMetric(METRIC.scheduleRuns, stats.schedules.runs);
  countMetric(METRIC.scheduleRunsRefused, stats.schedules.refused);
  gaugeMetric(METRIC.schedulerLag, 'Seconds', stats.lagSeconds);
}

export const handler = schedulerHandler();
