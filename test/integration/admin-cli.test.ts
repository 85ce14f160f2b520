/**
 * The admin CLI as operators use it: `--json` piped into another program through
 * `npm run -s admin` (stdout holds only the JSON), and a long redrive reporting progress on
 * stderr per batch while stdout keeps only the result.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { run } from '../../bin/admin';
import { REDRIVE_BATCH } from '../../lambda/queues/redrive';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';

jest.setTimeout(120_000);

const ROOT = resolve(__dirname, '../..');

describe('admin CLI output', () => {
  it('pipes `npm run -s admin -- ... --json` into JSON.parse', async () => {
    const ns = await createTestNamespace('pipe');
    const r = spawnSync(
      'bash',
      ['-o', 'pipefail', '-c', `npm run -s admin -- limits get ${ns.name} --json | node -e 'const v = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(v.namespace)'`],
      { cwd: ROOT, env: process.env, encoding: 'utf8', timeout: 90_000 },
    );
    expect({ status: r.status, stdout: r.stdout.trim() }).toEqual({ status: 0, stdout: ns.name });
    // Where the CLI's own lines went: stderr.
    expect(r.stderr).toContain('target: ');
  });

  it('prints --help for one command through npm run -s admin', () => {
    const r = spawnSync('npm', ['run', '-s', 'admin', '--', 'key', 'revoke', '--help'], { cwd: ROOT, env: process.env, encoding: 'utf8', timeout: 90_000 });
    expect(r.status).toBe(0);
    expect(r.stdout.startsWith('Usage: npm run admin -- key revoke <namespace> <key-id>')).toBe(true);
  });

  describe('redrive progress', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer();
    });
    afterAll(async () => {
      await server.close();
    });

    it('reports each batch on stderr with counts and rate, then a summary; stdout holds only the JSON result', async () => {
      const ns = await createTestNamespace('prog');
      const call = client(server.baseUrl, ns.key);
      const src = unique('src');
      const dst = unique('dst');
      expect((await call('POST', '/queues', { name: src, topic_filter: `${src}/#` })).status).toBe(201);
      expect((await call('POST', '/queues', { name: dst, topic_filter: `${dst}/#` })).status).toBe(201);
      const n = 2 * REDRIVE_BATCH + 10;
      const messages = Array.from({ length: n }, (_, i) => ({ payload: `m${i}` }));
      expect((await call('POST', `/topics/${src}/a/messages/batch`, { messages })).status).toBe(201);

      const out: string[] = [];
      const err: string[] = [];
      const code = await run(['redrive', ns.name, src, '--to-topic', `${dst}/back`, '--json'], { out: (l) => out.push(l), err: (l) => err.push(l), env: process.env });
      expect(code).toBe(0);
      expect(JSON.parse(out.join('\n'))).toMatchObject({ moved: n, remaining: 0 });
      const progress = err.filter((l) => l.startsWith('redrive: '));
      expect(progress.slice(0, -1).map((l) => l.replace(/ in [\d.]+ s, [\d.]+ messages\/s/, ''))).toEqual([
        `redrive: ${REDRIVE_BATCH} of ${n} messages (${Math.floor((REDRIVE_BATCH / n) * 100)}%)`,
        `redrive: ${2 * REDRIVE_BATCH} of ${n} messages (${Math.floor((2 * REDRIVE_BATCH / n) * 100)}%)`,
        `redrive: ${n} of ${n} messages (100%)`,
      ]);
      expect(progress.at(-1)).toMatch(new RegExp(`^redrive: done: ${n} messages in [\\d.]+ s, [\\d.]+ messages/s$`));
      expect((await call('GET', `/queues/${dst}`)).body.data.message_count).toBe(n);
    });
  });
});
