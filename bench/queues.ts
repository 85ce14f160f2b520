/**
 * Publishing and queue benchmarks (docs/performance.md): the publish → consume → ack lifecycle of ≤
 * 1 KB messages on one queue at batch 1, 10 and 100, through the real gateway and handlers on
 * DynamoDB Local and fauxqs. Per message: throughput, latency, DynamoDB calls and capacity units
 * (rate-limit counters included), SQS requests as AWS bills them, the write units landing on the
 * busiest single DynamoDB partition key (a queue's throughput ceiling in AWS is 1,000 WCU/s ÷
 * that), and the full-stack cost at list prices. Then consume latency at depth 10 versus 10,000
 * (O(batch), never O(depth)) and the long-poll wake-up after a publish.
 */
import { pathToFileURL } from 'node:url';
import { costPerMillion, LAMBDA_MEMORY_GB, PRICES, QUEUES_LAMBDA_MEMORY_GB } from './prices';
import { expectStatus, latencyStats, runConcurrent, startBenchEnv, type BenchEnv, type LatencyStats, type MeterSnapshot } from './harness';

interface PhaseResult {
  /** publish, consume+ack, or lifecycle (both). */
  operation: string;
  batch: number;
  messages: number;
  messagesPerSecond: number;
  latency: LatencyStats;
  dynamoCallsPerMessage: number;
  readUnitsPerMessage: number;
  writeUnitsPerMessage: number;
  sqsRequestsPerMessage: number;
  /** Write units per message on the busiest single partition key, and that key. */
  busiestKeyWritesPerMessage: number;
  busiestKey: string;
  costPerMillionUsd: number;
}

interface DepthResult {
  depth: number;
  latency: LatencyStats;
  readUnitsPerConsume: number;
  dynamoCallsPerConsume: number;
  sqsRequestsPerConsume: number;
}

export interface QueueBenchResult {
  phases: PhaseResult[];
  depth: DepthResult[];
  depthRatioP50: number;
  /** A publish sent while a consumer long-polls, to the consumer's answer (the publish's own time included). */
  wakeUp: LatencyStats;
  /** What the long-poll bulkhead adds to a consume that waits (lambda/queues/bulkhead.ts). */
  bulkhead: BulkheadCost;
}

interface BulkheadCost {
  rounds: number;
  /** DynamoDB units and calls per waiting consume, less the same consume asking for no wait. */
  readUnitsPerConsume: number;
  writeUnitsPerConsume: number;
  dynamoCallsPerConsume: number;
  /** SQS requests (billed) per waiting consume, less the same consume asking for no wait. */
  sqsRequestsPerConsume: number;
  /** The consume's own units with no wait (its rate-limit counter, the queue's read, consumer record). */
  baseReadUnitsPerConsume: number;
  baseWriteUnitsPerConsume: number;
}

const PAYLOAD = 'x'.repeat(256);
const r3 = (n: number) => Math.round(n * 1000) / 1000;
const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);

/** The difference of two cumulative snapshots (the consume+ack part of a lifecycle run). */
function minus(a: MeterSnapshot, b: MeterSnapshot): MeterSnapshot {
  const diff = (x: Record<string, number>, y: Record<string, number>) => Object.fromEntries(Object.keys(x).map((k) => [k, x[k] - (y[k] ?? 0)]));
  return {
    calls: diff(a.calls, b.calls),
    readUnits: a.readUnits - b.readUnits,
    writeUnits: a.writeUnits - b.writeUnits,
    busiestKey: a.busiestKey,
    sqsRequests: diff(a.sqsRequests, b.sqsRequests),
    sqsBilledRequests: a.sqsBilledRequests - b.sqsBilledRequests,
  };
}

