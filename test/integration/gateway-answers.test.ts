/**
 * Answers the gateway layer gives before a handler runs: bodies too large for a Lambda invoke
 * (docs/aws-parity.md), and the rate-limit headers on every answer DESIGN.md does not exempt
 * (docs/rate-limits.md: 405, the gateway's 413, the Host rule's 404), through the real local
 * gateway on DynamoDB Local.
 */
import { client, startTestServer, type TestResponse, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { request } from 'node:http';
import { sleep } from '../../lambda/core/rules/clock';
import { GATEWAY_ANSWERS, SIZE_GUARD_REFUSED_BYTES } from '../../lambda/core/rules/gateway-responses';

jest.setTimeout(30_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** 7 MB: above what a Lambda invoke carries (6 MB), below API Gateway's 10 MB. */
const sevenMb = () => 'x'.repeat(7 * 1024 * 1024);

const rateHeaders = (res: TestResponse) => ({
  limit: res.headers['x-ratelimit-limit'],
  remaining: res.headers['x-ratelimit-remaining'],
  reset: res.headers['x-ratelimit-reset'],
});

/** Waits for the next minute when this one is nearly over, so the requests share a window. */
async function roomInWindow(seconds = 5) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await sleep(left + 50);
}

describe('bodies larger than a Lambda invoke carries', () => {
  it('answer 413 MESSAGE_TOO_LARGE in the envelope and store nothing', async () => {
    const ns = await createTestNamespace('gwa');
    const name = unique('q');
    const res = await client(server.baseUrl, ns.key)('POST', '/queues', { name, topic_filter: 'a/#', padding: sevenMb() });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ success: false, data: null, error: { code: 'MESSAGE_TOO_LARGE', message: expect.any(String), details: expect.any(Object) } });
    expect((await client(server.baseUrl, ns.key)('GET', `/queues/${name}`)).status).toBe(404);
  });

  it('still reach the handler just under the size guard (a 2,999,999-byte body is the handler’s to judge)', async () => {
    const ns = await createTestNamespace('gwa');
    const body = { name: unique('q'), topic_filter: 'a/#', padding: '' };
    body.padding = 'x'.repeat(SIZE_GUARD_REFUSED_BYTES - 1 - Buffer.byteLength(JSON.stringify(body)));
    expect(Buffer.byteLength(JSON.stringify(body))).toBe(SIZE_GUARD_REFUSED_BYTES - 1);
    const res = await client(server.baseUrl, ns.key)('POST', '/queues', body);
    expect(res.status).toBe(201);
  });

  it('are refused by the size guard from 3,000,000 bytes of Content-Length, before routing and the authorizer, like the stack’s WAF rule', async () => {
    const ns = await createTestNamespace('gwa');
    const body = { name: unique('q'), topic_filter: 'a/#', padding: '' };
    body.padding = 'x'.repeat(SIZE_GUARD_REFUSED_BYTES - Buffer.byteLength(JSON.stringify(body)));
    const answers = [
      await client(server.baseUrl, ns.key)('POST', '/queues', body),
      await client(server.baseUrl, 'no-such-key')('POST', '/queues', body),
      await client(server.baseUrl, ns.key)('POST', '/no/such/path', body),
    ];
    for (const res of answers) {
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ success: false, data: null, error: { code: 'MESSAGE_TOO_LARGE', message: GATEWAY_ANSWERS.sizeGuard.message, details: {} } });
      expect(res.headers['content-type']).toBe('application/json');
    }
    expect((await client(server.baseUrl, ns.key)('GET', `/queues/${body.name}`)).status).toBe(404);
  });

  it('without Content-Length (chunked) pass the guard and, above the invoke limit, get the 500 of a failed Lambda invoke', async () => {
    const ns = await createTestNamespace('gwa');
    const name = unique('q');
    const payload = JSON.stringify({ name, topic_filter: 'a/#', padding: sevenMb() });
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = request(`${server.baseUrl}/queues`, { method: 'POST', headers: { authorization: `Bearer ${ns.key}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      });
      req.on('error', reject);
      for (let i = 0; i < payload.length; i += 1024 * 1024) req.write(payload.slice(i, i + 1024 * 1024));
      req.end();
    });
    expect(res).toEqual({ status: 500, body: { success: false, data: null, error: { code: 'INTERNAL_ERROR', message: expect.any(String), details: {} } } });
    expect((await client(server.baseUrl, ns.key)('GET', `/queues/${name}`)).status).toBe(404);
  });
});

describe('rate-limit headers on gateway answers', () => {
  it('are on a 405, a gateway 413 and a Host-rule 404 of a valid key, none of them counted', async () => {
    const ns = await createTestNamespace('gwa', { management: 5 });
    await roomInWindow();
    const call = client(server.baseUrl, ns.key);
    const answers = [
      await call('DELETE', '/namespace'),
      await call('POST', '/queues', { name: unique('q'), topic_filter: 'a/#', padding: sevenMb() }),
      await call('GET', '/namespace', undefined, { host: 'no-such-namespace.localhost' }),
    ];
    expect(answers.map((a) => [a.status, a.body.error?.code])).toEqual([[405, 'METHOD_NOT_ALLOWED'], [413, 'MESSAGE_TOO_LARGE'], [404, 'NAMESPACE_NOT_FOUND']]);
    const reset = String(Math.floor(Date.now() / 60_000) * 60 + 60);
    expect(rateHeaders(answers[0])).toEqual({ limit: '5', remaining: '5', reset });
    expect(rateHeaders(answers[2])).toEqual({ limit: '5', remaining: '5', reset });
    // The size guard's 413 comes from WAF, before the authorizer has named a namespace: no headers.
    expect(rateHeaders(answers[1])).toEqual({ limit: undefined, remaining: undefined, reset: undefined });
    expect(rateHeaders(await call('GET', '/namespace')).remaining).toBe('4');
  });

  it('use the category of the path a 405 names', async () => {
    const ns = await createTestNamespace('gwa', { publish: 7 });
    const res = await client(server.baseUrl, ns.key)('GET', '/topics/a/b/messages');
    expect(res.status).toBe(405);
    expect(rateHeaders(res).limit).toBe('7');
  });

  it('are not on a 405 or 413 without a valid key (the size guard answers a 7 MB body before the authorizer: 413)', async () => {
    const anon = client(server.baseUrl, 'no-such-key');
    const answers = [await anon('DELETE', '/namespace'), await anon('POST', '/queues', { padding: sevenMb() }), await anon('POST', '/queues', { padding: 'x'.repeat(11 * 1024 * 1024) })];
    expect(answers.map((a) => a.status)).toEqual([405, 413, 413]);
    for (const res of answers) expect(Object.keys(res.headers).filter((k) => k.startsWith('x-ratelimit'))).toEqual([]);
  });
});

describe('dot segments in the path', () => {
  /** Sends `path` as it is (clients like fetch and curl resolve `..` before sending; raw clients do not). */
  const raw = (path: string, key: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const base = new URL(server.baseUrl);
      const req = request({ host: base.hostname, port: base.port, path, method: 'GET', headers: { authorization: `Bearer ${key}` } }, (r) => {
        let body = '';
        r.on('data', (c) => (body += c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it.each([
    ['..', '/queues/x/../../webhooks'],
    ['%2e%2e', '/queues/x/%2e%2e/%2e%2e/webhooks'],
    ['%2E%2E', '/queues/x/%2E%2E/%2E%2E/webhooks'],
    ['.', '/./webhooks'],
    // Absolute-form request target (RFC 9112 section 3.2.2): the path part is taken as sent too.
    ['absolute-form %2e%2e', 'ABSOLUTE/queues/x/%2e%2e/%2e%2e/webhooks'],
  ])('are not resolved (%s): the path is matched as sent, as API Gateway matches it', async (_what, rel) => {
    const ns = await createTestNamespace('gwd');
    const listed = await raw(`${new URL(server.baseUrl).pathname}/webhooks`, ns.key);
    expect(listed.status).toBe(200);
    const base = new URL(server.baseUrl);
    const res = await raw(rel.startsWith('ABSOLUTE') ? `${base.origin}${base.pathname}${rel.slice('ABSOLUTE'.length)}` : `${base.pathname}${rel}`, ns.key);
    expect({ rel, status: res.status }).not.toEqual({ rel, status: 200 });
    expect(res.body).not.toBe(listed.body);
  });
});
