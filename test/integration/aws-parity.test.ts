/**
 * The local gateway is no kinder than API Gateway and Lambda (docs/aws-parity.md):
 * encoded path parameters reach the handlers as API Gateway hands them and are decoded once; a
 * handler that crashes, answers above Lambda's response limit or runs past 29 s gets API
 * Gateway's 502 / 504; an authorizer that cannot read its key answers 503 with Retry-After; a
 * wrong method answers 405 whatever the body's content type.
 */
import { request } from 'node:http';
import type { Server } from 'node:net';
import { createGateway, loadHandlers, type HandlerModules } from '../../local/gateway';
import { registerClientPlugin } from '../../lambda/core/client-plugins';
import { hashApiKey } from '../../lambda/core/rules/auth';
import { INTEGRATION_TIMEOUT_SECONDS, LAMBDA_RESPONSE_LIMIT_BYTES, MAX_LONG_POLL_SECONDS } from '../../lambda/core/rules/gateway-responses';
import { loadConfig } from '../../lambda/core/config';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { scaled } from '../fixtures/time-scale';

jest.setTimeout(60_000);

/** A key whose lookup the table throttles (the authorizer cannot read it). */
const POISON_KEY = `poison-${Date.now()}`;
const poisonHash = hashApiKey(POISON_KEY);
registerClientPlugin('dynamodb', {
  applyToStack: (stack: any) =>
    stack.add(
      (next: any) => async (args: any) => {
        if (JSON.stringify(args.input?.Key ?? {}).includes(poisonHash)) {
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException', $fault: 'client', $metadata: { httpStatusCode: 400 } });
        }
        return next(args);
      },
      { step: 'initialize', name: 'poisonKeyThrottle' },
    ),
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Sends a raw request (any content type, any body) and returns status, headers and text. */
function raw(baseUrl: string, method: string, path: string, body: string | undefined, headers: Record<string, string>) {
  const url = new URL(baseUrl + path);
  return new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('encoded path parameters through the local gateway', () => {
  /** [topic as the queue's filter names it, the same topic as sent in the path] */
  const cases: [string, string, string][] = [
    ['a space', 'eu west/orders', 'eu%20west/orders'],
    ['a colon', 'a:b/c', 'a%3Ab/c'],
    ['a colon sent as is', 'a:b/d', 'a:b/d'],
    ['a percent sign', 'rate/100%', 'rate/100%25'],
    ['a literal %20', 'lit/%20', 'lit/%2520'],
    ['non-ASCII', 'café/日本', 'caf%C3%A9/%E6%97%A5%E6%9C%AC'],
    ['an encoded slash', 'x/y/z', 'x%2Fy/z'],
  ];
  it.each(cases)('a topic with %s (%s) is routed as sent, decoded once', async (_what, topic, sent) => {
    const ns = await createTestNamespace('enc');
    const api = client(server.baseUrl, ns.key);
    const queue = unique('q');
    expect((await api('POST', '/queues', { name: queue, topic_filter: topic })).status).toBe(201);
    const pub = await api('POST', `/topics/${sent}/messages`, { payload: 'hello' });
    expect(pub.status).toBe(201);
    let got: any[] = [];
    for (let i = 0; i < 10 && got.length === 0; i++) {
      const res = await api('POST', `/queues/${queue}/messages/consume`, { max_messages: 10, timeout_seconds: 3 });
      expect(res.status).toBe(200);
      got = res.body.data.messages;
    }
    expect(got.map((m) => m.payload)).toEqual(['hello']);
  });

  it('a `+` in the path is a literal plus (a wildcard, so no topic name): 422, not a space', async () => {
    const ns = await createTestNamespace('enc');
    const res = await client(server.baseUrl, ns.key)('POST', '/topics/a+b/messages', { payload: 'x' });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.error)).toMatch(/topic/);
  });

  it('an encoded `/messages` is part of the topic, not the route; a bad escape is 400', async () => {
    const ns = await createTestNamespace('enc');
    const api = client(server.baseUrl, ns.key);
    expect((await api('POST', '/topics/a%2Fmessages', { payload: 'x' })).status).toBe(404);
    const bad = await api('POST', '/queues/%E0%A4%A/messages/consume', {});
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'queue_name' } });
  });
});

