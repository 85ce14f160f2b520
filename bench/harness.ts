/**
 * Shared bench harness: DynamoDB Local with the project's tables, the real local gateway in front
 * of the real handlers, a DynamoDB meter (every call asked for ReturnConsumedCapacity=TOTAL and
 * counted by command), a keep-alive HTTP client and latency statistics.
 *
 * Numbers from DynamoDB Local measure our code path, request counts and capacity units (DynamoDB
 * Local computes consumed capacity like the service does), not the service's latency.
 */
import { Agent, request, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';

export interface LatencyStats {
  n: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

export function latencyStats(samples: number[]): LatencyStats {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: samples.length, p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)), meanMs: round(samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length)) };
}

export interface MeterSnapshot {
  calls: Record<string, number>;
  readUnits: number;
  writeUnits: number;
}

/** Counts DynamoDB calls and consumed capacity of this process. */
export class DynamoMeter {
  calls = new Map<string, number>();
  readUnits = 0;
  writeUnits = 0;
  reset() {
    this.calls.clear();
    this.readUnits = 0;
    this.writeUnits = 0;
  }
  snapshot(): MeterSnapshot {
    return { calls: Object.fromEntries(this.calls), readUnits: round(this.readUnits, 3), writeUnits: round(this.writeUnits, 3) };
  }
  record(command: string, consumed: unknown) {
    this.calls.set(command, (this.calls.get(command) ?? 0) + 1);
    const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
    for (const c of list as { ReadCapacityUnits?: number; WriteCapacityUnits?: number; CapacityUnits?: number }[]) {
      // With ReturnConsumedCapacity TOTAL, reads report CapacityUnits only; writes likewise.
      if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
        this.readUnits += c.ReadCapacityUnits ?? 0;
        this.writeUnits += c.WriteCapacityUnits ?? 0;
      } else if (/^(Get|BatchGet|Query|Scan|TransactGet)/.test(command)) this.readUnits += c.CapacityUnits ?? 0;
      else this.writeUnits += c.CapacityUnits ?? 0;
    }
  }
}

export interface BenchEnv {
  baseUrl: string;
  key: string;
  namespace: string;
  meter: DynamoMeter;
  call: <T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: { data: T; error: unknown }; ms: number }>;
  stop(): Promise<void>;
}

/** Starts DynamoDB Local, the tables, a namespace with a `*` key, and the local gateway. */
export async function startBenchEnv(log: (l: string) => void = () => undefined): Promise<BenchEnv> {
  const { startDynamoDbLocal, ensureTables } = await import('../local/dynamodb');
  const { localEnvironment } = await import('../local/environment');
  const dynamo = await startDynamoDbLocal();
  Object.assign(process.env, localEnvironment({ port: 0, dynamodbEndpoint: dynamo.endpoint, env: process.env }), { POWERTOOLS_LOG_LEVEL: 'ERROR' });
  const { resetConfig, loadConfig } = await import('../lambda/config');
  resetConfig();
  const { resetClients, dynamoClient } = await import('../lambda/storage/client');
  resetClients();
  await ensureTables(dynamo.endpoint, loadConfig().tableNames);
  const meter = new DynamoMeter();
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity ??= 'TOTAL';
      const out = await next(args);
      meter.record(String(context.commandName).replace(/Command$/, ''), (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
      return out;
    },
    { step: 'initialize', name: 'benchMeter' },
  );
  const { applySeed } = await import('../local/seed');
  const namespace = `bench-${randomBytes(3).toString('hex')}`;
  const key = `${namespace}-key-${randomBytes(8).toString('hex')}`;
  const big = 100_000_000;
  await applySeed({ namespaces: [{ name: namespace, limits: { publish: big, consume: big, management: big }, keys: [{ key, scopes: ['*'] }] }] });
  const { createGateway, loadHandlers } = await import('../local/gateway');
  const server: Server = createGateway({ handlers: await loadHandlers() });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1`;
  log(`bench environment ready at ${baseUrl} (DynamoDB Local ${dynamo.endpoint})`);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const call: BenchEnv['call'] = (method, path, body, headers = {}) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const started = process.hrtime.bigint();
    return new Promise((resolve, reject) => {
      const req = request(
        baseUrl + path,
        { method, agent, headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}), ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), ms });
            } catch (e) {
              reject(e);
            }
          });
        },
      );
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  };
  return {
    baseUrl,
    key,
    namespace,
    meter,
    call,
    stop: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await dynamo.stop();
    },
  };
}

/** Runs `fn(i)` for i in [0, n) with at most `concurrency` in flight; returns elapsed ms. */
export async function runConcurrent(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
  return performance.now() - started;
}

export function expectStatus(res: { status: number; body: unknown }, status: number, what: string) {
  if (res.status !== status) throw new Error(`${what}: expected HTTP ${status}, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
}
