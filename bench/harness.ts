/**
 * Shared bench harness: DynamoDB Local with the project's tables and fauxqs for SQS, the real
 * local gateway in front of the real handlers, meters of DynamoDB (every call asked for
 * ReturnConsumedCapacity=TOTAL, counted by command and by partition key) and of SQS (requests as
 * AWS bills them), a keep-alive HTTP client and latency statistics.
 *
 * Numbers from the local engines measure our code path, request counts and capacity units
 * (DynamoDB Local computes consumed capacity like the service does), not the services' latency.
 */
import { Agent, request, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { TABLES } from '../lambda/core/storage/tables';

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
  /** The partition key that took the most write units, and how many. */
  busiestKey: { key: string; writeUnits: number };
  /** SQS requests as AWS bills them (each 64 KiB of a request's payload is one request), by action. */
  sqsRequests: Record<string, number>;
  sqsBilledRequests: number;
}

/** The partition key attribute of each table (by physical name), to attribute writes to keys. */
type KeyNames = Map<string, string>;

type Attr = Record<string, { S?: string; N?: string } | string | number | undefined>;

/**
 * The partition keys a write request touches, by table. The meter runs before the document
 * client marshalls (plain values) or after (AttributeValues): both are read.
 */
function writtenKeys(command: string, input: Record<string, any>, keyNames: KeyNames): string[] {
  const keyOf = (table: string, item: Attr | undefined) => {
    const v = item?.[keyNames.get(table) ?? 'pk'];
    return `${table}:${typeof v === 'object' ? (v.S ?? v.N ?? '?') : (v ?? '?')}`;
  };
  if (command === 'PutItem') return [keyOf(input.TableName, input.Item)];
  if (command === 'UpdateItem' || command === 'DeleteItem') return [keyOf(input.TableName, input.Key)];
  if (command === 'BatchWriteItem') {
    return Object.entries(input.RequestItems as Record<string, any[]>).flatMap(([t, reqs]) => reqs.map((r) => keyOf(t, r.PutRequest?.Item ?? r.DeleteRequest?.Key)));
  }
  if (command === 'TransactWriteItems') {
    return (input.TransactItems as any[]).flatMap((ti) => {
      const op = ti.Put ?? ti.Update ?? ti.Delete;
      return op ? [keyOf(op.TableName, op.Item ?? op.Key)] : [];
    });
  }
  return [];
}

/** Counts DynamoDB calls, consumed capacity and writes per partition key, and SQS requests, of this process. */
class DynamoMeter {
  calls = new Map<string, number>();
  readUnits = 0;
  writeUnits = 0;
  keyWrites = new Map<string, number>();
  sqs = new Map<string, number>();
  sqsBilled = 0;
  constructor(private readonly keyNames: KeyNames = new Map()) {}
  reset() {
    this.calls.clear();
    this.readUnits = 0;
    this.writeUnits = 0;
    this.keyWrites.clear();
    this.sqs.clear();
    this.sqsBilled = 0;
  }
  snapshot(): MeterSnapshot {
    let busiestKey = { key: '', writeUnits: 0 };
    for (const [key, units] of this.keyWrites) if (units > busiestKey.writeUnits) busiestKey = { key, writeUnits: round(units, 3) };
    return {
      calls: Object.fromEntries(this.calls),
      readUnits: round(this.readUnits, 3),
      writeUnits: round(this.writeUnits, 3),
      busiestKey,
      sqsRequests: Object.fromEntries(this.sqs),
      sqsBilledRequests: this.sqsBilled,
    };
  }
  /** One SQS request of `payloadBytes` (AWS bills each started 64 KiB as one request). */
  recordSqs(action: string, payloadBytes: number) {
    const billed = Math.max(1, Math.ceil(payloadBytes / (64 * 1024)));
    this.sqs.set(action, (this.sqs.get(action) ?? 0) + billed);
    this.sqsBilled += billed;
  }
  /** Spreads a write call's units evenly over the keys it wrote (transactions: 2 units per item). */
  recordKeys(command: string, input: Record<string, any>, units: number) {
    const keys = writtenKeys(command, input, this.keyNames);
    for (const k of keys) this.keyWrites.set(k, (this.keyWrites.get(k) ?? 0) + units / keys.length);
  }
  record(command: string, consumed: unknown, input?: Record<string, any>) {
    this.calls.set(command, (this.calls.get(command) ?? 0) + 1);
    const before = this.writeUnits;
    const readsBefore = this.readUnits;
    const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
    for (const c of list as { ReadCapacityUnits?: number; WriteCapacityUnits?: number; CapacityUnits?: number }[]) {
      // With ReturnConsumedCapacity TOTAL, reads report CapacityUnits only; writes likewise.
      if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
        this.readUnits += c.ReadCapacityUnits ?? 0;
        this.writeUnits += c.WriteCapacityUnits ?? 0;
      } else if (/^(Get|BatchGet|Query|Scan|TransactGet)/.test(command)) this.readUnits += c.CapacityUnits ?? 0;
      else this.writeUnits += c.CapacityUnits ?? 0;
    }
    // DynamoDB bills every key a BatchGetItem asks for as a GetItem, found or not (1 read unit
    // strongly consistent, 0.5 eventually, at least: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html);
    // DynamoDB Local reports nothing for the keys it did not find.
    if (input && command === 'BatchGetItem') {
      const tables = Object.values(input.RequestItems ?? {}) as { Keys?: unknown[]; ConsistentRead?: boolean }[];
      const floor = tables.reduce((n, t) => n + (t.Keys?.length ?? 0) * (t.ConsistentRead ? 1 : 0.5), 0);
      if (this.readUnits - readsBefore < floor) this.readUnits = readsBefore + floor;
    }
    if (input && this.writeUnits > before) this.recordKeys(command, input, this.writeUnits - before);
  }
}

