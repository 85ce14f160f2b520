/**
 * Webhook limits in the bench (docs/design/0020-webhook-delivery-limits.md): the rate limit held
 * over 30 s of delivery, and a dead endpoint's way to disabled (its attempts and the retry
 * workflow's Step Functions transitions, counted on the local workflow, which runs the stack's ASL
 * file). Called by bench/webhooks.ts inside its environment (publish path, delivery queue and event
 * source, retry workflow); kept apart from its throughput and cost sections.
 */
import { createServer, type Server } from 'node:http';
import { expectStatus, runConcurrent, type BenchEnv } from './harness';
import { PRICES } from './prices';
import { HEALTH_DEFAULTS } from '../lambda/webhooks/rules/endpoint-health';
import { WEBHOOK_DEFAULTS } from '../lambda/webhooks/rules/webhooks';

export interface RateLimitRun {
  configuredPerSecond: number;
  windowSeconds: number;
  /** Deliveries that arrived in the window, from the first arrival on. */
  delivered: number;
  measuredPerSecond: number;
  /** Measured ÷ configured (the target: 0.9–1.1). */
  ratio: number;
}

export interface DeadEndpointRun {
  failureThreshold: number;
  retryCount: number;
  /** Deliveries published, all to the dead endpoint. */
  deliveries: number;
  /** Requests the endpoint got until it was disabled and every retry execution ended. */
  attempts: number;
  /** Step Functions transitions of those executions (states entered and Task retries). */
  transitions: number;
  seconds: number;
  /** At the defaults (failure_threshold 100, retry_count 3), extrapolated per delivery from this run. */
  extrapolated: { failureThreshold: number; retryCount: number; attempts: number; transitions: number; usd: number };
}

async function receiver(status: number, onRequest: () => void): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      onRequest();
      res.writeHead(status).end(status < 300 ? 'ok' : 'down');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, server };
}

async function close(s: Server) {
  s.closeAllConnections();
  await new Promise<void>((r) => s.close(() => r()));
}

