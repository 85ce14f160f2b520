/**
 * Webhook benchmarks (docs/performance.md): delivery throughput and publish-to-delivery latency
 * (p50/p99) against a receiver on 127.0.0.1, through the real publish path, the delivery queue on
 * fauxqs with the local event source, and the delivery handler on DynamoDB Local; then the AWS cost
 * per million deliveries (SQS, Lambda, DynamoDB, and Step Functions transitions for the share of
 * deliveries that need a retry). Runs alone with `npx tsx bench/webhooks.ts [scale]`, or from
 * `npm run bench`.
 */
import { receiver } from './receiver';
import { pathToFileURL } from 'node:url';
import { expectStatus, latencyStats, runConcurrent, startBenchEnv, type LatencyStats } from './harness';
import { PRICES } from './prices';
import { benchDeadEndpoint, benchRateLimit, limitTables, type DeadEndpointRun, type RateLimitRun } from './webhooks-limits';
import { SLOW_MS, benchNeighbours, neighbourTable, type NeighbourRun } from './webhooks-neighbours';

interface ReceiverRun {
  /** The receiver's answer time (ms). */
  receiverMs: number;
  deliveries: number;
  deliveriesPerSecond: number;
  /** Delivery handler time per delivery (ms): a batch's wall time over its deliveries, as Lambda bills it. */
  handlerMsPerDelivery: number;
  /** SQS send requests per delivery: the publish's (0.1 with batches of 100) plus the deferrals' (jobs put back over their lane's share). */
  sqsSendsPerDelivery: number;
  /** Jobs the event source handed to the delivery function per delivery: 1, plus each time a job came back after a deferral (the slow lane's churn). */
  jobsReceivedPerDelivery: number;
}

interface WebhookBenchResult {
  latency: LatencyStats;
  deliveries: number;
  deliveriesPerSecond: number;
  /**
   * Delivery handler time per delivery (ms) in the throughput run: 8 local pollers saturating one
   * DynamoDB Local and the machine's two cores, so each batch waits on the others' writes.
   */
  handlerMsPerDelivery: number;
  /**
   * Delivery handler time per delivery (ms) with one batch at a time (batches of 10 from a backlog
   * published beforehand, no publishes meanwhile): what one invocation takes when the engines are
   * not busy with the bench's own other batches, as each Lambda invocation has its own CPU and
   * DynamoDB spreads the partitions. Used for the Lambda GB-seconds in `costs`.
   */
  handlerMsPerDeliveryOneAtATime: number;
  /** Jobs per batch in that run. */
  jobsPerBatchOneAtATime: number;
  dynamoCallsPerDelivery: number;
  readUnitsPerDelivery: number;
  writeUnitsPerDelivery: number;
  /** The partition key that took the most write units, and its units per delivery. */
  busiestKey: { key: string; writeUnitsPerDelivery: number };
  /** SQS send requests per delivery (publish and deferrals), as billed. */
  sqsSendsPerDelivery: number;
  /** Jobs per delivery batch the local event source handed over (at most DELIVERY_BATCH_SIZE): the per-batch writes and invocations divide by it. */
  jobsPerBatch: number;
  /** USD per million deliveries: with the one-at-a-time handler time, and with the saturated run's. */
  costs: { failingShare: number; usdPerMillion: number; usdPerMillionSaturated: number }[];
  /** The fast (0 ms) and slow (200 ms) receiver alone. */
  receivers: ReceiverRun[];
  /** A 0 ms webhook at a fixed offered load alone, beside a 0 ms and beside a 200 ms webhook of its namespace (bench/webhooks-neighbours.ts). */
  neighbours: NeighbourRun;
  /** The rate limit over 30 s and a dead endpoint's way to disabled (bench/webhooks-limits.ts). */
  limits: { rate: RateLimitRun; dead: DeadEndpointRun };
}

/** Memory of the delivery and attempt functions (lib/constructs/webhook-delivery.ts). */
const DELIVERY_MEMORY_GB = 0.5;
/**
 * Step Functions transitions of a delivery retried once: Wait and Queue (the SendMessage of the
 * retry job; the execution start is not billed as a transition).
 */
const TRANSITIONS_PER_RETRIED_DELIVERY = 2;