function phase(operation: string, batch: number, messages: number, elapsedMs: number, samples: number[], snap: MeterSnapshot, apiRequestsPerBatch: number, memoryGb = LAMBDA_MEMORY_GB): PhaseResult {
  const latency = latencyStats(samples);
  const per = (n: number) => n / messages;
  const readUnits = per(snap.readUnits);
  const writeUnits = per(snap.writeUnits);
  const sqs = per(snap.sqsBilledRequests);
  return {
    operation,
    batch,
    messages,
    messagesPerSecond: Math.round((messages / elapsedMs) * 1000),
    latency,
    dynamoCallsPerMessage: r3(per(sum(snap.calls))),
    readUnitsPerMessage: r3(readUnits),
    writeUnitsPerMessage: r3(writeUnits),
    sqsRequestsPerMessage: r3(sqs),
    busiestKeyWritesPerMessage: r3(per(snap.busiestKey.writeUnits)),
    busiestKey: snap.busiestKey.key.replace(/NS#bench-[0-9a-f]+/, 'NS#{ns}').replace(/[0-9A-HJKMNP-TV-Z]{26}/g, '{id}').replace(/#\d{10}$/, '#{minute}'),
    costPerMillionUsd: costPerMillion({
      apiRequestsPerMessage: apiRequestsPerBatch / batch,
      readUnitsPerMessage: readUnits,
      writeUnitsPerMessage: writeUnits,
      sqsRequestsPerMessage: sqs,
      lambdaMsPerMessage: latency.meanMs / batch,
      memoryGb,
    }),
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

/**
 * Consumes and acks (single or batch ack) until `messages` are done; one sample per round trip.
 * Consumes as clients do, with the default `timeout_seconds` (30): a consume that finds messages
 * in its first, unslotted second pays no long-poll slot, one that waits pays it. Returns the
 * meter and the time when the last message was acked: consumes still waiting then (the other
 * workers' last ones) are woken by a publish per worker after it, outside the figures.
 */
async function consumeAck(env: BenchEnv, queue: string, topic: string, batch: number, messages: number, concurrency: number, samples: number[]) {
  let consumed = 0;
  let done: { snap: MeterSnapshot; at: number } | undefined;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!done) {
        const c = await env.call<{ messages: { message_id: string; receipt_handle: string }[] }>('POST', `/queues/${queue}/messages/consume`, {
          max_messages: batch,
          visibility_timeout_seconds: 60,
        });
        expectStatus(c, 200, 'consume');
        if (done) break; // woken after the last ack
        const got = c.body.data.messages;
        if (got.length === 0) {
          if (c.headers['x-long-poll-shortened']) continue;
          throw new Error(`consume+ack of ${queue}: a whole wait found nothing after ${consumed} of ${messages}`);
        }
        consumed += got.length;
        const a =
          batch === 1
            ? await env.call('POST', `/queues/${queue}/messages/${got[0].message_id}/ack`, { receipt_handle: got[0].receipt_handle })
            : await env.call('POST', `/queues/${queue}/messages/ack`, { entries: got.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) });
        expectStatus(a, 200, 'ack');
        samples.push(c.ms + a.ms);
        if (consumed >= messages && !done) {
          done = { snap: env.meter.snapshot(), at: performance.now() };
          await publishN(env, topic, concurrency, 1, concurrency); // wakes the consumes still waiting
        }
      }
    }),
  );
  if (consumed !== messages || !done) throw new Error(`consume+ack of ${queue}: consumed ${consumed} of ${messages}`);
  return done;
}