async function poll(what: string, timeoutMs: number, fn: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A webhook with `rate_limit` and a backlog a quarter larger than the window needs: deliveries
 * counted over `windowSeconds` from the first arrival. The webhook is deleted afterwards (its
 * remaining jobs are dropped), so later sections see no leftovers.
 */
export async function benchRateLimit(env: BenchEnv, { rate = 20, windowSeconds = 30, log = (_: string): void => undefined }: { rate?: number; windowSeconds?: number; log?: (l: string) => void } = {}): Promise<RateLimitRun> {
  const arrivals: number[] = [];
  const recv = await receiver(200, () => arrivals.push(performance.now()));
  try {
    expectStatus(await env.call('POST', '/webhooks', { name: 'bench-rate', url: recv.url, topic_filter: 'bench/rate', rate_limit: rate }), 201, 'create rate-limited webhook');
    const total = Math.ceil((rate * windowSeconds * 1.25) / 100) * 100;
    log(`webhooks: rate_limit ${rate}/s, ${total} deliveries queued, ${windowSeconds} s measured`);
    await runConcurrent(total / 100, 4, async () => {
      const res = await env.call('POST', '/topics/bench/rate/messages/batch', { messages: Array.from({ length: 100 }, (_, i) => ({ payload: `{"r":${i}}` })) });
      expectStatus(res, 201, 'batch publish');
    });
    await poll('the first rate-limited delivery', 60_000, () => arrivals.length > 0);
    const t0 = arrivals[0];
    await poll(`${windowSeconds} s of rate-limited delivery`, windowSeconds * 1000 + 60_000, () => performance.now() >= t0 + windowSeconds * 1000);
    if (arrivals.length >= total) throw new Error(`bench: the rate-limit backlog of ${total} ran out within the window`);
    const delivered = arrivals.filter((t) => t < t0 + windowSeconds * 1000).length;
    const measured = delivered / windowSeconds;
    return { configuredPerSecond: rate, windowSeconds, delivered, measuredPerSecond: Math.round(measured * 100) / 100, ratio: Math.round((measured / rate) * 1000) / 1000 };
  } finally {
    await env.call('DELETE', '/webhooks/bench-rate');
    await close(recv.server);
  }
}

/**
 * A dead endpoint (every request answers 500) with small thresholds: `failureThreshold`
 * deliveries published at once, `retryCount` retries each, until the webhook is disabled and
 * every retry execution ended. The defaults' figure is this run's per-delivery attempts and
 * transitions times failure_threshold 100, with the attempts per delivery at retry_count 3.
 */
export async function benchDeadEndpoint(env: BenchEnv, workflow: { transitions: number; running: number }, { failureThreshold = 3, retryCount = 2, log = (_: string): void => undefined }: { failureThreshold?: number; retryCount?: number; log?: (l: string) => void } = {}): Promise<DeadEndpointRun> {
  let attempts = 0;
  const recv = await receiver(500, () => attempts++);
  try {
    const name = 'bench-dead';
    expectStatus(
      await env.call('POST', '/webhooks', { name, url: recv.url, topic_filter: 'bench/dead', retry_count: retryCount, retry_delay: 1, failure_threshold: failureThreshold }),
      201,
      'create dead-endpoint webhook',
    );
    log(`webhooks: dead endpoint, ${failureThreshold} deliveries, retry_count ${retryCount}, failure_threshold ${failureThreshold}`);
    await poll('no retry execution running', 60_000, () => workflow.running === 0);
    const before = workflow.transitions;
    const started = performance.now();
    const res = await env.call('POST', '/topics/bench/dead/messages/batch', { messages: Array.from({ length: failureThreshold }, (_, i) => ({ payload: `{"d":${i}}` })) });
    expectStatus(res, 201, 'batch publish');
    await poll('the dead endpoint disabled', 600_000, async () => (await env.call('GET', `/webhooks/${name}`)).body.data?.status === 'disabled');
    await poll('its retry executions ended', 120_000, () => workflow.running === 0);
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    const transitions = workflow.transitions - before;
    // Per delivery, scaled to the defaults: attempts grow with the retries (1 + retry_count each),
    // transitions with the retries too (each retry is its Wait and Queue states).
    const ft = HEALTH_DEFAULTS.failure_threshold;
    const rc = WEBHOOK_DEFAULTS.retry_count;
    const attemptsAt = Math.round((attempts / failureThreshold) * ((1 + rc) / (1 + retryCount)) * ft);
    const transitionsAt = Math.round((transitions / failureThreshold) * (rc / Math.max(1, retryCount)) * ft);
    // Billed to reach disabled: the transitions, and every attempt's share of a delivery batch
    // (retries are delivery jobs too now: no attempt function runs).
    const usd = transitionsAt * PRICES.stepFunctionsTransition + ft * (1 + rc) * 0.1 * PRICES.lambdaRequest;
    return {
      failureThreshold,
      retryCount,
      deliveries: failureThreshold,
      attempts,
      transitions,
      seconds,
      extrapolated: { failureThreshold: ft, retryCount: rc, attempts: attemptsAt, transitions: transitionsAt, usd: Math.round(usd * 10000) / 10000 },
    };
  } finally {
    await close(recv.server);
  }
}

export function limitTables(r: { rate: RateLimitRun; dead: DeadEndpointRun }): string {
  const d = r.dead;
  return [
    '| rate_limit /s | window s | delivered | measured /s | measured ÷ configured |',
    '|---:|---:|---:|---:|---:|',
    `| ${r.rate.configuredPerSecond} | ${r.rate.windowSeconds} | ${r.rate.delivered} | ${r.rate.measuredPerSecond} | ${r.rate.ratio} |`,
    '',
    '| dead endpoint | deliveries | requests until disabled | Step Functions transitions | seconds |',
    '|---|---:|---:|---:|---:|',
    `| measured: failure_threshold ${d.failureThreshold}, retry_count ${d.retryCount} | ${d.deliveries} | ${d.attempts} | ${d.transitions} | ${d.seconds} |`,
    `| extrapolated: failure_threshold ${d.extrapolated.failureThreshold}, retry_count ${d.extrapolated.retryCount} | ${d.extrapolated.failureThreshold} | ${d.extrapolated.attempts} | ${d.extrapolated.transitions} | |`,
    '',
    `Reaching disabled at the defaults costs about $${d.extrapolated.usd} (extrapolated per delivery from the measured run: Step Functions transitions and Lambda requests at ${PRICES.region} list prices; DynamoDB and SQS per delivery as in the cost table). Transitions are counted on the local retry workflow (the stack's ASL on aws-local-stepfunctions): every state entered and every Task retry, as Step Functions bills them.`,
  ].join('\n');
}
