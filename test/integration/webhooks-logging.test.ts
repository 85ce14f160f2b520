/**
 * The webhook flags `log_requests`, `log_responses` and `debug` write their lines where the local
 * runtime shows them (its level is WARN), with the headers docs/webhooks.md promises and header
 * values redacted (issue 12 items 12b and 9).
 */
import '../fixtures/local-log-level';
import { randomUUID } from 'node:crypto';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { receiverPool, until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { captureLogs, type CapturedLogs } from '../fixtures/log-capture';
import { startLocalWebhooks, type LocalWebhooks } from '../../local/webhooks';
import { logger } from '../../lambda/observability';

jest.setTimeout(30_000);

let server: TestServer;
let local: LocalWebhooks;
let call: ReturnType<typeof client>;
const receivers = receiverPool();
let logs: CapturedLogs | undefined;

const TOKEN = 'Bearer tok-7f3a9c-do-not-leak';

beforeAll(async () => {
  server = await startTestServer();
  local = await startLocalWebhooks({ queueName: `deliveries-${randomUUID()}` });
  call = client(server.baseUrl, (await createTestNamespace('wlg')).key);
});
afterEach(() => logs?.restore());
afterAll(async () => {
  await receivers.closeAll();
  await local.stop();
  await server.close();
});

/** Delivers one message through a webhook with `flags`; returns the webhook's log lines. */
async function deliverWith(flags: Record<string, boolean>) {
  const recv = await receivers.start({ responseBody: 'pong-42' });
  const topic = unique('t');
  const w = await createWebhook(call, { url: recv.url, topic_filter: topic, headers: { Authorization: TOKEN, 'X-Tenant': 'acme' }, ...flags });
  logs = captureLogs();
  expect((await call('POST', `/topics/${topic}/messages`, { payload: 'hello logs' })).status).toBe(201);
  await until(async () => (await call('GET', `/webhooks/${w.name}/status`)).body.data.success_count === 1, 10_000, 'the delivery');
  const mine = logs.lines().filter((l) => l.webhook === w.name);
  expect(logs.text()).not.toContain('tok-7f3a9c');
  return { request: mine.find((l) => l.message === 'webhook request'), response: mine.find((l) => l.message === 'webhook response'), url: recv.url };
}

describe('webhook traffic logs at the local runtime level', () => {
  it('runs at WARN, as npm start does', () => {
    expect(logger.getLevelName()).toBe('WARN');
  });

  it('log_requests writes the method, URL, headers (configured values redacted) and body', async () => {
    const { request, response, url } = await deliverWith({ log_requests: true });
    expect(request).toMatchObject({ level: 'INFO', method: 'POST', url, attempt: 1 });
    expect(request?.headers).toMatchObject({ authorization: '[redacted]', 'x-tenant': '[redacted]', 'content-type': 'application/json', 'webhook-id': expect.any(String) });
    expect(JSON.parse(request?.body).payload).toBe('hello logs');
    expect(response).toBeUndefined();
  });

  it('log_responses writes the status, duration and the response body', async () => {
    const { request, response } = await deliverWith({ log_responses: true });
    expect(response).toMatchObject({ level: 'INFO', status_code: 200, response: 'pong-42', duration_ms: expect.any(Number) });
    expect(request).toBeUndefined();
  });

  it('debug writes both', async () => {
    const { request, response } = await deliverWith({ debug: true });
    expect(request?.headers).toMatchObject({ authorization: '[redacted]' });
    expect(response).toMatchObject({ status_code: 200 });
  });

  it('without a flag, neither line is written', async () => {
    const { request, response } = await deliverWith({});
    expect([request, response]).toEqual([undefined, undefined]);
  });
});