/** Publish then consume+ack every message of one queue at `batch`: three rows. */
async function benchLifecycle(env: BenchEnv, batch: number, messages: number): Promise<PhaseResult[]> {
  const queue = `life-b${batch}`;
  const topic = `bench/life/b${batch}`;
  await createQueue(env, queue, topic);
  env.meter.reset();
  const pubSamples: number[] = [];
  const pubMs = await publishN(env, topic, messages, batch, 8, pubSamples);
  const afterPublish = env.meter.snapshot();
  const conSamples: number[] = [];
  const started = performance.now();
  const { snap: all, at } = await consumeAck(env, queue, topic, batch, messages, 4, conSamples);
  const conMs = at - started;
  const pub = phase('publish', batch, messages, pubMs, pubSamples, afterPublish, 1);
  const con = phase('consume+ack', batch, messages, conMs, conSamples, minus(all, afterPublish), 2, QUEUES_LAMBDA_MEMORY_GB);
  // The lifecycle: every unit and request of both, the busiest key over the whole run, and the
  // latency of a message's three requests (publish p50 + consume+ack p50 as a rough sum).
  const life = phase('lifecycle', batch, messages, pubMs + conMs, [], all, 3);
  life.latency = { n: 0, p50Ms: r3(pub.latency.p50Ms + con.latency.p50Ms), p99Ms: r3(pub.latency.p99Ms + con.latency.p99Ms), meanMs: r3(pub.latency.meanMs + con.latency.meanMs) };
  life.messagesPerSecond = Math.round((messages / (pubMs + conMs)) * 1000);
  life.costPerMillionUsd = r3(pub.costPerMillionUsd + con.costPerMillionUsd);
  return [pub, con, life];
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
  let sqs = 0;
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
      calls += sum(snap.calls);
      sqs += snap.sqsBilledRequests;
    }
    expectStatus(await env.call('POST', `/queues/${queue}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle }), 200, 'ack');
    expectStatus(await env.call('POST', `/topics/${topic}/messages`, { payload: PAYLOAD }), 201, 'refill');
  }
  return { depth, latency: latencyStats(samples), readUnitsPerConsume: r3(reads / iterations), dynamoCallsPerConsume: r3(calls / iterations), sqsRequestsPerConsume: r3(sqs / iterations) };
}

/** A consumer long-polls an empty queue; a publish lands; how long until the consumer has it. */
async function benchWakeUp(env: BenchEnv, rounds: number): Promise<LatencyStats> {
  const topic = 'bench/wake';
  const queue = 'wake';
  await createQueue(env, queue, topic);
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const waiting = env.call<{ messages: { message_id: string; receipt_handle: string }[] }>('POST', `/queues/${queue}/messages/consume`, { timeout_seconds: 10 });
    await new Promise((r) => setTimeout(r, 100)); // the consumer is waiting
    const sent = performance.now();
    const [c, p] = await Promise.all([waiting.then((r) => ({ r, at: performance.now() })), env.call('POST', `/topics/${topic}/messages`, { payload: PAYLOAD })]);
    expectStatus(p, 201, 'publish');
    expectStatus(c.r, 200, 'consume');
    const m = c.r.body.data.messages[0];
    if (!m) throw new Error('the long poll returned no message');
    samples.push(c.at - sent);
    expectStatus(await env.call('POST', `/queues/${queue}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle }), 200, 'ack');
  }
  return latencyStats(samples);
}

/**
 * The long-poll bulkhead's DynamoDB units per waiting consume: a consume of an empty queue with
 * `timeout_seconds: 3` (its first second unslotted, then a slot for the rest, given back) less the
 * same consume with `timeout_seconds: 0` (the same first second, no slot), averaged over `rounds`
 * pairs. (With 1 s the whole wait is the unslotted first second: no slot to measure.)
 */
