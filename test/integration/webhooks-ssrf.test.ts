/**
 * The SSRF guard with private targets refused (the AWS default): at create, PUT, PATCH and test
 * (422 on url), and at delivery time against the addresses DNS gives then (DNS rebinding).
 */
import { randomUUID } from 'node:crypto';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { startReceiver, until, type Receiver } from '../fixtures/receiver';
import { unique } from '../fixtures/queues';
import { startLocalWebhooks, type LocalWebhooks } from '../../local/webhooks';
import { resetConfig } from '../../lambda/core/config';
import { setResolver } from '../../lambda/webhooks/storage/target-guard';
import { closeAgents } from '../../lambda/webhooks/storage/http-delivery';

jest.setTimeout(30_000);

let server: TestServer;
let local: LocalWebhooks;
let call: ReturnType<typeof client>;
let recv: Receiver;
/** What the fake DNS answers for rebind.test. */
let rebindAnswer = '93.184.216.34';

beforeAll(async () => {
  process.env.MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS = 'false';
  resetConfig();
  await closeAgents();
  setResolver(async (host) => {
    if (host === 'rebind.test') return [{ address: rebindAnswer, family: 4 }];
    if (host === 'metadata.test') return [{ address: '169.254.169.254', family: 4 }];
    if (host === 'mixed.test') return [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }];
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  });
  server = await startTestServer();
  local = await startLocalWebhooks({ queueName: `deliveries-${randomUUID()}` });
  call = client(server.baseUrl, (await createTestNamespace('ssrf')).key);
  recv = await startReceiver();
});
afterAll(async () => {
  setResolver(undefined);
  await recv.close();
  await local.stop();
  await server.close();
  process.env.MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS = 'true';
  resetConfig();
});

const urlRefused = (res: { status: number; body: any }) => {
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('VALIDATION_ERROR');
  expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain('url');
};

describe('SSRF guard', () => {
  it.each([
    'http://127.0.0.1:8080/x', 'http://localhost/x', 'http://[::1]/x', 'http://169.254.169.254/latest/meta-data', 'http://2130706433/x',
    'http://0x7f000001/x', 'http://[::ffff:127.0.0.1]/x', 'http://10.0.0.5/x', 'http://100.64.0.1/x', 'http://224.0.0.1/x',
    'http://metadata.test/x', 'http://mixed.test/x', 'http://does-not-resolve.test/x',
  ])('refuses %s at create', async (url) => {
    urlRefused(await call('POST', '/webhooks', { name: unique('wh'), url, topic_filter: 'a' }));
  });

  it('refuses a private target at PUT, PATCH and test, and changes nothing', async () => {
    const name = unique('wh');
    expect((await call('POST', '/webhooks', { name, url: 'http://rebind.test/x', topic_filter: 'a', enabled: false })).status).toBe(201);
    urlRefused(await call('PUT', `/webhooks/${name}`, { url: 'http://127.0.0.1/x', topic_filter: 'a' }));
    urlRefused(await call('PATCH', `/webhooks/${name}`, { url: 'http://169.254.169.254/x' }));
    urlRefused(await call('POST', '/webhooks/test', { name: 'probe', url: 'http://[::1]:9/x', topic_filter: 'a', method: 'POST' }));
    expect((await call('GET', `/webhooks/${name}`)).body.data.url).toBe('http://rebind.test/x');
  });

  it('checks the addresses again at delivery: a host rebound to 127.0.0.1 gets no request', async () => {
    const port = new URL(recv.url).port;
    const topic = unique('t');
    const name = unique('wh');
    rebindAnswer = '93.184.216.34';
    expect((await call('POST', '/webhooks', { name, url: `http://rebind.test:${port}/hook`, topic_filter: topic, retry_count: 0 })).status).toBe(201);
    rebindAnswer = '127.0.0.1';
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'x' })).status).toBe(201);
    const s = await until(async () => {
      const x = (await call('GET', `/webhooks/${name}/status`)).body.data;
      return x.failure_count === 1 && x;
    }, 10000, 'the refused delivery counted');
    expect(s.last_error).toMatch(/not allowed/);
    expect(recv.requests).toHaveLength(0);
  });
});
