/**
 * A real local runtime for the browser tests: `npm start`'s entry (local/main.ts) as a child
 * process on a free port, with a seed of two keys (one with every scope, one without `manage`),
 * and the console built fresh from console/ first, so the tests drive what the sources say.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ownEnginesEnv } from '../fixtures/own-engines';

export const ADMIN_KEY = 'console-admin-key';
export const VIEWER_KEY = 'console-viewer-key';
export const NAMESPACE = 'console';

export interface LocalRuntime {
  origin: string;
  api: string;
  /** The ready lines `npm start` printed. */
  lines: string[];
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

/**
 * Builds console/dist as `npm run console:build` does, in a child process (Vite is ESM only, and
 * jest runs this file as CommonJS).
 */
export async function buildConsole(): Promise<void> {
  const vite = resolve('node_modules/vite/bin/vite.js');
  await new Promise<void>((res, rej) =>
    // NODE_ENV of jest (test) would make Vite build a development bundle: build what ships.
    execFile(process.execPath, [vite, 'build', '--config', resolve('console/vite.config.ts'), '--logLevel', 'warn'], { env: { ...process.env, NODE_ENV: 'production' } }, (e, _out, err) =>
      e ? rej(new Error(`the console build failed: ${err || e.message}`)) : res(),
    ),
  );
}

export async function startLocalRuntime(timeoutMs = 150_000): Promise<LocalRuntime> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'console-browser-'));
  const seed = join(dir, 'seed.json');
  writeFileSync(
    seed,
    JSON.stringify({
      namespaces: [
        {
          name: NAMESPACE,
          // The console polls management reads; the tests also click through every view quickly.
          limits: { publish: 10_000, consume: 10_000, management: 10_000 },
          keys: [
            { key: ADMIN_KEY, scopes: ['*'] },
            { key: VIEWER_KEY, scopes: ['publish', 'consume'] },
          ],
        },
      ],
    }),
  );
  const child: ChildProcess = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--import', 'tsx', 'local/main.ts'], {
    env: ownEnginesEnv({ PORT: String(port), MSG_SEED_FILE: seed, MSG_SWEEP_INTERVAL_MS: '2000' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`npm start did not get ready in ${timeoutMs} ms: ${lines.join(' | ')} ${stderr}`)), timeoutMs);
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) !== -1) {
        lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (lines[lines.length - 1].startsWith('admin:')) {
          clearTimeout(timer);
          res();
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`npm start exited with ${code}: ${stderr}`));
    });
  });
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    api: `${origin}/api/v1`,
    lines,
    stop: () =>
      new Promise<void>((res) => {
        if (child.exitCode !== null) return res();
        child.once('exit', () => res());
        child.kill('SIGTERM');
      }),
  };
}
