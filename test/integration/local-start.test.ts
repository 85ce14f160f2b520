/**
 * `npm start` as a new user meets it: the ready line, then where the OpenAPI document is (and that
 * it is served there) and how to reach the admin CLI. Started as npm starts it
 * (`node --import tsx local/main.ts`), stopped with SIGTERM.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort } from '../../local/dynamodb';

jest.setTimeout(90_000);

const ROOT = resolve(__dirname, '../..');

it('prints the base URL, the dev key, the OpenAPI URL and an admin CLI hint when ready', async () => {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts'], { cwd: ROOT, env: { ...process.env, PORT: String(port), MSG_DYNAMODB_ENDPOINT: process.env.MSG_DYNAMODB_ENDPOINT }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!/^admin: .*$/m.test(out)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not get ready:\n${out}\n${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const base = `http://127.0.0.1:${port}/api/v1`;
    expect(out).toMatch(new RegExp(`^ready in [\\d.]+ s: ${base} .*key dev-key`, 'm'));
    expect(out).toContain(`openapi: ${base}/openapi.json`);
    expect(out).toMatch(new RegExp(`^admin: npm run admin -- --port ${port} namespace list`, 'm'));
    const doc = await fetch(`${base}/openapi.json`);
    expect({ status: doc.status, openapi: ((await doc.json()) as { openapi: string }).openapi }).toEqual({ status: 200, openapi: '3.1.0' });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});
