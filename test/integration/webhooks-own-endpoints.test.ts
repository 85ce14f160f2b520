/**
 * With private webhook targets allowed (the local runtime's default), the
 * runtime's own endpoints (the gateway, DynamoDB Local, fauxqs) are still refused as targets, at
 * create and test (422 on url) and at delivery (the connection is never made), on every spelling
 * of an address of this machine: a `manage` key must not be able to write to DynamoDB Local with
 * an `X-Amz-Target: PutItem` header and a body template.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { startReceiver, type Receiver } from '../fixtures/receiver';
import { unique } from '../fixtures/queues';
import { resetConfig } from '../../lambda/core/config';
import { closeAgents, sendRequest } from '../../lambda/webhooks/storage/http-delivery';

jest.setTimeout(30_000);

let server: TestServer;
let call: ReturnType<typeof client>;
let recv: Receiver;
const dynamo = new URL(process.env.MSG_DYNAMODB_ENDPOINT as string);
const sqs = new URL(process.env.MSG_SQS_ENDPOINT as string);
let gatewayPort: string;

beforeAll(async () => {
  server = await startTestServer();
  gatewayPort = new URL(server.baseUrl).port;
  process.env.MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS = 'true';
  process.env.MSG_RUNTIME_ENDPOINTS = [dynamo.origin, sqs.origin, `http://127.0.0.1:${gatewayPort}`].join(',');
  resetConfig();
  await closeAgents();
  call = client(server.baseUrl, (await createTestNamespace('own')).key);
  recv = await startReceiver();
});
afterAll(async () => {
  delete process.env.MSG_RUNTIME_ENDPOINTS;
  resetConfig();
  await closeAgents();
  await recv.close();
  await server.close();
});

const spellings = (port: string) => [
  `http://127.0.0.1:${port}/`, `http://localhost:${port}/`, `http://127.0.0.2:${port}/`, `http://[::1]:${port}/`, `http://0.0.0.0:${port}/`,
  `http://[::ffff:127.0.0.1]:${port}/`, `http://2130706433:${port}/`, `http://0x7f.1:${port}/`,
];

describe('the runtime\'s own endpoints as webhook targets', () => {
  it.each([
    ['DynamoDB Local', () => dynamo.port], ['fauxqs', () => sqs.port], ['the gateway', () => gatewayPort],
  ])('refuses %s in every spelling at create and at test', async (_what, port) => {
    for (const url of spellings(port())) {
      const created = await call('POST', '/webhooks', { name: unique('wh'), url, topic_filter: 'a', headers: { 'X-Amz-Target': 'DynamoDB_20120810.PutItem' } });
      expect({ url, status: created.status, code: created.body.error?.code }).toEqual({ url, status: 422, code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(created.body.error?.details)).toContain('own endpoint');
      const tested = await call('POST', '/webhooks/test', { name: unique('wh'), url, topic_filter: 'a' });
      expect({ url, status: tested.status }).toEqual({ url, status: 422 });
    }
  });

  it('never connects to them at delivery, even for a URL stored before the check', async () => {
    for (const url of [...spellings(dynamo.port), ...spellings(sqs.port)]) {
      const r = await sendRequest({ url, method: 'POST', headers: { 'x-amz-target': 'DynamoDB_20120810.ListTables', 'content-type': 'application/x-amz-json-1.0' }, body: Buffer.from('{}'), timeoutSeconds: 5 });
      expect({ url, ok: r.ok, status: r.status_code, error: r.error }).toEqual({ url, ok: false, status: null, error: "target address not allowed (the runtime's own endpoint)" });
    }
  });

  it('still reaches other local receivers (private targets stay allowed)', async () => {
    const created = await call('POST', '/webhooks', { name: unique('wh'), url: recv.url, topic_filter: 'a' });
    expect(created.status).toBe(201);
    const r = await sendRequest({ url: recv.url.replace("127.0.0.1", "localhost"), method: 'POST', headers: {}, body: Buffer.from('{}'), timeoutSeconds: 5 });
    expect(r).toMatchObject({ ok: true, status_code: 200 });
  });
});
