/**
 * `npm run smoke` (bin/smoke.ts) against the local runtime's gateway: every check passes on a
 * working service, and a failing one is reported and counted (docs/aws-parity.md).
 */
import { createServer, type Server } from 'node:http';
import { smoke } from '../../bin/smoke';
import { startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';

jest.setTimeout(180_000);

let server: TestServer;
let receiver: Server;
let receiverUrl: string;
beforeAll(async () => {
  server = await startTestServer();
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end('ok'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
});
afterAll(async () => {
  await server.close();
  await new Promise<void>((r) => receiver.close(() => r()));
});

it('passes every check against a working service, one line each and nothing skipped with a webhook URL', async () => {
  const ns = await createTestNamespace('smk');
  const lines: string[] = [];
  const result = await smoke({ baseUrl: server.baseUrl, key: ns.key, webhookUrl: receiverUrl, out: (l) => lines.push(l) });
  expect(lines.filter((l) => !l.startsWith('ok '))).toEqual([]);
  expect(result).toEqual({ passed: lines.length, failed: 0, skipped: 0 });
  expect(lines.length).toBeGreaterThanOrEqual(11);
  // Cleaned up: nothing of the smoke test is left in the namespace.
  const list = await fetch(`${server.baseUrl}/queues`, { headers: { authorization: `Bearer ${ns.key}` } }).then((r) => r.json() as Promise<any>);
  expect(list.data.queues).toEqual([]);
});

it('reports and counts failures (a key that may not manage), and skips the webhook without a URL', async () => {
  const ns = await createTestNamespace('smk');
  const lines: string[] = [];
  const result = await smoke({ baseUrl: server.baseUrl, key: ns.keys.publish, out: (l) => lines.push(l) });
  expect(result.failed).toBeGreaterThan(0);
  expect(result.skipped).toBe(1);
  expect(lines.some((l) => /^FAIL {2}queue: .*403/.test(l))).toBe(true);
  expect(lines.some((l) => l.startsWith('skip  webhook'))).toBe(true);
});
