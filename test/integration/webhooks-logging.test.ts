/**
 * The webhook flags `log_requests`, `log_responses` and `debug` write their lines where the local
 * runtime shows them (its level is WARN), with the headers docs/webhooks.md promises and header
 * values redacted (docs/security.md).
 */
import '../fixtures/local-log-level';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { captureLogs, type CapturedLogs } from '../fixtures/log-capture';
import { logger } from '../../lambda/core/observability';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(30_000);

const bed = webhookTestbed('wlg');
let logs: CapturedLogs | undefined;

const TOKEN = 'Bearer tok-7f3a9c-do-not-leak';

afterEach(() => logs?.restore());

/** Delivers one message through a webhook with `flags`; returns the webhook's log lines. */
async function deliverWith(flags: Record<string, boolean>) {
  const recv = await bed.receivers.start({ responseBody: 'pong-42' });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, headers: { Authorization: TOKEN, 'X-Tenant': 'acme' }, ...flags });
  logs = captureLogs();
  expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'hello logs' })).status).toBe(201);
  await until(async () => (await bed.call('GET', `/webhooks/${w.name}/status`)).body.data.success_count === 1, 10_000, 'the delivery');
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
