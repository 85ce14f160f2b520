/**
 * `npm start`: the local runtime. Starts DynamoDB Local (in memory, or on disk with MSG_DATA_DIR;
 * or uses MSG_DYNAMODB_ENDPOINT) and fauxqs for SQS (embedded, in memory or under
 * MSG_DATA_DIR/sqs; or MSG_SQS_ENDPOINT / AWS_ENDPOINT_URL_SQS), creates the tables from the
 * shared definitions, applies the seed (MSG_SEED_FILE or namespace `dev` with key `dev-key`), and
 * serves the API on http://127.0.0.1:$PORT/api/v1 through the local gateway. Stops both engines
 * on SIGINT/SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startDynamoDbLocal, ensureTables, LocalStartError, type LocalDynamo } from './dynamodb';
import { startEmbeddedSqs, type LocalSqs } from './fauxqs';
import { applySeed, DEFAULT_SEED, readSeedFile } from './seed';
import { localEnvironment } from './environment';
import { installAwsHarsh } from './aws-harsh';
import { removeStateFile, writeStateFile } from './state-file';

const say = (line: string) => process.stdout.write(`${line}\n`);

async function portIsFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen(port, '127.0.0.1', () => s.close(() => res(true)));
  });
}

let runtime: { stop(): Promise<void> } | undefined;

/**
 * The receipt-handle signing key: kept with the data (so handles issued before a restart still
 * verify), or new for an in-memory run. Never printed.
 */
function localReceiptKey(dataDir: string | undefined): string {
  if (process.env.MSG_RECEIPT_KEY) return process.env.MSG_RECEIPT_KEY;
  if (!dataDir) return randomBytes(32).toString('hex');
  const file = join(dataDir, 'receipt-key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/**
 * The key that stands in for KMS locally (webhook secrets at rest, lambda/core/adapters/data-keys.ts):
 * kept with the data in a file only its owner reads (mode 0600), so secrets stored before a
 * restart still open, or new for an in-memory run. Never printed.
 */
function localSecretsKey(dataDir: string | undefined): string {
  if (process.env.MSG_SECRETS_LOCAL_KEY) return process.env.MSG_SECRETS_LOCAL_KEY;
  if (!dataDir) return randomBytes(32).toString('hex');
  const file = join(dataDir, 'secrets-key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  chmodSync(file, 0o600);
  return readFileSync(file, 'utf8').trim();
}

async function main() {
  const started = Date.now();
  const port = Number(process.env.PORT || 8080);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new LocalStartError(`PORT=${process.env.PORT} is not a TCP port; set PORT to a number like 8080`);
  if (!(await portIsFree(port))) {
    throw new LocalStartError(`port ${port} on 127.0.0.1 is already in use; stop the other process or start with PORT=<another port> npm start`);
  }

  const dataDir = process.env.MSG_DATA_DIR ? resolve(process.env.MSG_DATA_DIR) : undefined;
  if (dataDir) mkdirSync(join(dataDir, 'sqs'), { recursive: true });
  let dynamo: LocalDynamo | undefined;
  let endpoint = process.env.MSG_DYNAMODB_ENDPOINT;
  if (!endpoint) {
    say(`starting DynamoDB Local (${dataDir ? `data in ${dataDir}` : 'in memory'})...`);
    dynamo = await startDynamoDbLocal({ dataDir });
    endpoint = dynamo.endpoint;
  }
  let sqs: LocalSqs | undefined;
  let sqsEndpoint = process.env.MSG_SQS_ENDPOINT || process.env.AWS_ENDPOINT_URL_SQS;
  if (!sqsEndpoint) {
    say(`starting fauxqs for SQS (${dataDir ? `data in ${join(dataDir, 'sqs')}` : 'in memory'})...`);
    sqs = await startEmbeddedSqs({ dataDir: dataDir && join(dataDir, 'sqs') });
    sqsEndpoint = sqs.endpoint;
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`received ${signal}, stopping`);
    await runtime?.stop();
    await sqs?.stop();
    await dynamo?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  Object.assign(process.env, localEnvironment({ port, dynamodbEndpoint: endpoint, sqsEndpoint, receiptKey: localReceiptKey(dataDir), env: process.env }));
  process.env.MSG_SECRETS_LOCAL_KEY = localSecretsKey(dataDir);
  // Before the first SDK client is created: the engines behave like AWS (local/aws-harsh).
  installAwsHarsh();
  const { loadConfig } = await import('../lambda/core/config');
  const cfg = loadConfig();
  await ensureTables(endpoint, cfg.tableNames);
  const seedFile = process.env.MSG_SEED_FILE;
  const seed = seedFile ? readSeedFile(seedFile) : DEFAULT_SEED;
  await applySeed(seed);

  // The console at /console/ (console/dist), built here the first time (npm run console:build rebuilds it).
  const { ensureConsoleBuilt } = await import('./console-static');
  const consoleState = await ensureConsoleBuilt().then(
    (how) => (how === 'built' ? 'built now' : 'prebuilt'),
    (e: Error) => `not built: ${e.message.split('\n')[0]}; run npm run console:build`,
  );
  const { startRuntime } = await import('./runtime');
  runtime = await startRuntime({ port, log: say });
  // Lets the admin CLI find this runtime's DynamoDB by port (`npm run admin -- --port N ...`).
  writeStateFile({ pid: process.pid, port, dynamodbEndpoint: endpoint, sqsEndpoint, receiptKey: process.env.MSG_RECEIPT_KEY, tables: cfg.tableNames });
  process.on('exit', () => removeStateFile(port));
  const firstKey = seed.namespaces[0]?.keys[0]?.key;
  say(
    `ready in ${((Date.now() - started) / 1000).toFixed(1)} s: http://127.0.0.1:${port}/api/v1 ` +
      `(DynamoDB ${endpoint}; SQS ${sqsEndpoint}; ${seedFile ? `seeded from ${seedFile}` : 'namespace dev'}${firstKey && !seedFile ? `, key ${firstKey}` : ''})`,
  );
  if (!seedFile) say(`try: curl -H 'Authorization: Bearer ${firstKey}' http://127.0.0.1:${port}/api/v1/namespace`);
  const { OPENAPI_PATH } = await import('../lambda/api-docs/openapi');
  say(`openapi: http://127.0.0.1:${port}/api/v1${OPENAPI_PATH} (no key needed; typed client: client/, examples: examples/)`);
  say(`console: http://127.0.0.1:${port}/console/ (${consoleState}; sign in with an API key)`);
  say(`admin: npm run admin --${port === 8080 ? '' : ` --port ${port}`} namespace list   (keys, limits, redrive: npm run admin -- --help)`);
}

main().catch((e) => {
  process.stderr.write(`npm start failed: ${e instanceof LocalStartError ? e.message : (e as Error).stack}\n`);
  process.exit(1);
});
