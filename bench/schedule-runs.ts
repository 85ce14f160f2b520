/**
 * Schedule runs at scale (the target of docs/performance.md): N schedules (1,000 by default)
 * `every` 60 s with their next run due at once, made by one real tick (lambda/schedules/tick.ts) on
 * a clock a minute ahead, on the local engines. Per run: its DynamoDB calls and units (the claim,
 * the quota counter, the publish, the record), its SQS send, the tick's Lambda time, so its cost;
 * and how late each run's send went out after the tick began (the tick's own work, on top of up to
 * a minute of the tick's period in AWS), p50 and p99, from the SQS sends the publish makes.
 *
 * Runs alone: `npx tsx bench/schedule-runs.ts [count]`.
 */
import { pathToFileURL } from 'node:url';
import { expectStatus, runConcurrent, startBenchEnv } from './harness';
import { meterTables } from './key-meter';
import { PRICES } from './prices';
import { SCHEDULER_MEMORY_MB } from '../lib/function-memory';

const r3 = (n: number) => Math.round(n * 1000) / 1000;
const r2 = (n: number) => Math.round(n * 100) / 100;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

interface ScheduleRunsResult {
  count: number;
  runs: number;
  tickMs: number;
  /** Send time of each run after the tick began (ms). */
  afterTickP50Ms: number;
  afterTickP99Ms: number;
  afterTickMaxMs: number;
  perRun: { calls: number; readUnits: number; writeUnits: number; sqsRequests: number };
  usdPerMillion: number;
}

async function benchScheduleRuns({ count = 1000, log = () => undefined }: { count?: number; log?: (l: string) => void } = {}): Promise<ScheduleRunsResult> {
  const env = await startBenchEnv(log);
  try {
    const { tick } = await import('../lambda/schedules/tick');
    const { sqsClient } = await import('../lambda/core/adapters/sqs');
    const { meter } = await meterTables();
    expectStatus(await env.call('POST', '/queues', { name: 'runs', topic_filter: 'bench/runs' }), 201, 'create queue');
    log(`schedule-runs: creating ${count} schedules`);
    await runConcurrent(count, 8, async (i) => expectStatus(await env.call('POST', '/schedules', { name: `s${i}`, every: 60, topic: 'bench/runs', payload: 'run' }), 201, 'create schedule'));

    let tickStart = 0;
    const sends: number[] = [];
    let sqsRequests = 0;
    sqsClient().middlewareStack.add(
      (next, context) => async (args) => {
        const name = String(context.commandName);
        if (name.startsWith('SendMessage')) {
          sqsRequests++;
          const at = performance.now() - tickStart;
          const out = await next(args);
          const n = name === 'SendMessageBatchCommand' ? ((out.output as { Successful?: unknown[] }).Successful ?? []).length : 1;
          for (let k = 0; k < n; k++) sends.push(at);
          return out;
        }
        return next(args);
      },
      { step: 'initialize', name: 'benchScheduleRunsSends' },
    );

    meter.reset();
    tickStart = performance.now();
    // Every schedule's first run is at most 60 s after its creation: one tick a minute ahead makes them all.
    const stats = await tick(Date.now() + 60_000);
    const tickMs = performance.now() - tickStart;
    const snap = meter.snapshot();
    const runs = stats.schedules.runs;
    if (runs !== count) throw new Error(`the tick made ${runs} runs of ${count} schedules`);
    const sorted = [...sends].sort((a, b) => a - b);
    const perRun = {
      calls: r2(Object.values(snap.calls).reduce((a, b) => a + b, 0) / runs),
      readUnits: r3(snap.readUnits / runs),
      writeUnits: r3(snap.writeUnits / runs),
      sqsRequests: r3(sqsRequests / runs),
    };
    const usd =
      perRun.readUnits * PRICES.dynamoReadRequestUnit +
      perRun.writeUnits * PRICES.dynamoWriteRequestUnit +
      perRun.sqsRequests * PRICES.sqsRequest +
      (tickMs / runs / 1000) * (SCHEDULER_MEMORY_MB / 1024) * PRICES.lambdaArmGbSecond;
    return {
      count,
      runs,
      tickMs: Math.round(tickMs),
      afterTickP50Ms: Math.round(percentile(sorted, 50)),
      afterTickP99Ms: Math.round(percentile(sorted, 99)),
      afterTickMaxMs: Math.round(sorted[sorted.length - 1]),
      perRun,
      usdPerMillion: r2(usd * 1e6),
    };
  } finally {
    await env.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchScheduleRuns({ count: Number(process.argv[2] ?? 1000), log: (l) => console.error(l) })
    .then((r) => console.log(JSON.stringify(r, null, 2)))
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