/**
 * Cost of one million deliveries in AWS. Per delivery: the measured SQS send requests (jobs go 10
 * to a SendMessageBatch when a publish or a batch publish has several; a single publish to one
 * webhook sends 1), the event source's ReceiveMessage and DeleteMessageBatch (one each per
 * measured batch; the mapping's empty long polls are a cost per hour, not per delivery),
 * one Lambda invocation per measured batch plus the measured handler time, the measured
 * DynamoDB units; a retried delivery adds its transitions, the workflow's SendMessage and the
 * retry job's receive and delete, and its attempt as one more job of a delivery batch.
 */
function costPerMillion(r: Pick<WebhookBenchResult, 'readUnitsPerDelivery' | 'writeUnitsPerDelivery' | 'sqsSendsPerDelivery' | 'jobsPerBatch'> & { handlerMsPerDelivery: number }, failingShare: number): number {
  // The event source's ReceiveMessage and DeleteMessageBatch: one each per batch as measured (at
  // most 10 messages a call; a batch of 9 took a receive and a delete for 9).
  const perBatch = 1 / Math.min(10, Math.max(1, r.jobsPerBatch));
  const sqs = (r.sqsSendsPerDelivery + 2 * perBatch) * PRICES.sqsRequest;
  // One invocation per batch as measured (the local event source gathers batches as the mapping does).
  const lambda = PRICES.lambdaRequest / Math.max(1, r.jobsPerBatch) + (r.handlerMsPerDelivery / 1000) * DELIVERY_MEMORY_GB * PRICES.lambdaArmGbSecond;
  const dynamo = r.readUnitsPerDelivery * PRICES.dynamoReadRequestUnit + r.writeUnitsPerDelivery * PRICES.dynamoWriteRequestUnit;
  const retry =
    failingShare *
    (TRANSITIONS_PER_RETRIED_DELIVERY * PRICES.stepFunctionsTransition +
      (1 + 2 * perBatch) * PRICES.sqsRequest +
      PRICES.lambdaRequest / Math.max(1, r.jobsPerBatch) +
      (r.handlerMsPerDelivery / 1000) * DELIVERY_MEMORY_GB * PRICES.lambdaArmGbSecond +
      r.readUnitsPerDelivery * PRICES.dynamoReadRequestUnit +
      2 * r.writeUnitsPerDelivery * PRICES.dynamoWriteRequestUnit);
  return Math.round((sqs + lambda + dynamo + retry) * 1e6 * 100) / 100;
}

