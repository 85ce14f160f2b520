/**
 * Every engine of the local runtime listens on loopback only (docs/local.md), so nobody else on
 * the network can read or write its tables and queues. `npm start` (DynamoDB Local through the
 * loopback launcher, fauxqs embedded, the gateway) and the engines the tests start (fauxqs as a
 * child process) are checked socket by socket in /proc (Linux), and by connecting to each port on
 * this machine's other addresses, which must be refused.
 */
import { spawn } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { resolve } from 'node:path';
import { freePort } from '../../local/dynamodb';
import { startSqsProcess } from '../../local/fauxqs';
import { onLoopbackOnly } from '../../local/loopback';
import { isLoopbackListen, listeningSockets, processTree } from '../fixtures/sockets';

jest.setTimeout(180_000);

const ROOT = resolve(__dirname, '../..');

/** This machine's addresses that are not loopback. */
const otherAddresses = () =>
  Object.values(networkInterfaces())
    .flatMap((l) => l ?? [])
    .filter((i) => !i.internal && !i.address.startsWith('fe80'))
    .map((i) => i.address);

/** Whether a TCP connection to address:port is accepted. */
const accepts = (address: string, port: number) =>
  new Promise<boolean>((res) => {
    const s = connect({ host: address, port, timeout: 2000 });
    s.once('connect', () => (s.destroy(), res(true)));
    s.once('error', () => res(false));
    s.once('timeout', () => (s.destroy(), res(false)));
  });

async function expectLoopbackOnly(pids: number[], minimum: number) {
  const sockets = listeningSockets(pids);
  expect(sockets.length).toBeGreaterThanOrEqual(minimum);
  expect(sockets.filter((s) => !isLoopbackListen(s.address))).toEqual([]);
  for (const s of sockets) for (const a of otherAddresses()) expect({ a, port: s.port, accepted: await accepts(a, s.port) }).toEqual({ a, port: s.port, accepted: false });
  return sockets;
}

describe('local engines listen on loopback only', () => {
  it('npm start: DynamoDB Local, fauxqs and the gateway', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
    delete env.MSG_DYNAMODB_ENDPOINT;
    delete env.MSG_SQS_ENDPOINT;
    const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    try {
      const deadline = Date.now() + 150_000;
      while (!/^ready in /m.test(out)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not get ready:\n${out}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const dynamoPort = Number(/DynamoDB http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
      const sqsPort = Number(/SQS http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
      const sockets = await expectLoopbackOnly(processTree(child.pid!), 3);
      expect(sockets.map((s) => s.port)).toEqual(expect.arrayContaining([port, dynamoPort, sqsPort]));
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('fauxqs started as a child process (the tests\' engines)', async () => {
    const child = await startSqsProcess();
    try {
      await expectLoopbackOnly([child.pid!], 1);
    } finally {
      await child.stop();
    }
  });

  it('the listen rewrite for embedded fauxqs (npm start) applies only while an engine starts', async () => {
    // fauxqs is ES-module only, which jest cannot import: the npm start case above covers it embedded.
    const listenOn = (host?: string) =>
      new Promise<Server>((r) => {
        const srv = createServer();
        if (host === undefined) srv.listen(0, () => r(srv));
        else srv.listen({ port: 0, host }, () => r(srv));
      });
    const during = await onLoopbackOnly(async () => [await listenOn('0.0.0.0'), await listenOn('::'), await listenOn()]);
    expect(during.map((s) => (s.address() as AddressInfo).address)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
    const after = await listenOn('0.0.0.0');
    expect((after.address() as AddressInfo).address).toBe('0.0.0.0');
    for (const s of [...during, after]) s.close();
  });
});
