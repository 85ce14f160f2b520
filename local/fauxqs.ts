/**
 * SQS for the local runtime and the tests: fauxqs (npm, an SQS emulator speaking the JSON protocol
 * the AWS SDK v3 uses), in memory or persisted in SQLite under a data directory. `npm start`
 * embeds it in its own process; the integration tests run it as a child process (jest's module
 * system cannot load an ES-module-only package), as they do DynamoDB Local.
 *
 * fauxqs checks no credentials and hard-codes its listen address to every interface (0.0.0.0);
 * both starts below make it listen on 127.0.0.1 only (./loopback.ts), so nobody else on the
 * network reaches it.
 *
 * Locally nothing enforces an SQS queue's retention (fauxqs keeps messages until deleted); the
 * service enforces message_ttl_seconds itself at receive, as it does in AWS.
 */
import { spawn } from 'node:child_process';
import { LocalStartError } from './dynamodb';
import { LOOPBACK_LISTEN_PATCH_JS, onLoopbackOnly } from './loopback';

export interface LocalSqs {
  endpoint: string;
  stop(): Promise<void>;
}

/** Starts fauxqs in this process on a free port (its SQLite state under `dataDir`, if given). */
export async function startEmbeddedSqs(opts: { dataDir?: string } = {}): Promise<LocalSqs> {
  const { startFauxqs } = await import('fauxqs');
  const server = await onLoopbackOnly(() => startFauxqs({ port: 0, logger: false, ...(opts.dataDir ? { dataDir: opts.dataDir } : {}) }));
  return { endpoint: `http://127.0.0.1:${server.port}`, stop: () => server.stop() };
}

/**
 * Starts fauxqs in a child process of the project's Node (22: fauxqs needs node:sqlite) and
 * resolves once it listens. The child dies with this process.
 */
export async function startSqsProcess(): Promise<LocalSqs & { pid?: number }> {
  const script = `${LOOPBACK_LISTEN_PATCH_JS}\nconst { startFauxqs } = await import('fauxqs'); const s = await startFauxqs({ port: 0, logger: false }); process.stdout.write(\`ready \${s.port}\\n\`);`;
  const child = spawn(process.execPath, ['--no-warnings', '--input-type=module', '-e', script], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new LocalStartError(`fauxqs did not start within 20 s: ${err.slice(0, 500)}`)), 20_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /ready (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new LocalStartError(`fauxqs exited during start-up (status ${code}): ${err.slice(0, 500)}; it needs Node 22.5 or later (the project's node devDependency: run through npm scripts)`));
    });
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        process.off('exit', kill);
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
