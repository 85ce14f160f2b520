/**
 * The docs run as written: this test starts `npm start` (a fresh, in-memory local runtime on a
 * free port, the default namespace `dev` with key `dev-key`), then runs the shell and TypeScript
 * blocks of README.md and of every docs/*.md page, in page order, one bash process per page, so
 * a page that stops working fails `npm test`. Pages run one after the other against the same
 * runtime, README first, as a newcomer would follow them: each page binds what it uses in its own
 * setup block (BASE, AUTH) and uses names of its own.
 *
 * What the test changes, and nothing else: `127.0.0.1:8080` / `localhost:8080` in a block become
 * the port it serves on, and PORT and MSG_API_URL carry that port to the admin CLI, `npm run
 * invoke` and the examples, as a user who ran `PORT=N npm start` would set them. `curl` fails on
 * an HTTP error (--fail-with-body), and every block runs under `set -Eeuo pipefail`. A TypeScript
 * block is saved at the repository root as a `.mts` file (its relative imports resolve as the
 * page says) and run with tsx.
 *
 * Blocks that cannot run here say so in their info string (```sh skip-run: cdk deploy, AWS-only
 * commands, servers that run until Ctrl-C); the summary line counts them. DOCS_PAGES=README.md,docs/webhooks.md
 * runs some pages only (the runtime is still fresh, so a page that builds on another fails).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { extractBlocks, onPort, type Block } from './blocks';
import { OWN_DYNAMODB_LINE, ownEnginesEnv } from '../fixtures/own-engines';

jest.setTimeout(240_000);

const ROOT = join(__dirname, '../..');
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)].filter(
  (p) => !process.env.DOCS_PAGES || process.env.DOCS_PAGES.split(',').includes(p),
);

let runtime: ChildProcess | undefined;
let port = 0;
let runtimeLog = '';
const startedAt = Date.now();
const counts = { shell: 0, ts: 0, skipped: 0, other: 0 };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

beforeAll(async () => {
  port = await freePort();
  // As a user starts it: npm start, in its own process group so it stops with everything it started.
  runtime = spawn('npm', ['start'], { cwd: ROOT, env: ownEnginesEnv({ PORT: String(port), MSG_DATA_DIR: '', MSG_SEED_FILE: '' }), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start printed no ready line in 180 s:\n${runtimeLog}`)), 180_000);
    const onData = (d: Buffer) => {
      runtimeLog += d.toString();
      if (/^ready in /m.test(runtimeLog)) {
        clearTimeout(timer);
        resolve();
      }
    };
    runtime!.stdout!.on('data', onData);
    runtime!.stderr!.on('data', (d: Buffer) => (runtimeLog += d.toString()));
    runtime!.on('exit', (code) => reject(new Error(`npm start exited (${code}) before it was ready:\n${runtimeLog}`)));
  });
  // Its own engines, as a reader's npm start has, not the integration suite's (test/fixtures/own-engines.ts).
  if (!OWN_DYNAMODB_LINE.test(runtimeLog)) throw new Error(`npm start joined engines it was handed instead of starting its own:\n${runtimeLog}`);
}, 200_000);

afterAll(async () => {
  if (runtime?.pid) {
    try {
      process.kill(-runtime.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    await new Promise((r) => (runtime!.exitCode === null ? runtime!.once('exit', r) : r(undefined)));
  }
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  process.stdout.write(
    `\ndocs runner: ${pages.length} pages; ran ${counts.shell} shell and ${counts.ts} TypeScript blocks; ${counts.skipped} marked skip-run; ${counts.other} output/JSON/diagram blocks not run; ${seconds} s with npm start\n`,
  );
});

/** One bash script for the page: its runnable blocks in order, each announced, TS blocks through tsx. */
function pageScript(page: string, blocks: Block[], tsFiles: string[]): string {
  const parts = [
    'set -Eeuo pipefail',
    // An HTTP error fails the block (curl -s alone exits 0 on a 404).
    'curl() { command curl --fail-with-body --max-time 60 "$@"; }',
    `trap 'echo "docs runner: ${page} failed in the block at line $__block (exit $?)" >&2' ERR`,
  ];
  for (const b of blocks) {
    if (b.kind === 'other') continue;
    if (b.skip) continue;
    parts.push(`__block=${b.line}`, `echo "--- ${page}:${b.line} (${b.kind})"`);
    if (b.kind === 'shell') parts.push(onPort(b.code, port));
    else {
      const file = join(ROOT, `docs-run-${process.pid}-${page.replace(/\W/g, '-')}-${b.line}.mts`);
      writeFileSync(file, onPort(b.code, port));
      tsFiles.push(file);
      parts.push(`"${join(ROOT, 'node_modules/.bin/tsx')}" "${file}"`);
    }
    parts.push('echo');
  }
  return `${parts.join('\n')}\n`;
}

describe('docs run top to bottom on a fresh npm start', () => {
  it.each(pages)('%s', async (page) => {
    const blocks = extractBlocks(readFileSync(join(ROOT, page), 'utf8'));
    for (const b of blocks) {
      if (b.kind === 'other') counts.other++;
      else if (b.skip) counts.skipped++;
      else counts[b.kind]++;
    }
    const tsFiles: string[] = [];
    const script = pageScript(page, blocks, tsFiles);
    try {
      // Asynchronously: the runtime's output keeps being read while the page runs.
      const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn('bash', ['-c', script], {
          cwd: ROOT,
          env: { ...ownEnginesEnv(), PORT: String(port), MSG_API_URL: `http://127.0.0.1:${port}/api/v1`, MSG_API_KEY: 'dev-key' },
          stdio: ['ignore', 'pipe', 'pipe'],
          // Its own process group: what a page starts in the background (a webhook receiver) stops with it.
          detached: true,
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 180_000);
        child.on('exit', (status) => {
          clearTimeout(timer);
          try {
            process.kill(-child.pid!, 'SIGTERM');
          } catch {
            // nothing left in the group
          }
          // Background processes may hold the pipes open: read what is there, do not wait for EOF.
          setTimeout(() => resolve({ status, stdout, stderr }), 200);
        });
      });
      if (r.status !== 0) {
        const tail = (s: string) => s.split('\n').slice(-40).join('\n');
        throw new Error(`${page} failed (exit ${r.status}):\n${tail(r.stderr)}\n--- stdout:\n${tail(r.stdout)}\n--- npm start:\n${tail(runtimeLog)}`);
      }
    } finally {
      for (const f of tsFiles) rmSync(f, { force: true });
    }
  });
});