async function benchWebhooks({ scale = 1, log = () => undefined }: { scale?: number; log?: (l: string) => void } = {}): Promise<WebhookBenchResult> {
  const env = await startBenchEnv(log);
  const { setRetryWorkflow } = await import('../lambda/webhooks/storage/retry-workflow');
  const { closeAgents } = await import('../lambda/webhooks/storage/http-delivery');
  const { processBatch } = await import('../lambda/webhooks/delivery-batch');
  const { runAction } = await import('../lambda/handlers/webhook-attempt');
  const { resetConfig } = await import('../lambda/core/config');
  const { ensureDeliveryQueues } = await import('../local/webhooks');
  const { LocalSqsEventSource } = await import('../local/event-source');
  const { LocalRetryWorkflow } = await import('../local/stepfunctions');
  const { DELIVERY_BATCH_SIZE, DELIVERY_BATCHING_WINDOW_SECONDS } = await import('../lambda/webhooks/storage/delivery-queue');
  let handlerMs = 0;
  let batchesRun = 0;
  let jobsRun = 0;
  /** Jobs received per webhook name (the neighbour section tells its fast webhook's apart). */
  const jobsByWebhook = new Map<string, number>();
  const dq = await ensureDeliveryQueues('bench-deliveries');
  process.env.MSG_WEBHOOK_QUEUE_URL = dq.url;
  resetConfig();
  /**
   * Waits until `src` has no batch in flight: a batch's last POST reaches the receiver before its
   * handler returns, so its time and count are added only then.
   */
  const idle = async (src: { busy: number }) => {
    while (src.busy > 0) await new Promise((r) => setTimeout(r, 5));
  };
  /** The delivery function's event source with `concurrency` local pollers (batches at once). */
  const source = (concurrency: number, q: { url: string; arn: string } = dq) =>
    new LocalSqsEventSource(
      async (event) => {
        const t = performance.now();
        const out = await processBatch(event);
        handlerMs += performance.now() - t;
        batchesRun++;
        jobsRun += event.Records.length;
        for (const rec of event.Records) {
          const name = String((JSON.parse(rec.body) as { webhook_name?: string }).webhook_name);
          jobsByWebhook.set(name, (jobsByWebhook.get(name) ?? 0) + 1);
        }
        return out;
      },
      { queueUrl: q.url, queueArn: q.arn, batchSize: DELIVERY_BATCH_SIZE, batchingWindowMs: DELIVERY_BATCHING_WINDOW_SECONDS * 1000, concurrency },
    ).start();
  const queue = source(8);
  const workflow = new LocalRetryWorkflow(runAction);
  setRetryWorkflow(workflow);

  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  /** Deliveries arrived at one receiver, and a wait for a count. */
  const counter = () => {
    const c = { n: 0, target: 0, waiter: undefined as (() => void) | undefined };
    return {
      c,
      hit(id: string) {
        c.n++;
        const t = sentAt.get(id);
        if (t !== undefined) latencies.push(performance.now() - t);
        if (c.n >= c.target) c.waiter?.();
      },
      until: (n: number) =>
        new Promise<void>((resolve) => {
          c.target = n;
          c.waiter = resolve;
          if (c.n >= n) resolve();
        }),
    };
  };
  const fast = counter();
  const slow = counter();
  const recv = await receiver((id) => fast.hit(id));
  const slowRecv = await receiver((id) => slow.hit(id), SLOW_MS);
  try {
    const topic = 'bench/webhooks';
    const slowTopic = 'bench/webhooks-slow';
    expectStatus(await env.call('POST', '/webhooks', { name: 'bench', url: recv.url, topic_filter: topic }), 201, 'create webhook');
    expectStatus(await env.call('POST', '/webhooks', { name: 'bench-slow', url: slowRecv.url, topic_filter: slowTopic }), 201, 'create slow webhook');

    // Latency: one publish at a time, publish start to arrival at the receiver.
    const single = Math.max(20, Math.round(300 * scale));
    log(`webhooks: ${single} single publishes for latency`);
    for (let i = 0; i < single; i++) {
      const t = performance.now();
      const res = await env.call('POST', `/topics/${topic}/messages`, { payload: `{"i":${i}}` });
      expectStatus(res, 201, 'publish');
      sentAt.set((res.body.data as { message_id: string }).message_id, t);
      await fast.until(i + 1);
    }
    const latency = latencyStats(latencies);

    // Throughput: batches of 100, 4 publishers, until every delivery arrived.
    const batches = Math.max(5, Math.round(50 * scale));
    const n = batches * 100;
    const publishAll = (t: string, count = batches) =>
      runConcurrent(count, 4, async () => {
        const res = await env.call('POST', `/topics/${t}/messages/batch`, { messages: Array.from({ length: 100 }, (_, i) => ({ payload: `{"b":${i}}` })) });
        expectStatus(res, 201, 'batch publish');
      });
    /** Publishes n messages to the receiver's topic; deliveries per second and handler ms per delivery until all arrived. */
    const run = async (t: string, c: ReturnType<typeof counter>, count = batches) => {
      const base = c.c.n;
      const started = performance.now();
      const done = c.until(base + count * 100);
      await publishAll(t, count);
      await done;
      const ms = performance.now() - started;
      return { perSecond: Math.round((count * 100 * 1000) / ms), ms, deliveries: count * 100 };
    };

    /** SQS send requests so far, and the churn of a run: sends and jobs received per delivery. */
    const sqsSends = () => Object.entries(env.meter.snapshot().sqsRequests).filter(([a]) => a.startsWith('SendMessage')).reduce((x, [, v]) => x + v, 0);
    const churn = async <T>(deliveries: number, f: () => Promise<T>) => {
      const [s0, j0] = [sqsSends(), jobsRun];
      const out = await f();
      return { out, sqsSendsPerDelivery: Math.round(((sqsSends() - s0) / deliveries) * 1000) / 1000, jobsReceivedPerDelivery: Math.round(((jobsRun - j0) / deliveries) * 1000) / 1000 };
    };

    log(`webhooks: ${n} deliveries for throughput (0 ms receiver)`);
    env.meter.reset();
    handlerMs = 0;
    batchesRun = 0;
    const { out: alone, ...fastChurn } = await churn(n, () => run(topic, fast));
    await idle(queue);
    const jobsPerBatch = Math.round((n / Math.max(1, batchesRun)) * 10) / 10;
    const fastHandler = handlerMs;
    // The meter also saw each publish request's one strongly consistent read of the bindings
    // version (1 RRU; the topic has only the webhook, whose sink writes nothing to DynamoDB).
    const snap = env.meter.snapshot();
    const calls = Object.values(snap.calls).reduce((a, b) => a + b, 0) - batches;
    const sends = Object.entries(snap.sqsRequests).filter(([a]) => a.startsWith('SendMessage')).reduce((x, [, v]) => x + v, 0);

    // Handler time as one invocation takes it: a backlog is published to a queue of its own with no
    // poller on it, then drained one batch at a time (batches of 10), so no batch waits on the
    // bench's others. (A queue of its own: stopping a source leaves its long polls open on the
    // queue, and they would take messages and hide them for the visibility timeout.)
    const calmBatches = Math.max(2, Math.round(10 * scale));
    log(`webhooks: ${calmBatches * 100} deliveries, one batch at a time, for the handler time`);
    const cq = await ensureDeliveryQueues('bench-deliveries-calm');
    const useQueue = (url: string) => {
      process.env.MSG_WEBHOOK_QUEUE_URL = url;
      resetConfig();
    };
    useQueue(cq.url);
    const calmDone = fast.until(fast.c.n + calmBatches * 100);
    await publishAll(topic, calmBatches);
    handlerMs = 0;
    batchesRun = 0;
    const calm = source(1, cq);
    await calmDone;
    await idle(calm);
    const calmHandlerMs = handlerMs;
    const calmJobsPerBatch = Math.round(((calmBatches * 100) / Math.max(1, batchesRun)) * 10) / 10;
    await calm.stop();
    useQueue(dq.url);

    log(`webhooks: ${n} deliveries for throughput (${SLOW_MS} ms receiver)`);
    handlerMs = 0;
    const { out: slowAlone, ...slowChurn } = await churn(n, () => run(slowTopic, slow));
    const slowHandler = handlerMs;

    // The slow neighbour at a fixed offered load below capacity (bench/webhooks-neighbours.ts).
    const neighbours = await benchNeighbours(env, { windowSeconds: Math.max(10, Math.round(20 * scale)), jobsReceived: (name?: string) => (name === undefined ? jobsRun : (jobsByWebhook.get(name) ?? 0)), log });

    const dead = await benchDeadEndpoint(env, workflow, { log });
    const rate = await benchRateLimit(env, { log });

    const r = {
      latency,
      deliveries: n,
      deliveriesPerSecond: alone.perSecond,
      handlerMsPerDelivery: Math.round((fastHandler / n) * 100) / 100,
      handlerMsPerDeliveryOneAtATime: Math.round((calmHandlerMs / (calmBatches * 100)) * 100) / 100,
      jobsPerBatchOneAtATime: calmJobsPerBatch,
      dynamoCallsPerDelivery: Math.round((calls / n) * 100) / 100,
      readUnitsPerDelivery: Math.round(((snap.readUnits - batches) / n) * 1000) / 1000,
      writeUnitsPerDelivery: Math.round((snap.writeUnits / n) * 1000) / 1000,
      busiestKey: { key: snap.busiestKey.key, writeUnitsPerDelivery: Math.round((snap.busiestKey.writeUnits / n) * 1000) / 1000 },
      sqsSendsPerDelivery: Math.round((sends / n) * 1000) / 1000,
      jobsPerBatch,
    };
    return {
      ...r,
      costs: [0, 0.01, 0.1].map((failingShare) => ({
        failingShare,
        usdPerMillion: costPerMillion({ ...r, handlerMsPerDelivery: r.handlerMsPerDeliveryOneAtATime }, failingShare),
        usdPerMillionSaturated: costPerMillion(r, failingShare),
      })),
      receivers: [
        { receiverMs: 0, deliveries: n, deliveriesPerSecond: alone.perSecond, handlerMsPerDelivery: r.handlerMsPerDelivery, ...fastChurn },
        { receiverMs: SLOW_MS, deliveries: n, deliveriesPerSecond: slowAlone.perSecond, handlerMsPerDelivery: Math.round((slowHandler / n) * 100) / 100, ...slowChurn },
      ],
      neighbours,
      limits: { rate, dead },
    };
  } finally {
    await queue.stop();
    setRetryWorkflow(undefined);
    await closeAgents();
    for (const x of [recv, slowRecv]) {
      x.server.closeAllConnections();
      await new Promise<void>((res) => x.server.close(() => res()));
    }
    await env.stop();
  }
}

