/**
 * What a webhook's status says (issue 12 item 11): `last_error` describes a failure only until a
 * later delivery succeeds. (`status` reading `disabled` while `enabled` is false was reverted in
 * cfee165: a listed conformance case asserts `active` for a webhook created disabled.)
 */
import { randomUUID } from 'node:crypto';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { receiverPool, until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { startLocalWebhooks, type LocalWebhooks } from '../../local/webhooks';

jest.setTimeout(30_000);

let server: TestServer;
let local: LocalWebhooks;
let call: ReturnType<typeof client>;
const receivers = receiverPool();

beforeAll(async () => {
  server = await startTestServer();
  local = await startLocalWebhooks({ queueName: `deliveries-${randomUUID()}` });
  call = client(server.baseUrl, (await createTestNamespace('wst')).key);
});
afterAll(async () => {
  await receivers.closeAll();
  await local.stop();
  await server.close();
});

const status = async (name: string) => (await call('GET', `/webhooks/${name}/status`)).body.data;

describe('webhook status', () => {
  it('reads disabled while enabled is false, in the status, the get and the list', async () => {
    const w = await createWebhook(call, { url: 'https://hooks.example.com/in', topic_filter: unique('t'), enabled: false });
    const listed = async () => (await call('GET', '/webhooks?limit=100')).body.data.webhooks.find((x: { name: string }) => x.name === w.name).status;
    expect((await status(w.name)).status).toBe('disabled');
    expect((await call('GET', `/webhooks/${w.name}`)).body.data.status).toBe('disabled');
    expect(await listed()).toBe('disabled');
    expect((await call('PATCH', `/webhooks/${w.name}`, { enabled: true })).body.data.status).toBe('active');
    expect((await status(w.name)).status).toBe('active');
    expect(await listed()).toBe('active');
  });

  it('clears last_error once a later delivery succeeds', async () => {
    const recv = await receivers.start({ failFirst: 1 });
    const topic = unique('t');
    const w = await createWebhook(call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'fails' })).status).toBe(201);
    await until(async () => (await status(w.name)).failure_count === 1, 10_000, 'the failure counted');
    expect((await status(w.name)).last_error).toBe('HTTP 500');
    expect((await call('POST', `/topics/${topic}/messages`, { payload: 'succeeds' })).status).toBe(201);
    const s = await until(async () => { const x = await status(w.name); return x.success_count === 1 && x; }, 10_000, 'the success counted');
    expect(s).toMatchObject({ failure_count: 1, last_error: null, next_retry: null });
  });
});
