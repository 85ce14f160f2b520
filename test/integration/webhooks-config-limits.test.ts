/**
 * Webhook configuration limits (docs/design/0024-webhook-configuration-guards.md): the whole stored
 * configuration has a size limit so it always fits its DynamoDB item (413, never a 500 after the
 * write failed), and a wrong JSON type anywhere in a webhook body is 400 INVALID_REQUEST, enum-like
 * fields included.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';

jest.setTimeout(30_000);

let server: TestServer;
let call: ReturnType<typeof client>;
beforeAll(async () => {
  server = await startTestServer();
  call = client(server.baseUrl, (await createTestNamespace('wcl')).key);
});
afterAll(() => server.close());

const base = () => ({ name: unique('wh'), url: 'https://hooks.example.com/in', topic_filter: 'a/#', enabled: false });
/**
 * A body template and two hook payloads of 60,000 characters: each within its own limit (64 KiB),
 * about 180 KB together. (Headers can no longer make it: they are held to 16 KiB rendered, 422.)
 */
const bigConfig = () => ({
  body_template: { text: 'v'.repeat(60_000) },
  on_success: { topic: 'hooks/ok', payload: 's'.repeat(60_000) },
  on_failure: { topic: 'hooks/failed', payload: 'f'.repeat(60_000) },
});

describe('the size of a webhook configuration', () => {
  it('answers 413 for a configuration too large to store, and stores nothing', async () => {
    const body = { ...base(), ...bigConfig() };
    const res = await call('POST', '/webhooks', body);
    expect([res.status, res.body.error?.code]).toEqual([413, 'MESSAGE_TOO_LARGE']);
    expect((await call('GET', `/webhooks/${body.name}`)).status).toBe(404);
  });

  it('answers 413 for a PATCH or PUT that grows the configuration past the limit, and keeps the stored one', async () => {
    const w = await createWebhook(call, { url: 'https://hooks.example.com/in', topic_filter: 'a/#', enabled: false, retry_count: 4 });
    const patch = await call('PATCH', `/webhooks/${w.name}`, bigConfig());
    expect(patch.status).toBe(413);
    const put = await call('PUT', `/webhooks/${w.name}`, { url: 'https://hooks.example.com/in', topic_filter: 'a/#', ...bigConfig() });
    expect(put.status).toBe(413);
    expect((await call('GET', `/webhooks/${w.name}`)).body.data).toMatchObject({ retry_count: 4, headers: {} });
  });

  it('answers 422 for a url longer than 2048 characters', async () => {
    const res = await call('POST', '/webhooks', { ...base(), url: `https://hooks.example.com/${'p'.repeat(2100)}` });
    expect([res.status, (res.body.error?.details.fields as { field: string }[] | undefined)?.[0]?.field]).toEqual([422, 'url']);
  });
});

describe('wrong JSON types in a webhook body', () => {
  it.each([
    ['compression', 5, 400, 'INVALID_REQUEST'],
    ['compression', 'zip', 422, 'VALIDATION_ERROR'],
    ['on_failure', 'send_somewhere', 422, 'VALIDATION_ERROR'],
    ['on_failure', 7, 400, 'INVALID_REQUEST'],
    ['method', 5, 400, 'INVALID_REQUEST'],
  ])('%s: %j answers %s %s through the API, and nothing is created', async (field, value, status, code) => {
    const body = { ...base(), [field]: value };
    const res = await call('POST', '/webhooks', body);
    expect([res.status, res.body.error?.code, (res.body.error?.details.fields as { field: string }[])[0]?.field]).toEqual([status, code, field]);
    expect((await call('GET', `/webhooks/${body.name}`)).status).toBe(404);
  });
});
