/**
 * Publishing and queue benchmarks (issue 3): publish and consume+ack throughput and latency,
 * single and batched (10, 100), DynamoDB calls and capacity units per message, cost per million
 * messages, and consume latency at queue depth 10 versus 10,000 (the O(batch) claim).
 */
import { pathToFileURL } from 'node:url';
import { costPerMillion } from './prices';
import { expectStatus, latencyStats, runConcurrent, startBenchEnv, type BenchEnv, type LatencyStats, type MeterSnapshot } from './harness';

export interface OperationResult {
  operation: string;
  batch: number;
  messages: number;
  messagesPerSecond: number;
  latency: LatencyStats;
  dynamoCallsPerMessage: number;
  readUnitsPerMessage: number;
  writeUnitsPerMessage: number;
  costPerMillionUsd: number;
  calls: MeterSnapshot['calls'];
}

export interface DepthResult {
  depth: number;
  latency: LatencyStats;
  readUnitsPerConsume: number;
  dynamoCallsPerConsume: number;
}

export interface QueueBenchResult {
  operations: OperationResult[];
  depth: DepthResult[];
  depthRatioP50: number;
}

const PAYLOAD = 'x'.repeat(256);
const perMessage = (snap: MeterSnapshot, messages: number) => ({
  dynamoCallsPerMessage: Object.values(snap.calls).reduce((a, b) => a + b, 0) / messages,
  readUnitsPerMessage: snap.readUnits / messages,
  writeUnitsPerMessage: snap.writeUnits / messages,
});
const r3 = (n: number) => Math.round(n * 1000) / 1000;

function result(operation: string, batch: number, messages: number, elapsedMs: number, samples: number[], snap: MeterSnapshot): OperationResult {
  const per = perMessage(snap, messages);
  const latency = latencyStats(samples);
  return {
    operation,
    batch,
    messages,
    messagesPerSecond: Math.round((messages / elapsedMs) * 1000),
    latency,
    dynamoCallsPerMessage: r3(per.dynamoCallsPerMessage),
    readUnitsPerMessage: r3(per.readUnitsPerMessage),
    writeUnitsPerMessage: r3(per.writeUnitsPerMessage),
    costPerMillionUsd: costPerMillion({
      apiRequestsPerMessage: 1 / batch,
      readUnitsPerMessage: per.readUnitsPerMessage,
      writeUnitsPerMessage: per.writeUnitsPerMessage,
      lambdaMsPerMessage: latency.meanMs / batch,
    }),
    calls: snap.calls,
  };
}

async function createQueue(env: BenchEnv, name: string, topic: string) {
  expectStatus(await env.call('POST', '/queues', { name, topic_filter: topic }), 201, `create queue ${name}`);
}

async function publishN(env: BenchEnv, topic: string, n: number, batch: number, concurrency: number, samples?: number[]) {
  const requests = Math.ceil(n / batch);
  return runConcurrent(requests, concurrency, async (i) => {
    const size = Math.min(batch, n - i * batch);
    const res =
      batch === 1
        ? await env.call('POST', `/topics/${topic}/messages`, { payload: PAYLOAD })
        : await env.call('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: size }, () => ({ payload: PAYLOAD })) });
    expectStatus(res, 201, 'publish');
    samples?.push(res.ms);
  });
}

async function benchPublish(env: BenchEnv, batch: number, messages: number, concurrency: number): Promise<OperationResult> {
  const topic = `bench/publish/b${batch}`;
  await createQueue(env, `pub-b${batch}`, topic);
  env.meter.reset();
  const samples: number[] = [];
  const elapsed = await publishN(env, topic, messages, batch, concurrency, samples);
  return result('publish', batch, messages, elapsed, samples, env.meter.snapshot());
}

async function benchConsumeAck(env: BenchEnv, batch: number, messages: number, concurrency: number): Promise<OperationResult> {
  const topic = `bench/consume/b${batch}`;
  const queue = `con-b${batch}`;
  await createQueue(env, queue, topic);
  await publishN(env, topic, messages, 100, 8);
  env.meter.reset();
  const samples: number[] = [];
  let consumed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (consumed < messages) {
        const c = await env.call<{ messages: { message_id: string; receipt_handle: string }[] }>('POST', `/queues/${queue}/messages/consume`, {
          max_messages: batch,
          timeout_seconds: 0,
          visibility_timeout_seconds: 60,
        });
        expectStatus(c, 200, 'consume');
        const got = c.body.data.messages;
        if (got.length === 0) break;
        consumed += got.length;
        let ackMs: number;
        if (batch === 1) {
          const a = await env.call('POST', `/queues/${queue}/messages/${got[0].message_id}/ack`, { receipt_handle: got[0].receipt_handle });
          expectStatus(a, 200, 'ack');
          ackMs = a.ms;
        } else {
          const a = await env.call('POST', `/queues/${queue}/messages/ack`, { entries: got.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) });
          expectStatus(a, 200, 'batch ack');
          ackMs = a.ms;
        }
        // One sample per consume+ack round trip of `batch` messages.
        samples.push(c.ms + ackMs);
      }
    }),
  );
  const elapsed = performance.now() - started;
  if (consumed !== messages) throw new Error(`consume+ack b${batch}: consumed ${consumed} of ${messages}`);
  const r = result('consume+ack', batch, messages, elapsed, samples, env.meter.snapshot());
  // Two API requests per round trip (consume, ack or batch ack).
  r.costPerMillionUsd = costPerMillion({
    apiRequestsPerMessage: 2 / batch,
    readUnitsPerMessage: r.readUnitsPerMessage,
    writeUnitsPerMessage: r.writeUnitsPerMessage,
    lambdaMsPerMessage: r.latency.meanMs / batch,
  });
  return r;
}