describe('wrong methods answer 405 whatever the body', () => {
  it.each([
    ['text/plain', 'hello'],
    ['application/x-www-form-urlencoded', 'a=1&b=2'],
    ['application/octet-stream', '\u0000\u0001binary'],
    ['application/json', '{not json'],
    ['text/plain; charset=utf-8', 'with parameters'],
    ['multipart/form-data; boundary=x', '--x\r\n'],
    ['', 'no content type'],
  ])('%s', async (type, body) => {
    const res = await raw(server.baseUrl, 'PUT', '/queues', body, type ? { 'content-type': type } : {});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST, GET');
    expect(JSON.parse(res.text).error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('a body of a type the stack’s mock has no template for is API Gateway’s 415, in the envelope', async () => {
    const res = await raw(server.baseUrl, 'PUT', '/queues', 'x', { 'content-type': 'image/png' });
    expect(res.status).toBe(415);
    expect(JSON.parse(res.text)).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST' } });
  });
});

describe('the authorizer cannot read the key', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After, in the envelope', async () => {
    const res = await client(server.baseUrl, POISON_KEY)('GET', '/namespace');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toMatchObject({ success: false, data: null, error: { code: 'SERVICE_UNAVAILABLE' } });
  });
});

describe('integration failures as API Gateway answers them', () => {
  let gw: Server;
  let base: string;
  let slowMs = 0;
  beforeAll(async () => {
    const real = await loadHandlers();
    const handlers: HandlerModules = {
      ...real,
      // GET /namespace: slow; GET /queues: crash; GET /streams: an answer above Lambda's limit.
      namespace: async () => {
        await new Promise((r) => setTimeout(r, slowMs));
        return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"success":true,"data":{},"error":null}' };
      },
      queues: async () => {
        throw new Error('boom');
      },
      streams: async () => ({ statusCode: 200, headers: {}, body: 'x'.repeat(LAMBDA_RESPONSE_LIMIT_BYTES) }),
      subscriptions: async () => ({ statusCode: 200, headers: {}, body: 'x'.repeat(LAMBDA_RESPONSE_LIMIT_BYTES - 200) }),
    };
    gw = createGateway({ handlers, integrationTimeoutMs: 1_000 });
    await new Promise<void>((r) => gw.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(gw.address() as { port: number }).port}/api/v1`;
  });
  afterAll(() => new Promise<void>((r) => gw.close(() => r())));

  it('cuts a handler still running at the integration timeout: 504 INTEGRATION_TIMEOUT', async () => {
    const ns = await createTestNamespace('gwf');
    // A handler 3 s slow (at the suite's time scale): cut at the 1 s timeout, answered before its end.
    slowMs = scaled(3_000);
    const started = Date.now();
    const res = await client(base, ns.key)('GET', '/namespace');
    expect(res.status).toBe(504);
    expect(res.body.error?.code).toBe('INTEGRATION_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(slowMs - 100);
    slowMs = 0;
    expect((await client(base, ns.key)('GET', '/namespace')).status).toBe(200);
  });

  it('answers a crashed handler 502 in the envelope', async () => {
    const ns = await createTestNamespace('gwf');
    const res = await client(base, ns.key)('GET', '/queues');
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ success: false, error: { code: 'INTERNAL_ERROR' } });
  });

  it('answers 502 above Lambda’s response limit, and passes an answer just under it', async () => {
    const ns = await createTestNamespace('gwf');
    expect((await client(base, ns.key)('GET', '/streams')).status).toBe(502);
    const under = await raw(base, 'GET', '/subscriptions', undefined, { authorization: `Bearer ${ns.key}` });
    expect(under.status).toBe(200);
    expect(under.text.length).toBe(LAMBDA_RESPONSE_LIMIT_BYTES - 200);
  });

  it('defaults: 29 s integration timeout, long polls capped at 25 s locally as in the stack', () => {
    expect(INTEGRATION_TIMEOUT_SECONDS).toBe(29);
    expect(MAX_LONG_POLL_SECONDS).toBe(25);
    expect(loadConfig({}).maxLongPollSeconds).toBe(MAX_LONG_POLL_SECONDS);
  });
});
