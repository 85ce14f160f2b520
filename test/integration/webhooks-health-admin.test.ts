/**
 * The admin CLI's namespace defaults of the webhook health thresholds (docs/admin.md:
 * `npm run admin -- webhook-health set|get`), through the real local gateway on DynamoDB Local:
 * shown with defaults marked, refused with usage errors, applied to webhooks that set none.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { admin } from '../fixtures/admin';

jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

it('sets, shows and removes a namespace\'s health thresholds, refuses bad ones, and webhooks that set none show them', async () => {
  const ns = await createTestNamespace('whad');
  const call = client(server.baseUrl, ns.key);
  const before = await admin(['webhook-health', 'get', ns.name, '--json']);
  expect(before.code).toBe(0);
  expect(JSON.parse(before.out)).toEqual({ namespace: ns.name, thresholds: { failure_threshold: 100, disable_after: 432000 }, sources: { failure_threshold: 'default', disable_after: 'default' } });
  for (const bad of [['retries', '5'], ['failure_threshold', '0'], ['failure_threshold', 'many'], ['failure_threshold', '10001'], ['disable_after', '59'], ['disable_after', '2592001']]) {
    const r = await admin(['webhook-health', 'set', ns.name, ...bad]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/give (one of|a whole number)/);
  }
  expect((await admin(['webhook-health', 'set', 'no-such-namespace-xyz', 'failure_threshold', '5'])).code).not.toBe(0);

  expect((await admin(['webhook-health', 'set', ns.name, 'failure_threshold', '20'])).code).toBe(0);
  expect((await admin(['webhook-health', 'set', ns.name, 'disable_after', '86400'])).code).toBe(0);
  expect(JSON.parse((await admin(['webhook-health', 'get', ns.name, '--json'])).out)).toMatchObject({ thresholds: { failure_threshold: 20, disable_after: 86400 }, sources: { failure_threshold: 'namespace', disable_after: 'namespace' } });
  const human = await admin(['webhook-health', 'get', ns.name]);
  expect(human.out).toContain('failure_threshold: 20');
  const w = await call('POST', '/webhooks', { name: unique('w'), url: 'https://hooks.example.com/in', topic_filter: unique('t'), disable_after: 600 });
  expect(w.status).toBe(201);
  expect(w.body.data).toMatchObject({ failure_threshold: 20, failure_threshold_source: 'namespace', disable_after: 600, disable_after_source: 'webhook' });

  expect((await admin(['webhook-health', 'set', ns.name, 'failure_threshold', 'default'])).code).toBe(0);
  expect(JSON.parse((await admin(['webhook-health', 'get', ns.name, '--json'])).out)).toMatchObject({ thresholds: { failure_threshold: 100, disable_after: 86400 }, sources: { failure_threshold: 'default', disable_after: 'namespace' } });
  expect((await call('GET', `/webhooks/${w.body.data.name}`)).body.data).toMatchObject({ failure_threshold: 100, failure_threshold_source: 'default' });
});
