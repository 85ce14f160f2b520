import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';

let server: TestServer;
let ns: TestNamespace;
let other: TestNamespace;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('ns');
  other = await createTestNamespace('ns');
});
afterAll(() => server.close());

describe('GET /namespace', () => {
  it('describes the namespace of the key', async () => {
    const res = await client(server.baseUrl, ns.key)('GET', '/namespace');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      error: null,
      data: { name: ns.name, endpoint: expect.stringMatching(/^https?:\/\//), created_at: expect.stringMatching(/Z$/), status: 'active' },
    });
  });

  it('gives every scope read access', async () => {
    for (const key of Object.values(ns.keys)) {
      expect((await client(server.baseUrl, key)('GET', '/namespace')).body.data.name).toBe(ns.name);
    }
  });

  it.each([
    ['no header', undefined, {}],
    ['an unknown key', 'nope', {}],
    ['a Basic scheme', undefined, { authorization: 'Basic abc' }],
    ['an empty bearer', undefined, { authorization: 'Bearer ' }],
  ])('answers 401 INVALID_API_KEY for %s', async (_label, key, headers) => {
    const res = await client(server.baseUrl, key)('GET', '/namespace', undefined, headers as Record<string, string>);
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe('INVALID_API_KEY');
  });

  it('answers 404 NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist', async () => {
    const res = await client(server.baseUrl, ns.key)('GET', '/namespace', undefined, { host: 'missing-ns.localhost' });
    expect(res.status).toBe(404);
    expect(res.body.error?.code).toBe('NAMESPACE_NOT_FOUND');
  });

  it('answers 401 when the Host names another existing namespace', async () => {
    const res = await client(server.baseUrl, ns.key)('GET', '/namespace', undefined, { host: `${other.name}.localhost` });
    expect(res.status).toBe(401);
  });

  it('accepts the Host of its own namespace in any case', async () => {
    const res = await client(server.baseUrl, ns.key)('GET', '/namespace', undefined, { host: `${ns.name.toUpperCase()}.LOCALHOST:1` });
    expect(res.status).toBe(200);
  });

  it('answers 405 METHOD_NOT_ALLOWED with Allow for a known path', async () => {
    const res = await client(server.baseUrl, ns.key)('DELETE', '/namespace');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expect(res.body.error?.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('answers 404 NOT_FOUND for an unknown path', async () => {
    const res = await client(server.baseUrl, ns.key)('GET', '/nope');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, data: null, error: { code: 'NOT_FOUND', details: {} } });
  });
});