async function benchBulkhead(env: BenchEnv, rounds: number): Promise<BulkheadCost> {
  const queue = 'bulkhead';
  await createQueue(env, queue, 'bench/bulkhead');
  let reads = 0;
  let writes = 0;
  let calls = 0;
  let sqs = 0;
  let baseReads = 0;
  let baseWrites = 0;
  for (let i = 0; i < rounds + 2; i++) {
    const measured: MeterSnapshot[] = [];
    for (const timeout_seconds of [3, 0]) {
      env.meter.reset();
      expectStatus(await env.call('POST', `/queues/${queue}/messages/consume`, { timeout_seconds }), 200, 'consume');
      measured.push(env.meter.snapshot());
    }
    if (i < 2) continue; // warm-up: the first rounds create the slot items and the consumer records
    reads += measured[0].readUnits - measured[1].readUnits;
    writes += measured[0].writeUnits - measured[1].writeUnits;
    calls += sum(measured[0].calls) - sum(measured[1].calls);
    sqs += measured[0].sqsBilledRequests - measured[1].sqsBilledRequests;
    baseReads += measured[1].readUnits;
    baseWrites += measured[1].writeUnits;
  }
  return {
    rounds, readUnitsPerConsume: r3(reads / rounds), writeUnitsPerConsume: r3(writes / rounds), dynamoCallsPerConsume: r3(calls / rounds), sqsRequestsPerConsume: r3(sqs / rounds),
    baseReadUnitsPerConsume: r3(baseReads / rounds), baseWriteUnitsPerConsume: r3(baseWrites / rounds),
  };
}

/** Seconds in a month of 730 hours, and the longest wait of a consume (MAX_LONG_POLL_SECONDS). */
const MONTH_S = 730 * 3600;
const WAIT_S = 25;
/**
 * SQS receives of one idle consume: the unslotted first second, then the slotted rest (24 s: the
 * receives stop 2 s before the 26 s answer deadline, lambda/queues/consume.ts) in long polls of at
 * most 20 s each: 1 + 2.
 */
const IDLE_RECEIVES = 1 + Math.ceil((WAIT_S - 1) / 20);

/**
 * USD a month of one consumer long-polling an empty queue without pause: one request every 25 s
 * (API Gateway, WAF, Lambda request), the Lambda execution held all month at `memoryGb` (arm64),
 * its {@link IDLE_RECEIVES} SQS receives, and its measured DynamoDB units: the consume's own
 * (its rate-limit counter, the queue's read) and the slot's.
 */
function idleConsumerMonthUsd(b: BulkheadCost, memoryGb: number): number {
  const requests = MONTH_S / WAIT_S;
  const perRequest =
    PRICES.apiGatewayRestRequest + PRICES.wafRequest + PRICES.lambdaRequest +
    IDLE_RECEIVES * PRICES.sqsRequest +
    (b.baseReadUnitsPerConsume + b.readUnitsPerConsume) * PRICES.dynamoReadRequestUnit +
    (b.baseWriteUnitsPerConsume + b.writeUnitsPerConsume) * PRICES.dynamoWriteRequestUnit;
  return Math.round((requests * perRequest + MONTH_S * memoryGb * PRICES.lambdaArmGbSecond) * 100) / 100;
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
    const phases: PhaseResult[] = [];
    for (const [batch, messages] of [[1, n(1000)], [10, n(3000)], [100, n(10000)]] as const) {
      log(`publish → consume → ack, batch ${batch}: ${messages} messages`);
      phases.push(...(await benchLifecycle(env, batch, messages)));
    }
    const depth: DepthResult[] = [];
    for (const d of [10, 10_000]) {
      log(`consume latency at depth ${d}`);
      depth.push(await benchDepth(env, d, 50));
    }
    log('long-poll wake-up');
    const wakeUp = await benchWakeUp(env, Math.max(20, Math.round(100 * scale)));
    log('long-poll bulkhead cost');
    const bulkhead = await benchBulkhead(env, 10);
    return { phases, depth, depthRatioP50: r3(depth[1].latency.p50Ms / depth[0].latency.p50Ms), wakeUp, bulkhead };
  } finally {
    await env.stop();
  }
}