export interface BenchEnv {
  baseUrl: string;
  key: string;
  namespace: string;
  meter: DynamoMeter;
  call: <T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: { data: T; error: unknown }; ms: number; headers: Record<string, string | string[] | undefined> }>;
  stop(): Promise<void>;
}

/** Bytes of an SQS request's payload (message bodies sent, or received). */
function sqsPayloadBytes(action: string, input: Record<string, any>, output: Record<string, any>): number {
  const len = (s?: string) => Buffer.byteLength(s ?? '', 'utf8');
  if (action === 'SendMessageBatch') return (input.Entries as { MessageBody?: string }[]).reduce((n, e) => n + len(e.MessageBody), 0);
  if (action === 'SendMessage') return len(input.MessageBody);
  if (action === 'ReceiveMessage') return ((output.Messages ?? []) as { Body?: string }[]).reduce((n, m) => n + len(m.Body), 0);
  return 0;
}

interface BenchEngines {
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  meter: DynamoMeter;
  stop(): Promise<void>;
}

/**
 * Starts DynamoDB Local with the tables and an embedded fauxqs, points the Lambda code at them,
 * and meters every DynamoDB and SQS call the code makes.
 */
async function startBenchEngines(extraEnv: Record<string, string> = {}): Promise<BenchEngines> {
  const { startDynamoDbLocal, ensureTables } = await import('../local/dynamodb');
  const { startEmbeddedSqs } = await import('../local/fauxqs');
  const { localEnvironment } = await import('../local/environment');
  // The JVM's defaults, optimizing compiler included: a bench run is minutes of load (local/dynamodb.ts).
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal({ javaOptions: [] }), startEmbeddedSqs()]);
  Object.assign(
    process.env,
    localEnvironment({ port: 0, dynamodbEndpoint: dynamo.endpoint, sqsEndpoint: sqs.endpoint, receiptKey: randomBytes(32).toString('hex'), env: process.env }),
    { POWERTOOLS_LOG_LEVEL: 'ERROR' },
    extraEnv,
  );
  const { resetConfig, loadConfig } = await import('../lambda/core/config');
  resetConfig();
  const { resetClients, dynamoClient } = await import('../lambda/core/storage/client');
  const { resetSqsClient, sqsClient } = await import('../lambda/core/adapters/sqs');
  const { TABLES } = await import('../lambda/core/storage/tables');
  resetClients();
  resetSqsClient();
  const tableNames = loadConfig().tableNames;
  await ensureTables(dynamo.endpoint, tableNames);
  const meter = new DynamoMeter(new Map(Object.values(TABLES).map((t) => [tableNames[t.id], t.partitionKey.name])));
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity ??= 'TOTAL';
      const out = await next(args);
      meter.record(String(context.commandName).replace(/Command$/, ''), (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity, args.input as Record<string, any>);
      return out;
    },
    { step: 'initialize', name: 'benchMeter' },
  );
  sqsClient().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      const action = String(context.commandName).replace(/Command$/, '');
      meter.recordSqs(action, sqsPayloadBytes(action, args.input as Record<string, any>, out.output as Record<string, any>));
      return out;
    },
    { step: 'initialize', name: 'benchSqsMeter' },
  );
  return {
    dynamodbEndpoint: dynamo.endpoint,
    sqsEndpoint: sqs.endpoint,
    meter,
    stop: async () => {
      await sqs.stop();
      await dynamo.stop();
    },
  };
}

