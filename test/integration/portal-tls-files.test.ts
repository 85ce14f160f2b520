/**
 * A portal session cannot use its namespace's TLS files. Where webhook TLS
 * material may be a file path (the local runtime with MSG_WEBHOOK_TLS_FILE_PATHS=true), a path is
 * read from the namespace's folder MSG_WEBHOOK_TLS_DIR/<namespace>/ (lambda/webhooks/storage/http-delivery.ts
 * readTlsFile): the platform's folder, holding the platform's client certificate and key. A
 * session's webhook bodies and `POST /webhooks/test` take `tls` paths like an API key's, so one
 * customer, with nothing but its session, has the service connect to a URL of its choosing
 * presenting the platform's client certificate (proved with the platform's key), and can probe
 * which files the folder holds from the 422 messages.
 *
 * Promised (docs/portal.md: a session manages its application's webhooks, "nothing else of the
 * namespace"; docs/security.md "TLS files": "one namespace cannot name another's client key").
 * Before the fix: the session's test delivery succeeded against a receiver that requires the platform's
 * client certificate, and the receiver saw it (CN webhook-client). Now a session's `tls` is PEM
 * text only (422 naming each field); the platform's key may still name its files.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { makeTestPki, type TestPki } from '../fixtures/tls';
import { resetConfig } from '../../lambda/core/config';
import { closeAgents } from '../../lambda/webhooks/storage/http-delivery';

jest.setTimeout(120_000);

let server: TestServer;
let pki: TestPki;
let tlsDir: string;
let receiver: ReturnType<typeof createHttpsServer>;
let receiverUrl: string;
const seen: string[] = [];

beforeAll(async () => {
  pki = makeTestPki();
  tlsDir = mkdtempSync(join(tmpdir(), 'r8-tls-'));
  process.env.MSG_WEBHOOK_TLS_FILE_PATHS = 'true';
  process.env.MSG_WEBHOOK_TLS_DIR = tlsDir;
  resetConfig();
  // A receiver that admits only clients with a certificate of the platform's CA (say a partner's API).
  receiver = createHttpsServer({ cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    seen.push(String(peer?.subject?.CN));
    req.resume();
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await closeAgents();
  receiver?.close();
  pki?.remove();
  rmSync(tlsDir, { recursive: true, force: true });
  delete process.env.MSG_WEBHOOK_TLS_FILE_PATHS;
  delete process.env.MSG_WEBHOOK_TLS_DIR;
  resetConfig();
});

it("a portal session cannot use the namespace's TLS files (the platform's client certificate and key)", async () => {
  const ns = await createTestNamespace('r8tls');
  const call = client(server.baseUrl, ns.key);
  // The platform's own TLS files, in its namespace's folder, as docs/webhooks.md says to put them.
  mkdirSync(join(tlsDir, ns.name));
  copyFileSync(pki.paths.ca, join(tlsDir, ns.name, 'ca.crt'));
  copyFileSync(pki.paths.clientCert, join(tlsDir, ns.name, 'platform-client.crt'));
  copyFileSync(pki.paths.clientKey, join(tlsDir, ns.name, 'platform-client.key'));

  const uid = unique('cust');
  expect((await call('POST', '/applications', { uid })).status).toBe(201);
  const access = await call('POST', `/applications/${uid}/portal-access`, {});
  const link = decodeURIComponent(new URL(access.body.data.url).hash.replace(/^#token=/, ''));
  const session = client(server.baseUrl, (await client(server.baseUrl, link)('POST', '/portal/session')).body.data.session_token);

  const tls = { ca_cert: 'ca.crt', client_cert: 'platform-client.crt', client_key: 'platform-client.key' };
  const test = await session('POST', '/webhooks/test', { name: 'probe', url: receiverUrl, topic_filter: 'a/b', method: 'POST', tls });
  const created = await session('POST', '/webhooks', { name: unique('wh'), url: receiverUrl, topic_filter: 'a/b', enabled: false, tls });
  expect({ test_sent_with_platform_cert: test.body.data?.success === true, session_webhook_with_platform_files: created.status, receiver_saw: seen }).toEqual({
    test_sent_with_platform_cert: false,
    session_webhook_with_platform_files: 422,
    receiver_saw: [],
  });
  expect(test.status).toBe(422);
  expect(((created.body.error?.details as { fields: { field: string }[] }).fields).map((f) => f.field).sort()).toEqual(['tls.ca_cert', 'tls.client_cert', 'tls.client_key']);
  // The platform's own key may still name its files.
  const own = await call('POST', '/webhooks/test', { name: 'probe', url: receiverUrl, topic_filter: 'a/b', method: 'POST', tls });
  expect(own.body.data?.success).toBe(true);
});