function webhookTables(r: WebhookBenchResult): string {
  return [
    '| deliveries | deliveries/s | publish→delivery p50 ms | p99 ms | handler ms/delivery | DynamoDB calls/delivery | RRU/delivery | WRU/delivery | busiest key WRU/delivery | SQS sends/delivery |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${r.deliveries} | ${r.deliveriesPerSecond} | ${r.latency.p50Ms} | ${r.latency.p99Ms} | ${r.handlerMsPerDelivery} | ${r.dynamoCallsPerDelivery} | ${r.readUnitsPerDelivery} | ${r.writeUnitsPerDelivery} | ${r.busiestKey.writeUnitsPerDelivery} | ${r.sqsSendsPerDelivery} |`,
    '',
    `Jobs per delivery batch: ${r.jobsPerBatch} (the counters, the log page and the namespace share are written per batch). Busiest key: \`${r.busiestKey.key.replace(/NS#[^#]+#/, 'NS#{ns}#').replace(/#\d{10}#/, '#{minute}#')}\`.`,
    '',
    `Handler time per delivery, one batch at a time (batches of ${r.jobsPerBatchOneAtATime} jobs from a backlog, nothing else running): ${r.handlerMsPerDeliveryOneAtATime} ms; in the throughput run above (8 batches at once on one DynamoDB Local): ${r.handlerMsPerDelivery} ms.`,
    '',
    '| share of deliveries retried once | USD per million deliveries (handler time one batch at a time) | with the throughput run\'s handler time |',
    '|---:|---:|---:|',
    ...r.costs.map((c) => `| ${c.failingShare * 100} % | ${c.usdPerMillion} | ${c.usdPerMillionSaturated} |`),
    '',
    '| receiver answers in | deliveries | deliveries/s | handler ms/delivery | SQS sends/delivery | jobs received/delivery |',
    '|---:|---:|---:|---:|---:|---:|',
    ...r.receivers.map((x) => `| ${x.receiverMs} ms | ${x.deliveries} | ${x.deliveriesPerSecond} | ${x.handlerMsPerDelivery} | ${x.sqsSendsPerDelivery} | ${x.jobsReceivedPerDelivery} |`),
    '',
    `SQS sends per delivery: the publish's (0.1: batches of 100 go 10 to a SendMessageBatch) plus the deferrals' (jobs over their namespace's share, in their lane, put back with one SendMessageBatch per batch). Jobs received per delivery: 1 plus each time a deferred job came back (each costs a share of a ReceiveMessage, a DeleteMessageBatch and an invocation). The ${SLOW_MS} ms webhook's jobs take the slow lane (25 jobs, 3 batches of the namespace), so its backlog churns more than the 0 ms one's.`,
    '',
    neighbourTable(r.neighbours),
    '',
    `Costs: AWS list prices for ${PRICES.region} read on ${PRICES.readAt} (bench/prices.ts): SQS standard requests (the measured sends, plus the event source's receive and delete per measured batch), Lambda arm64 at 512 MB: one invocation per measured batch (jobs per batch of the throughput run) and the handler time measured one batch at a time (each Lambda invocation has its own CPU and DynamoDB spreads its partitions, so an invocation does not wait on the others as 8 local pollers on one DynamoDB Local and two shared cores do; the throughput run's handler time is the last column), DynamoDB on-demand units, Step Functions standard transitions. Latency is measured one publish at a time; throughput with batches of 100 from 4 publishers; units, calls and the busiest key in the 0 ms run.`,
  ].join('\n');
}

/** The section `npm run bench` prints. */
/** @public bench/run.ts imports it by name (`npm run bench -- --figures`). */
export async function benchMarkdown(o: { scale: number; log: (l: string) => void }): Promise<string> {
  const r = await benchWebhooks(o);
  return ['### Webhooks', webhookTables(r), limitTables(r.limits)].join('\n\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchWebhooks({ scale: Number(process.argv[2] ?? 1), log: (l) => console.error(l) })
    .then((r) => console.log(`${webhookTables(r)}\n\n${limitTables(r.limits)}`))
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