/**
 * The bench's HTTP client of the API at `baseUrl`, with `key`: JSON in and out, on a keep-alive
 * agent (destroy it to close the connections).
 */
export function benchClient(baseUrl: string, key: string): { call: BenchEnv['call']; agent: Agent } {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  // The gateway is a Node server, which closes a kept connection idle past its keep-alive timeout
  // (5 s by default) without the client's agent closing it first: a request written on such a
  // socket as the server closes it meets ECONNRESET before the server read it. Node's answer is to
  // send it again on a new connection when `req.reusedSocket` is set
  // (https://nodejs.org/api/http.html#requestreusedsocket); a reset on a new connection, or after
  // an answer began, is still an error.
  const call: BenchEnv['call'] = (method, path, body, headers = {}) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const started = process.hrtime.bigint();
    return new Promise((resolve, reject) => {
      const send = () => {
        let answered = false;
        const req = request(
          baseUrl + path,
          { method, agent, headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}), ...headers } },
          (res) => {
            answered = true;
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', reject);
            res.on('end', () => {
              const ms = Number(process.hrtime.bigint() - started) / 1e6;
              try {
                resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), ms, headers: res.headers });
              } catch (e) {
                reject(e);
              }
            });
          },
        );
        req.on('error', (e: NodeJS.ErrnoException) => {
          if (req.reusedSocket && e.code === 'ECONNRESET' && !answered) send();
          else reject(e);
        });
        if (payload) req.write(payload);
        req.end();
      };
      send();
    });
  };
  return { call, agent };
}

/** Starts the engines, a namespace with a `*` key, and the local gateway. */
export async function startBenchEnv(log: (l: string) => void = () => undefined): Promise<BenchEnv> {
  const engines = await startBenchEngines();
  const { meter } = engines;
  const { applySeed } = await import('../local/seed');
  const namespace = `bench-${randomBytes(3).toString('hex')}`;
  const key = `${namespace}-key-${randomBytes(8).toString('hex')}`;
  const big = 100_000_000;
  await applySeed({ namespaces: [{ name: namespace, limits: { publish: big, consume: big, management: big }, keys: [{ key, scopes: ['*'] }] }] });
  const { createGateway, loadHandlers } = await import('../local/gateway');
  const server: Server = createGateway({ handlers: await loadHandlers() });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1`;
  log(`bench environment ready at ${baseUrl} (DynamoDB Local ${engines.dynamodbEndpoint}, fauxqs ${engines.sqsEndpoint})`);
  const { call, agent } = benchClient(baseUrl, key);
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
      await engines.stop();
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

/** What a function's environment holds at cold start (table names, region), without AWS access. */
export const lambdaLikeEnv = (): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  POWERTOOLS_METRICS_DISABLED: 'true',
  ...Object.fromEntries(Object.values(TABLES).map((t) => [t.envVar, t.localName])),
});

/**
 * Runs a bench's `main` and exits when it ends: 0, or 1 with its error on stderr. The local
 * engines leave handles open, so a bench never waits for the event loop to empty (a finished run
 * stayed up, idle, for minutes).
 */
export function runToExit(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`${(e as Error).stack ?? e}\n`);
      process.exit(1);
    },
  );
}
