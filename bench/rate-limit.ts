/**
 * What the rate limiter adds per request (docs/rate-limits.md): p50/p99 latency of GET /namespace
 * through the local gateway with and without the rate-limit middleware (same middy chain
 * otherwise), and the DynamoDB calls and consumed capacity per request of each
 * (ReturnConsumedCapacity=TOTAL added to every call). Starts its own DynamoDB Local and gateways
 * and stops them.
 *
 * Run alone: `npx tsx bench/rate-limit.ts [requests] [concurrency]`; bench/run.ts imports
 * {@link benchRateLimit}. Numbers from DynamoDB Local measure the code path and the call count,
 * not DynamoDB's service latency (single-digit ms in a region, plus the Lambda's network hop).
 */
import { request, Agent, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyResult } from 'aws-lambda';

interface LatencyStats {
  requests: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
}

interface VariantResult {
  sequential: LatencyStats;
  concurrent: LatencyStats & { concurrency: number; requestsPerSecond: number };
  /** DynamoDB calls per request, by command (authorizer, operation and limiter together). */
  dynamoCallsPerRequest: Record<string, number>;
  /** Capacity units DynamoDB reported per request (reads and writes together). */
  capacityUnitsPerRequest: number;
}

export interface RateLimitBenchResult {
  withoutLimiter: VariantResult;
  withLimiter: VariantResult;
  /** p50/p99 difference, sequential requests. */
  addedP50Ms: number;
  addedP99Ms: number;
  /**
   * A namespace flooding over its limit (management 10 a minute, `requests` sequential GETs):
   * counter writes for the whole flood and p50 latency of its 429 answers.
   */
  overLimitFlood: { requests: number; accepted: number; counterWrites: number; refusedP50Ms: number };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

function stats(samples: number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    requests: samples.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    meanMs: round(samples.reduce((a, b) => a + b, 0) / samples.length),
  };
}