export function queueTables(r: QueueBenchResult): string {
  const ops = [
    '| operation | batch | messages | msg/s | p50 ms | p99 ms | DynamoDB calls/msg | RRU/msg | WRU/msg | SQS requests/msg | busiest key WRU/msg | USD per million msgs |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.phases.map(
      (o) =>
        `| ${o.operation} | ${o.batch} | ${o.messages} | ${o.messagesPerSecond} | ${o.latency.p50Ms} | ${o.latency.p99Ms} | ${o.dynamoCallsPerMessage} | ${o.readUnitsPerMessage} | ${o.writeUnitsPerMessage} | ${o.sqsRequestsPerMessage} | ${o.busiestKeyWritesPerMessage} | ${o.costPerMillionUsd} |`,
    ),
  ];
  const lifecycle = r.phases.filter((p) => p.operation === 'lifecycle');
  const ceilings = lifecycle.map((p) => `batch ${p.batch}: ${p.busiestKeyWritesPerMessage} WRU/msg on \`${p.busiestKey}\` (≈ ${Math.round(1000 / Math.max(p.busiestKeyWritesPerMessage, 0.001)).toLocaleString('en-US')} messages/s per key in AWS)`);
  const depth = [
    '| queue depth | consume p50 ms | consume p99 ms | DynamoDB calls/consume | RRU/consume | SQS requests/consume |',
    '|---:|---:|---:|---:|---:|---:|',
    ...r.depth.map((d) => `| ${d.depth} | ${d.latency.p50Ms} | ${d.latency.p99Ms} | ${d.dynamoCallsPerConsume} | ${d.readUnitsPerConsume} | ${d.sqsRequestsPerConsume} |`),
  ];
  return [
    ...ops,
    '',
    `Lifecycle = publish + consume + ack of each message (latency: the two p50s added). Busiest partition key over the lifecycle: ${ceilings.join('; ')}. The rate-limit counter of a namespace's category is shared by all its queues: its limit, not the queue, bounds a namespace (docs/rate-limits.md).`,
    '',
    ...depth,
    '',
    `Consume p50 at depth 10,000 is ${r.depthRatioP50}x the p50 at depth 10. Long-poll wake-up (a publish sent while a consumer waits, to the consumer's answer; the publish's own time included): p50 ${r.wakeUp.p50Ms} ms, p99 ${r.wakeUp.p99Ms} ms over ${r.wakeUp.n} rounds.`,
    '',
    `Consumes above use the default \`timeout_seconds\` (30), as clients do: a consume that finds messages in its first, unslotted second takes no long-poll slot. Long-poll bulkhead (a consume that waits takes a slot and gives it back): ${r.bulkhead.readUnitsPerConsume} RRU, ${r.bulkhead.writeUnitsPerConsume} WRU, ${r.bulkhead.dynamoCallsPerConsume} DynamoDB calls and ${r.bulkhead.sqsRequestsPerConsume} SQS requests per waiting consume, over ${r.bulkhead.rounds} consumes (a 3 s consume of an empty queue less the same consume with no wait). An idle consumer long-polling all month (one 25 s consume after another, Lambda arm64 held the whole time): $${idleConsumerMonthUsd(r.bulkhead, QUEUES_LAMBDA_MEMORY_GB)} at ${QUEUES_LAMBDA_MEMORY_GB * 1024} MB (the queues function), $${idleConsumerMonthUsd(r.bulkhead, 0.15625)} at 160 MB, $${idleConsumerMonthUsd(r.bulkhead, 0.25)} at 256 MB; $${idleConsumerMonthUsd({ ...r.bulkhead, readUnitsPerConsume: 0, writeUnitsPerConsume: 0 }, QUEUES_LAMBDA_MEMORY_GB)} without the slot's units.`,
    '',
    `Costs: AWS list prices for ${PRICES.region} read on ${PRICES.readAt} (bench/prices.ts): API Gateway REST and Lambda requests, Lambda arm64 for the measured handler time at each function's memory (publish 256 MB, consume and ack ${QUEUES_LAMBDA_MEMORY_GB * 1024} MB; handler time is measured on a local core, so it does not grow as a smaller function's CPU share shrinks), DynamoDB on-demand units, SQS standard requests (each 64 KiB of payload one request).`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchQueues({ scale: Number(process.argv[2] ?? 1), log: (l) => console.error(l) })
    .then((r) => console.log(queueTables(r)))
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
