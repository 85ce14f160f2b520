/**
 * `npm start`: the local runtime. Starts DynamoDB Local (in memory, or on disk with MSG_DATA_DIR;
 * or uses MSG_DYNAMODB_ENDPOINT), creates the tables from the shared definitions, applies the seed
 * (MSG_SEED_FILE or namespace `dev` with key `dev-key`), and serves the API on
 * http://127.0.0.1:$PORT/api/v1 through the local gateway. Stops DynamoDB Local on SIGINT/SIGTERM.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { startDynamoDbLocal, ensureTables, LocalStartError, type LocalDynamo } from './dynamodb';
import { applySeed, DEFAULT_SEED, readSeedFile } from './seed';
import { localEnvironment } from './environment';
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

async function main() {
  const started = Date.now();
  const port = Number(process.env.PORT || 8080);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new LocalStartError(`PORT=${process.env.PORT} is not a TCP port; set PORT to a number like 8080`);
  if (!(await portIsFree(port))) {
    throw new LocalStartError(`port ${port} on 127.0.0.1 is already in use; stop the other process or start with PORT=<another port> npm start`);
  }

  let dynamo: LocalDynamo | undefined;
  let endpoint = process.env.MSG_DYNAMODB_ENDPOINT;
  if (!endpoint) {
    const dataDir = process.env.MSG_DATA_DIR ? resolve(process.env.MSG_DATA_DIR) : undefined;
    if (dataDir) mkdirSync(dataDir, { recursive: true });
    say(`starting DynamoDB Local (${dataDir ? `data in ${dataDir}` : 'in memory'})...`);
    dynamo = await startDynamoDbLocal({ dataDir });
    endpoint = dynamo.endpoint;
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`received ${signal}, stopping`);
    await runtime?.stop();
    await dynamo?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  Object.assign(process.env, localEnvironment({ port, dynamodbEndpoint: endpoint, env: process.env }));
  const { loadConfig } = await import('../lambda/config');
  const cfg = loadConfig();
  await ensureTables(endpoint, cfg.tableNames);
  const seedFile = process.env.MSG_SEED_FILE;
  const seed = seedFile ? readSeedFile(seedFile) : DEFAULT_SEED;
  await applySeed(seed);

  const { startRuntime } = await import('./runtime');
  runtime = await startRuntime({ port, log: say });
  // Lets the admin CLI find this runtime's DynamoDB by port (`npm run admin -- --port N ...`).
  writeStateFile({ pid: process.pid, port, dynamodbEndpoint: endpoint, tables: cfg.tableNames });
  process.on('exit', () => removeStateFile(port));
  const firstKey = seed.namespaces[0]?.keys[0]?.key;
  say(
    `ready in ${((Date.now() - started) / 1000).toFixed(1)} s: http://127.0.0.1:${port}/api/v1 ` +
      `(DynamoDB ${endpoint}; ${seedFile ? `seeded from ${seedFile}` : 'namespace dev'}${firstKey && !seedFile ? `, key ${firstKey}` : ''})`,
  );
  if (!seedFile) say(`try: curl -H 'Authorization: Bearer ${firstKey}' http://127.0.0.1:${port}/api/v1/namespace`);
}

main().catch((e) => {
  process.stderr.write(`npm start failed: ${e instanceof LocalStartError ? e.message : (e as Error).stack}\n`);
  process.exit(1);
});
