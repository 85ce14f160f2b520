/**
 * TLS options of webhooks against an HTTPS receiver with test-only certificates: `verify_ssl`,
 * a custom CA and a client certificate (mutual TLS), for deliveries and for `POST /webhooks/test`,
 * which honours them like a delivery (docs/webhooks.md).
 */
import { randomUUID } from 'node:crypto';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { startTlsReceiver, TLS_PEM, type TlsReceiver } from '../fixtures/tls-receiver';
import { startLocalWebhooks, type LocalWebhooks } from '../../local/webhooks';

jest.setTimeout(30_000);

let server: TestServer;
let local: LocalWebhooks;
let call: ReturnType<typeof client>;
let plain: TlsReceiver;
let mutual: TlsReceiver;

beforeAll(async () => {
  server = await startTestServer();
  local = await startLocalWebhooks({ queueName: `deliveries-${randomUUID()}` });
  call = client(server.baseUrl, (await createTestNamespace('wtl')).key);
  plain = await startTlsReceiver();
  mutual = await startTlsReceiver({ requireClientCert: true });
});
afterAll(async () => {
  await plain.close();
  await mutual.close();
  await local.stop();
  await server.close();
});

const test = async (url: string, tls?: Record<string, unknown>) => {
  const res = await call('POST', '/webhooks/test', { name: 'tls-test', url, topic_filter: 'a/#', ...(tls ? { tls } : {}) });
  expect(res.status).toBe(200);
  return res.body.data as { success: boolean; status_code: number | null; error: string | null };
};

describe('POST /webhooks/test with TLS options', () => {
  it('fails on a certificate no trusted CA signed, as a delivery would', async () => {
    const r = await test(plain.url);
    expect(r).toMatchObject({ success: false, status_code: null });
    expect(r.error).toMatch(/^TLS error/);
  });

  it('succeeds with verify_ssl false', async () => {
    expect(await test(plain.url, { verify_ssl: false })).toMatchObject({ success: true, status_code: 200, error: null });
  });

  it('succeeds with the CA given as ca_cert', async () => {
    expect(await test(plain.url, { ca_cert: TLS_PEM.ca })).toMatchObject({ success: true, status_code: 200 });
  });

  it('presents the client certificate to a receiver that requires one', async () => {
    expect((await test(mutual.url, { ca_cert: TLS_PEM.ca })).success).toBe(false);
    expect(await test(mutual.url, { ca_cert: TLS_PEM.ca, client_cert: TLS_PEM.clientCert, client_key: TLS_PEM.clientKey })).toMatchObject({ success: true, status_code: 200 });
    expect(mutual.clients).toContain('messaging webhook client');
  });

  it('refuses TLS options a delivery could not use with 422 on the field', async () => {
    const res = await call('POST', '/webhooks/test', { name: 'tls-test', url: plain.url, topic_filter: 'a/#', tls: { client_cert: TLS_PEM.clientCert } });
    expect(res.status).toBe(422);
    expect(res.body.error?.details.fields).toEqual([expect.objectContaining({ field: 'tls.client_key' })]);
    const bad = await call('POST', '/webhooks/test', { name: 'tls-test', url: plain.url, topic_filter: 'a/#', tls: { verify_ssl: 'no' } });
    expect(bad.status).toBe(400);
  });
});

describe('deliveries with TLS options', () => {
  it('reach a mutual-TLS receiver with the CA and the client certificate', async () => {
    const topic = unique('t');
    const w = await createWebhook(call, { url: mutual.url, topic_filter: topic, retry_count: 0, tls: { ca_cert: TLS_PEM.ca, client_cert: TLS_PEM.clientCert, client_key: TLS_PEM.clientKey } });
    const before = mutual.clients.length;
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'over mTLS' })).status).toBe(201);
    await until(async () => (await call('GET', `/webhooks/${w.name}/status`)).body.data.success_count === 1, 10_000, 'the delivery');
    expect(mutual.clients.slice(before)).toEqual(['messaging webhook client']);
  });
});