/** Consume latency with `depth` messages waiting; depth is kept constant by republishing. */
async function benchDepth(env: BenchEnv, depth: number, iterations: number): Promise<DepthResult> {
  const topic = `bench/depth/d${depth}`;
  const queue = `depth-${depth}`;
  await createQueue(env, queue, topic);
  await publishN(env, topic, depth, 100, 8);
  const samples: number[] = [];
  let reads = 0;
  let calls = 0;
  for (let i = 0; i < iterations + 5; i++) {
    env.meter.reset();
    const c = await env.call<{ messages: { message_id: string; receipt_handle: string }[] }>('POST', `/queues/${queue}/messages/consume`, {
      max_messages: 1,
      timeout_seconds: 0,
      visibility_timeout_seconds: 300,
    });
    expectStatus(c, 200, 'consume');
    const snap = env.meter.snapshot();
    const m = c.body.data.messages[0];
    if (!m) throw new Error(`depth ${depth}: queue unexpectedly empty`);
    if (i >= 5) {
      // The first rounds warm the binding cache and the connection.
      samples.push(c.ms);
      reads += snap.readUnits;
      calls += Object.values(snap.calls).reduce((a, b) => a + b, 0);
    }
    expectStatus(await env.call('POST', `/queues/${queue}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle }), 200, 'ack');
    expectStatus(await env.call('POST', `/topics/${topic}/messages`, { payload: PAYLOAD }), 201, 'refill');
  }
  return { depth, latency: latencyStats(samples), readUnitsPerConsume: r3(reads / iterations), dynamoCallsPerConsume: r3(calls / iterations) };
}

export interface QueueBenchOptions {
  /** Scales the message counts (1 = the README figures). */
  scale?: number;
  log?: (l: string) => void;
}

export async function benchQueues({ scale = 1, log = () => undefined }: QueueBenchOptions = {}): Promise<QueueBenchResult> {
  const env = await startBenchEnv(log);
  try {
    const n = (x: number) => Math.max(100, Math.round(x * scale));
    const operations: OperationResult[] = [];
    for (const [batch, messages] of [[1, n(1000)], [10, n(3000)], [100, n(10000)]] as const) {
      log(`publish, batch ${batch}: ${messages} messages`);
      operations.push(await benchPublish(env, batch, messages, 8));
    }
    for (const [batch, messages] of [[1, n(1000)], [10, n(3000)], [100, n(10000)]] as const) {
      log(`consume+ack, batch ${batch}: ${messages} messages`);
      operations.push(await benchConsumeAck(env, batch, messages, 4));
    }
    const depth: DepthResult[] = [];
    for (const d of [10, 10_000]) {
      log(`consume latency at depth ${d}`);
      depth.push(await benchDepth(env, d, 50));
    }
    return { operations, depth, depthRatioP50: r3(depth[1].latency.p50Ms / depth[0].latency.p50Ms) };
  } finally {
    await env.stop();
  }
}

export function queueTables(r: QueueBenchResult): string {
  const ops = [
    '| operation | batch | messages | msg/s | p50 ms | p99 ms | DynamoDB calls/msg | RRU/msg | WRU/msg | USD per million msgs |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.operations.map(
      (o) =>
        `| ${o.operation} | ${o.batch} | ${o.messages} | ${o.messagesPerSecond} | ${o.latency.p50Ms} | ${o.latency.p99Ms} | ${o.dynamoCallsPerMessage} | ${o.readUnitsPerMessage} | ${o.writeUnitsPerMessage} | ${o.costPerMillionUsd} |`,
    ),
  ];
  const depth = [
    '| queue depth | consume p50 ms | consume p99 ms | DynamoDB calls/consume | RRU/consume |',
    '|---:|---:|---:|---:|---:|',
    ...r.depth.map((d) => `| ${d.depth} | ${d.latency.p50Ms} | ${d.latency.p99Ms} | ${d.dynamoCallsPerConsume} | ${d.readUnitsPerConsume} |`),
    '',
    `Consume p50 at depth 10,000 is ${r.depthRatioP50}x the p50 at depth 10.`,
  ];
  return [...ops, '', ...depth].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchQueues({ scale: Number(process.argv[2] ?? 1), log: (l) => console.error(l) })
    .then((r) => console.log(queueTables(r)))
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
