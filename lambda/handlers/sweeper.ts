/**
 * The sweeper Lambda, invoked every minute by an EventBridge schedule: runs every task of
 * ../sweeper/tasks.ts, one sweep at a time.
 *
 * "One at a time" is the lease of ../sweeper/storage/sweeper-lease.ts, not reserved concurrency (which
 * a new account's quota refuses at deploy). A sweep that finds the lease held
 * returns at once: the holder is doing the same work, and the next schedule comes in a minute.
 * Two overlapping sweeps would read the same expired messages, purge jobs and logs, do that work
 * twice and race each other on the counters they release and reconcile.
 *
 * The local runtime calls the tasks directly on its own timer, with an in-process guard
 * (local/runtime.ts): one process needs no lease.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Context } from 'aws-lambda';
import { systemClock, type Clock } from '../core/rules/clock';
import { LOG_METRICS_OPTIONS, logger, metrics } from '../core/observability';
import { acquireLease, releaseLease } from '../sweeper/storage/sweeper-lease';
import { sweep } from '../sweeper/tasks';
import { leaseUntil } from '../sweeper/rules';

export type SweepResult = Awaited<ReturnType<typeof sweep>> | { skipped: true; holder?: { owner: string; expires_at: string } };

export interface SweeperDeps {
  /** @default sweep of ../sweeper/tasks.ts */
  readonly sweep?: typeof sweep;
  readonly clock?: Clock;
}

/** The handler with its dependencies (tests give a sweep they control and their own clock). */
export function sweeperHandler(deps: SweeperDeps = {}) {
  const run = deps.sweep ?? sweep;
  const clock = deps.clock ?? systemClock;
  return middy<unknown, SweepResult>({ timeoutEarlyInMillis: 0 })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics, LOG_METRICS_OPTIONS))
    .handler(async (_event: unknown, context: Context): Promise<SweepResult> => {
      const owner = context.awsRequestId;
      const now = clock.now();
      const lease = await acquireLease(owner, now, leaseUntil(now, context.getRemainingTimeInMillis()));
      if (!lease.acquired) {
        const holder = lease.holder && { owner: lease.holder.owner, expires_at: new Date(lease.holder.expiresAt).toISOString() };
        logger.info('sweep skipped: another sweep holds the lease', { holder });
        return { skipped: true, ...(holder ? { holder } : {}) };
      }
      try {
        const stats = await run(now, (msg, data) => logger.error(msg, data as Record<string, unknown>));
        // Queue depth and the age of the oldest message come from SQS's own metrics (AWS/SQS).
        logger.info('sweep done', { stats });
        return stats;
      } finally {
        // A lease that cannot be given back expires by itself; the sweep's work is done.
        await releaseLease(owner).catch((e: Error) => logger.warn('sweeper lease not released', { error: e.message }));
      }
    });
}

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = sweeperHandler();
