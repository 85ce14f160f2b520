/**
 * `npm start` with MSG_DATA_DIR, stopped hard (SIGKILL of its process group, as a crash would)
 * and started again on the same directory: queued messages, in-flight receipt handles and webhook
 * delivery jobs are still there, because DynamoDB Local and fauxqs both keep their state on disk
 * and the receipt-handle signing key is kept with the data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../local/dynamodb';
import { client } from '../fixtures/http';
import { until } from '../fixtures/receiver';

jest.setTimeout(120_000);

const dataDir = mkdtempSync(join(tmpdir(), 'msg-restart-'));
let port: number;
let runtime: ChildProcess | undefined;

/** Starts `npm start` in its own process group (own engines, this data directory) and waits for its ready line. */
async function start(): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), MSG_DATA_DIR: dataDir, MSG_LOCAL_DELIVERY_VISIBILITY_SECONDS: '2' };
  // This runtime starts its own DynamoDB Local and fauxqs on the data directory.
  for (const k of ['MSG_DYNAMODB_ENDPOINT', 'MSG_SQS_ENDPOINT', 'MSG_RECEIPT_KEY', 'MSG_WEBHOOK_QUEUE_URL', 'MSG_SEED_FILE']) delete env[k];
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--import', 'tsx', 'local/main.ts'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start was not ready within 60 s:\n${log}`)), 60_000);
    const onData = (c: Buffer) => {
      log += c.toString();
      if (/ready in/.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${log}`)));
  });
  return child;
}

/** SIGKILL to the runtime and its engines at once: nothing gets to shut down cleanly. */
async function crash(child: ChildProcess) {
  const exited = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid!, 'SIGKILL');
  await exited;
  await new Promise((r) => setTimeout(r, 500)); // the Java child dies with its group
}

beforeAll(async () => {
  port = await freePort();
});
afterAll(async () => {
  if (runtime?.exitCode === null) await crash(runtime);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('restart with MSG_DATA_DIR', () => {
  it('keeps queued messages, in-flight receipt handles and pending webhook delivery jobs across a crash', async () => {
    // A receiver that holds its first request open: that delivery is in flight when the runtime dies.
    let holding = true;
    const held: string[] = [];
    runtime = await start();
    const call = client(`http://127.0.0.1:${port}/api/v1`, 'dev-key');
    expect((await call('POST', '/queues', { name: 'durable', topic_filter: 'durable/#' })).status).toBe(201);
    const slow = await startSlowReceiver(() => holding, held);
    expect((await call('POST', '/webhooks', { name: 'durable-hook', url: slow.url, topic_filter: 'hooked/#', timeout: 30 })).status).toBe(201);
    const published = [];
    for (let i = 0; i < 3; i++) published.push((await call('POST', '/topics/durable/t/messages', { payload: `m${i}` })).body.data.message_id);
    const inFlight = (await call('POST', '/queues/durable/messages/consume', { timeout_seconds: 0, visibility_timeout_seconds: 300 })).body.data.messages[0];
    expect(inFlight.message_id).toBe(published[0]);
    const hooked = (await call('POST', '/topics/hooked/x/messages', { payload: 'deliver me' })).body.data.message_id;
    await until(async () => held.length > 0, 15_000, 'the delivery to reach the held receiver');

    await crash(runtime);
    holding = false; // from now on the receiver answers 200
    runtime = await start();

    // The two messages nobody held are there; the held one stays hidden, and its handle still acks.
    const rest = (await call('POST', '/queues/durable/messages/consume', { max_messages: 10, timeout_seconds: 0 })).body.data.messages;
    expect(rest.map((m: { message_id: string }) => m.message_id).sort()).toEqual(published.slice(1).sort());
    expect((await call('POST', `/queues/durable/messages/${inFlight.message_id}/ack`, { receipt_handle: inFlight.receipt_handle })).status).toBe(200);
    expect((await call('GET', '/queues/durable')).body.data.message_count).toBe(2);

    // The delivery job that was in flight comes back (2 s local visibility) and is delivered.
    await until(async () => held.filter((id) => id === hooked).length >= 2, 20_000, 'the webhook job to be delivered again after the restart');
    await until(async () => (await call('GET', '/webhooks/durable-hook/status')).body.data.success_count >= 1, 20_000, 'the delivery to count as a success');
    await slow.close();
  });
});

/** A receiver that records each delivery's message id and holds requests open while `hold()`. */
async function startSlowReceiver(hold: () => boolean, seen: string[]) {
  const { createServer } = await import('node:http');
  const open = new Set<import('node:net').Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(JSON.parse(Buffer.concat(chunks).toString()).message_id);
      if (!hold()) res.writeHead(200).end('ok');
    });
  });
  server.on('connection', (s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}
