/**
 * The serving part of the local runtime, once storage is up: the local gateway in front of the
 * handlers, and the timers that stand in for EventBridge schedules.
 */
import type { Server } from 'node:http';
import { createGateway, loadHandlers } from './gateway';
import { sweep } from '../lambda/sweeper/tasks';
import { startLocalWebhooks } from './webhooks';
import { randomUUID } from 'node:crypto';
import { lambdaContext } from './lambda-context';
import { startLocalTickTasks } from './tick-tasks';

/**
 * Stands in for the EventBridge rule of the scheduler tick (every minute in AWS): the
 * same Lambda handler, on a timer (MSG_SCHEDULER_INTERVAL_MS, 5 s by default, so a schedule run
 * is made within seconds of its time locally). One tick at a time in this process; it sends the
 * held messages' shards to the local shard workers (./tick-tasks.ts).
 */
function startScheduler(intervalMs: number, log: (l: string) => void) {
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      const { handler } = await import('../lambda/handlers/scheduler');
      await handler({}, lambdaContext('scheduler', randomUUID(), 60_000));
    } catch (e) {
      log(`scheduler: ${(e as Error).message}`);
    } finally {
      running = false;
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Stands in for the EventBridge schedule of the sweeper Lambda (every minute in AWS). */
function startSweeper(intervalMs: number, log: (l: string) => void) {
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      await sweep(Date.now(), (msg, data) => log(`sweeper: ${msg} ${JSON.stringify(data)}`));
    } catch (e) {
      log(`sweeper: ${(e as Error).message}`);
    } finally {
      running = false;
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

export interface Runtime {
  server: Server;
  stop(): Promise<void>;
}

export async function startRuntime({ port, host = '127.0.0.1', log }: { port: number; host?: string; log: (l: string) => void }): Promise<Runtime> {
  const handlers = await loadHandlers();
  // The delivery queue on fauxqs with a local event source, and the retry workflow.
  const visibility = process.env.MSG_LOCAL_DELIVERY_VISIBILITY_SECONDS;
  const webhooks = await startLocalWebhooks({ log, ...(visibility && /^\d+$/.test(visibility) ? { visibilitySeconds: Number(visibility) } : {}) });
  // The tick's shard workers: the tick below sends its shards' tasks to their queue.
  const tickTasks = await startLocalTickTasks({ log });
  const accessLog = process.env.MSG_ACCESS_LOG === 'true';
  const server = createGateway({ handlers, log: (l) => (accessLog || l.startsWith('gateway:') ? log(l) : undefined) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const stopSweeper = startSweeper(Number(process.env.MSG_SWEEP_INTERVAL_MS || 2000), log);
  const stopScheduler = startScheduler(Number(process.env.MSG_SCHEDULER_INTERVAL_MS || 5000), log);
  return {
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        stopSweeper();
        stopScheduler();
        server.closeAllConnections();
        server.close(() => resolve());
      })
        .then(() => tickTasks.stop())
        .then(() => webhooks.stop()),
  };
}