function timedStatus(agent: Agent, url: string, key: string): Promise<{ status: number; ms: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function timedGet(agent: Agent, url: string, key: string): Promise<number> {
  const { status, ms } = await timedStatus(agent, url, key);
  if (status !== 200) throw new Error(`GET ${url} answered ${status}`);
  return ms;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1/namespace`;
}

export interface BenchOptions {
  /** Sequential requests per variant (after a warm-up). */
  requests?: number;
  /** Parallel clients of the concurrent run. */
  concurrency?: number;
  log?: (line: string) => void;
}

/** Runs the benchmark; see the module comment. */
export async function benchRateLimit({ requests = 2000, concurrency = 16, log = () => undefined }: BenchOptions = {}): Promise<RateLimitBenchResult> {
  const { startDynamoDbLocal, ensureTables } = await import('../local/dynamodb');
  const { localEnvironment } = await import('../local/environment');
  const dynamo = await startDynamoDbLocal({ javaOptions: [] });
  const servers: Server[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    Object.assign(process.env, localEnvironment({ port: 0, dynamodbEndpoint: dynamo.endpoint, env: process.env }), { POWERTOOLS_LOG_LEVEL: 'SILENT' });
    const { resetConfig, config } = await import('../lambda/core/config');
    const { resetClients, dynamoClient } = await import('../lambda/core/storage/client');
    resetConfig();
    resetClients();
    await ensureTables(dynamo.endpoint, config().tableNames);

    const { applySeed } = await import('../local/seed');
    const ns = `bench-${randomBytes(3).toString('hex')}`;
    const key = `${ns}-key-${randomBytes(8).toString('hex')}`;
    const high = 1_000_000_000;
    await applySeed({ namespaces: [{ name: ns, limits: { publish: high, consume: high, management: high }, keys: [{ key, scopes: ['*'] }] }] });

    // Every DynamoDB call of this process is counted and asked for its consumed capacity.
    const calls = new Map<string, number>();
    let capacity = 0;
    dynamoClient().middlewareStack.add(
      (next, context) => async (args) => {
        (args.input as Record<string, unknown>).ReturnConsumedCapacity ??= 'TOTAL';
        // Counted before sending: a refused conditional write is a call (and costs a WCU) too.
        calls.set(context.commandName ?? '?', (calls.get(context.commandName ?? '?') ?? 0) + 1);
        const out = await next(args);
        const cc = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity;
        capacity += cc?.CapacityUnits ?? 0;
        return out;
      },
      { step: 'initialize', name: 'benchConsumedCapacity' },
    );

    const { createGateway } = await import('../local/gateway');
    const urls = {
      withoutLimiter: await listen(servers[servers.push(createGateway({ handlers: { namespace: await namespaceHandler(false) } })) - 1]),
      withLimiter: await listen(servers[servers.push(createGateway({ handlers: { namespace: await namespaceHandler(true) } })) - 1]),
    };

    type Variant = keyof typeof urls;
    const variants = Object.keys(urls) as Variant[];
    const seq = { withoutLimiter: [] as number[], withLimiter: [] as number[] };
    const par = { withoutLimiter: [] as number[], withLimiter: [] as number[] };
    const counted = Object.fromEntries(variants.map((v) => [v, { calls: new Map<string, number>(), capacity: 0 }])) as Record<Variant, { calls: Map<string, number>; capacity: number }>;
    const parSeconds = { withoutLimiter: 0, withLimiter: 0 };

    for (const v of variants) for (let i = 0; i < 200; i++) await timedGet(agent, urls[v], key); // warm-up: JIT, sockets, caches
    // Variants alternate in blocks, so DynamoDB Local's own warm-up and drift hit both alike.
    const block = 100;
    for (let done = 0; done < requests; done += block) {
      for (const v of variants) {
        calls.clear();
        capacity = 0;
        for (let i = 0; i < Math.min(block, requests - done); i++) seq[v].push(await timedGet(agent, urls[v], key));
        for (const [c, n] of calls) counted[v].calls.set(c, (counted[v].calls.get(c) ?? 0) + n);
        counted[v].capacity += capacity;
      }
    }
    for (let round = 0; round < 2; round++) {
      for (const v of variants) {
        let next = 0;
        const started = Date.now();
        await Promise.all(Array.from({ length: concurrency }, async () => {
          while (next++ < requests / 2) par[v].push(await timedGet(agent, urls[v], key));
        }));
        parSeconds[v] += (Date.now() - started) / 1000;
      }
    }
    const round3 = (n: number) => Math.round(n * 1000) / 1000;
    const resultOf = (v: Variant): VariantResult => {
      const result = {
        sequential: stats(seq[v]),
        concurrent: { ...stats(par[v]), concurrency, requestsPerSecond: Math.round(par[v].length / parSeconds[v]) },
        dynamoCallsPerRequest: Object.fromEntries([...counted[v].calls].map(([c, n]) => [c, round3(n / seq[v].length)])),
        capacityUnitsPerRequest: round3(counted[v].capacity / seq[v].length),
      };
      log(`${v}: ${JSON.stringify(result)}`);
      return result;
    };
    const withoutLimiter = resultOf('withoutLimiter');
    const withLimiter = resultOf('withLimiter');

    const floodNs = `bench-flood-${randomBytes(3).toString('hex')}`;
    const floodKey = `${floodNs}-key-${randomBytes(8).toString('hex')}`;
    await applySeed({ namespaces: [{ name: floodNs, limits: { management: 10 }, keys: [{ key: floodKey, scopes: ['*'] }] }] });
    calls.clear();
    const refused: number[] = [];
    let accepted = 0;
    for (let i = 0; i < requests; i++) {
      const { status, ms } = await timedStatus(agent, urls.withLimiter, floodKey);
      if (status === 200) accepted++;
      else if (status === 429) refused.push(ms);
      else throw new Error(`flood request answered ${status}`);
    }
    const overLimitFlood = { requests, accepted, counterWrites: calls.get('UpdateItemCommand') ?? 0, refusedP50Ms: stats(refused).p50Ms };
    log(`overLimitFlood: ${JSON.stringify(overLimitFlood)}`);
    return {
      overLimitFlood,
      withoutLimiter,
      withLimiter,
      addedP50Ms: Math.round((withLimiter.sequential.p50Ms - withoutLimiter.sequential.p50Ms) * 100) / 100,
      addedP99Ms: Math.round((withLimiter.sequential.p99Ms - withoutLimiter.sequential.p99Ms) * 100) / 100,
    };
  } finally {
    agent.destroy();
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
    (await import('../lambda/core/storage/client')).resetClients();
    await dynamo.stop();
  }
}

/**
 * GET /namespace behind the same middy chain as lambda/handlers/http.ts, with or without the rate
 * limiter, so the difference is the limiter alone.
 */
async function namespaceHandler(limited: boolean) {
  const { default: middy } = await import('@middy/core');
  const { logger } = await import('../lambda/core/observability');
  const { envelope } = await import('../lambda/core/middleware/envelope');
  const { resolveRequest } = await import('../lambda/core/middleware/resolve-request');
  const { authorize } = await import('../lambda/core/middleware/authorize');
  const { rateLimit } = await import('../lambda/limits/rate-limit');
  const { jsonBody } = await import('../lambda/core/middleware/json-body');
  const { apiRequest } = await import('../lambda/core/middleware/api-request');
  const { getNamespace } = await import('../lambda/namespaces/storage/namespaces');
  type Ev = import('../lambda/core/middleware/api-request').ApiEvent;
  let chain = middy<Ev, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 }).use(envelope({ logger })).use(resolveRequest('namespace')).use(authorize({ logger }));
  if (limited) chain = chain.use(rateLimit({ logger }));
  return chain.use(jsonBody()).handler(async (event) => {
    const ns = await getNamespace(apiRequest(event).namespace);
    return { data: { name: ns?.name, status: ns?.status } } as unknown as APIGatewayProxyResult;
  }) as unknown as import('../lambda/handlers/http').HttpHandler;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [requests, concurrency] = process.argv.slice(2).map(Number);
  benchRateLimit({ requests: requests || undefined, concurrency: concurrency || undefined, log: (l) => process.stderr.write(`${l}\n`) })
    .then((r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`))
    .catch((e) => {
      process.stderr.write(`bench failed: ${(e as Error).stack}\n`);
      process.exitCode = 1;
    });
}
