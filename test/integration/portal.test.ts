/**
 * Portal access (docs/portal.md): a single-use link, valid 10 minutes, opens a
 * session scoped to one application for `session_days`; revoking ends every link and session of
 * the application; so do deleting the application and revoking the API key that made the link.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { findActivePortalCredential, putLink } from '../../lambda/applications/storage/portal';
import { listApiKeys, revokeApiKey } from '../../lambda/namespaces/storage/api-keys';
import { hashApiKey } from '../../lambda/core/rules/auth';
import { applySeed } from '../../local/seed';
import { setPortalOrigins } from '../../lambda/namespaces/storage/namespaces';
import { handler as authorizer } from '../../lambda/handlers/authorizer';
import { consoleBuilt } from '../../local/console-static';
import { run } from '../../bin/admin';

jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let call: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('prt');
  call = client(server.baseUrl, ns.key);
});
afterAll(() => server?.close());

const tokenOf = (url: string) => decodeURIComponent(new URL(url).hash.replace(/^#token=/, ''));

async function application() {
  const uid = unique('cust');
  expect((await call('POST', '/applications', { uid, name: 'Customer' })).status).toBe(201);
  return uid;
}

async function link(uid: string, body: unknown = {}, by = call) {
  const r = await by('POST', `/applications/${uid}/portal-access`, body);
  expect(r.status).toBe(201);
  return r.body.data as { url: string; expires_at: string; session_expires_after_days: number };
}

const signIn = (token: string) => client(server.baseUrl, token)('POST', '/portal/session');

describe('portal links', () => {
  it('answers a URL of the portal page with the token in its fragment, valid for 10 minutes, and 7 days of session by default', async () => {
    const uid = await application();
    const before = Date.now();
    const access = await link(uid);
    expect(new URL(access.url).pathname).toBe('/portal/');
    expect(new URL(access.url).searchParams.get('ns')).toBe(ns.name);
    expect(tokenOf(access.url)).toMatch(/^plink\.[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(access.expires_at) - before).toBeGreaterThanOrEqual(10 * 60_000 - 1000);
    expect(Date.parse(access.expires_at) - before).toBeLessThanOrEqual(10 * 60_000 + 5000);
    expect(access.session_expires_after_days).toBe(7);
  });

  it("points at the origin CloudFront names (x-portal-origin, the console's distribution), and ignores a header that is no origin", async () => {
    const uid = await application();
    const at = async (header: string) => (await call('POST', `/applications/${uid}/portal-access`, {}, { 'x-portal-origin': header })).body.data.url as string;
    expect(new URL(await at('https://d111111abcdef8.cloudfront.net')).origin).toBe('https://d111111abcdef8.cloudfront.net');
    expect(new URL(await at('https://evil.example/path')).origin).toBe(new URL(server.baseUrl).origin);
    expect(new URL(await at('javascript:alert(1)')).origin).toBe(new URL(server.baseUrl).origin);
  });

  it('refuses session_days outside 1..30 (422), a missing application (404) and keys without manage (403)', async () => {
    const uid = await application();
    for (const days of [0, 31]) expect((await call('POST', `/applications/${uid}/portal-access`, { session_days: days })).status).toBe(422);
    expect((await call('POST', `/applications/${uid}/portal-access`, { session_days: '7' })).status).toBe(400);
    const missing = await call('POST', `/applications/${unique('nobody')}/portal-access`, {});
    expect([missing.status, missing.body.error?.code]).toEqual([404, 'APPLICATION_NOT_FOUND']);
    expect((await client(server.baseUrl, ns.keys.publish)('POST', `/applications/${uid}/portal-access`, {})).status).toBe(403);
  });

  it('signs in once: the first use answers a session for the application and its days, a second use 401', async () => {
    const uid = await application();
    const token = tokenOf((await link(uid, { session_days: 2 })).url);
    const before = Date.now();
    const first = await signIn(token);
    expect(first.status).toBe(201);
    expect(first.body.data).toEqual({ session_token: expect.stringMatching(/^psess\./), expires_at: expect.any(String), namespace: ns.name, application: { uid, name: 'Customer' } });
    const days = (Date.parse(first.body.data.expires_at) - before) / 86_400_000;
    expect(days).toBeGreaterThan(1.99);
    expect(days).toBeLessThan(2.01);
    const second = await signIn(token);
    expect([second.status, second.body.error?.code]).toEqual([401, 'INVALID_API_KEY']);
    const me = await client(server.baseUrl, first.body.data.session_token)('GET', '/portal/session');
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ namespace: ns.name, application: { uid, name: 'Customer' }, expires_at: first.body.data.expires_at });
  });

  it('lets exactly one of concurrent uses of a link open a session', async () => {
    const uid = await application();
    const token = tokenOf((await link(uid)).url);
    const all = await Promise.all(Array.from({ length: 6 }, () => signIn(token)));
    expect(all.map((r) => r.status).sort()).toEqual([201, 401, 401, 401, 401, 401]);
  });

  it('refuses a link past its 10 minutes and a session past its days', async () => {
    const uid = await application();
    const keys = await listApiKeys(ns.name);
    const usage = keys.find((k) => k.scopes.includes('*'))!.hash;
    const now = Date.now();
    const stale = `plink.${unique('stale').padEnd(43, 'x')}`;
    await putLink(stale, { namespace: ns.name, application: uid, generation: 0, usage_key: usage, session_days: 7, created_at: now - 11 * 60_000, expires_at: now - 60_000 });
    expect((await signIn(stale)).status).toBe(401);
    const session = (await signIn(tokenOf((await link(uid, { session_days: 1 })).url))).body.data.session_token as string;
    expect(await findActivePortalCredential(session, Date.now())).toBeDefined();
    expect(await findActivePortalCredential(session, Date.now() + 86_400_000 + 60_000)).toBeUndefined();
  });

  it("is metered under the usage key of the API key that made the link, with the whole stage allowed (API Gateway caches the answer for every route)", async () => {
    const uid = await application();
    const session = (await signIn(tokenOf((await link(uid)).url))).body.data.session_token as string;
    const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/api/GET/v1/webhooks';
    const answer = await authorizer({ type: 'REQUEST', methodArn, headers: { Authorization: `Bearer ${session}` } } as never);
    expect(answer.usageIdentifierKey).toBe(hashApiKey(ns.key));
    expect(answer.context).toMatchObject({ namespace: ns.name, portal: 'session', application: uid, scopes: 'manage,consume' });
    expect(answer.policyDocument.Statement).toEqual([{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/api/*' }]);
    await expect(authorizer({ type: 'REQUEST', methodArn, headers: { Authorization: 'Bearer psess.unknown' } } as never)).rejects.toThrow('Unauthorized');
  });

  it('stores only hashes of links and sessions', async () => {
    const uid = await application();
    const token = tokenOf((await link(uid)).url);
    const session = (await signIn(token)).body.data.session_token as string;
    const { ddb, tableName } = await import('../../lambda/core/storage/client');
    const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
    // Every page of the scan: a Scan filters after reading 1 MB, so on a table other files share
    // the items can sit on any page (the first page alone answered [] in a CI run).
    const items: unknown[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await ddb().send(new ScanCommand({ TableName: tableName('meta'), FilterExpression: 'application = :u', ExpressionAttributeValues: { ':u': uid }, ExclusiveStartKey: start, ConsistentRead: true }));
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    const text = JSON.stringify(items);
    expect(text).toContain(hashApiKey(session));
    expect(text).not.toContain(token);
    expect(text).not.toContain(session);
  });

  it('is refused to an API key (403), and a portal credential is refused everywhere else it is not allowed', async () => {
    const r = await call('POST', '/portal/session');
    expect([r.status, r.body.error?.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    expect((await call('GET', '/portal/session')).status).toBe(403);
    const uid = await application();
    const token = tokenOf((await link(uid)).url);
    // An unused link may only be exchanged: it reads nothing, and the refusal does not use it up.
    expect((await client(server.baseUrl, token)('GET', '/webhooks')).status).toBe(403);
    expect((await signIn(token)).status).toBe(201);
  });
});

describe('the portal page', () => {
  const page = async (query: string) => {
    const r = await fetch(`${new URL(server.baseUrl).origin}/portal/${query}`);
    await r.arrayBuffer();
    return { csp: r.headers.get('content-security-policy') ?? '', xfo: r.headers.get('x-frame-options') };
  };

  it("cannot be framed by default, and can by the origins its namespace allows (CSP frame-ancestors), which may serve its logo", async () => {
    const none = await page(`?ns=${ns.name}`);
    expect(none.csp).toContain("frame-ancestors 'none'");
    expect(none.xfo).toBe('DENY');
    const own = await createTestNamespace('prf');
    await setPortalOrigins(own.name, ['https://app.platform.example', 'https://www.platform.example']);
    const allowed = await page(`?ns=${own.name}`);
    expect(allowed.csp).toContain('frame-ancestors https://app.platform.example https://www.platform.example');
    expect(allowed.csp).toContain("img-src 'self' https://app.platform.example https://www.platform.example");
    expect(allowed.csp).toContain("script-src 'self'");
    expect(allowed.xfo).toBeNull();
    // Another namespace's page keeps its own (none), whatever the query says besides.
    expect((await page(`?ns=${ns.name}&frame=https://app.platform.example`)).csp).toContain("frame-ancestors 'none'");
    expect((await page('?ns=NOT%20A%20NAMESPACE')).csp).toContain("frame-ancestors 'none'");
  });

  it("is the API's own page without a key (what CloudFront's /portal/ forwards to in AWS), with the same per-namespace headers", async () => {
    const own = await createTestNamespace('prg');
    await setPortalOrigins(own.name, ['https://app.platform.example']);
    const at = (query: string, init?: RequestInit) => fetch(`${server.baseUrl}/portal-page${query}`, init);
    const framed = await at(`?ns=${own.name}&brand=%23c2410c`);
    const html = await framed.text();
    expect(framed.headers.get('content-security-policy')).toContain('frame-ancestors https://app.platform.example');
    expect(framed.headers.get('x-frame-options')).toBeNull();
    expect(framed.headers.get('x-content-type-options')).toBe('nosniff');
    if (consoleBuilt()) expect([framed.status, framed.headers.get('content-type'), html]).toEqual([200, 'text/html; charset=utf-8', expect.stringContaining('<div id="app">')]);
    else expect(framed.status).toBe(503);
    const closed = await at(`?ns=${ns.name}`);
    await closed.arrayBuffer();
    expect([closed.headers.get('content-security-policy'), closed.headers.get('x-frame-options')]).toEqual([expect.stringContaining("frame-ancestors 'none'"), 'DENY']);
    // The same bytes as /portal/ on the gateway's origin.
    const portal = await fetch(`${new URL(server.baseUrl).origin}/portal/?ns=${own.name}`);
    expect(await portal.text()).toBe(html);
    expect((await at(`?ns=${own.name}`, { method: 'POST' })).status).toBe(405);
  });

  it('carries the theme an operator stores for the namespace (admin portal-theme), and none once it is removed', async () => {
    const own = await createTestNamespace('prt');
    const admin = async (...args: string[]) => {
      const out: string[] = [];
      const code = await run([...args, '--json'], { out: (l) => out.push(l), err: () => undefined, env: process.env });
      return { code, json: out.length ? JSON.parse(out.join('\n')) : undefined };
    };
    const themed = { brand: '#c2410c', logo: 'https://app.platform.example/logo.svg' };
    expect(await admin('portal-theme', 'set', own.name, themed.brand, themed.logo)).toEqual({ code: 0, json: { namespace: own.name, portal_theme: themed } });
    expect((await admin('portal-theme', 'get', own.name)).json.portal_theme).toEqual(themed);
    expect((await admin('portal-theme', 'set', own.name, 'red', 'none')).code).toBe(2);
    const meta = async () => {
      const html = await (await fetch(`${new URL(server.baseUrl).origin}/portal/?ns=${own.name}`)).text();
      const m = /<meta name="portal-theme" content="([^"]*)">/.exec(html);
      return m ? JSON.parse(m[1].replace(/&quot;/g, '"').replace(/&amp;/g, '&')) : undefined;
    };
    if (!consoleBuilt()) return expect(await meta()).toBeUndefined(); // 503 without a build: no page to theme
    expect(await meta()).toEqual(themed);
    expect((await admin('portal-theme', 'set', own.name, 'none', 'none')).json.portal_theme).toBeNull();
    expect(await meta()).toBeUndefined();
  });
});

describe('ending sessions', () => {
  const sessionFor = async (uid: string, by = call) => client(server.baseUrl, (await signIn(tokenOf((await link(uid, {}, by)).url))).body.data.session_token);

  it('DELETE portal-access ends every session and unused link of the application at once, and only its', async () => {
    const [a, b] = [await application(), await application()];
    const [s1, s2, other] = [await sessionFor(a), await sessionFor(a), await sessionFor(b)];
    const unused = tokenOf((await link(a)).url);
    for (const s of [s1, s2, other]) expect((await s('GET', '/webhooks')).status).toBe(200);
    const revoked = await call('DELETE', `/applications/${a}/portal-access`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toEqual({ revoked_at: expect.stringMatching(/Z$/) });
    for (const s of [s1, s2]) expect((await s('GET', '/webhooks')).status).toBe(401);
    expect((await signIn(unused)).status).toBe(401);
    expect((await other('GET', '/webhooks')).status).toBe(200);
    // New links work again after a revoke.
    expect((await (await sessionFor(a))('GET', '/webhooks')).status).toBe(200);
    expect((await call('DELETE', `/applications/${unique('nobody')}/portal-access`)).status).toBe(404);
  });

  it('deleting the application ends its sessions', async () => {
    const uid = await application();
    const s = await sessionFor(uid);
    expect((await call('DELETE', `/applications/${uid}`)).status).toBe(200);
    expect((await s('GET', '/webhooks')).status).toBe(401);
  });

  it('a revoked session, or an unused link, stays ended after its application is deleted and created again under the same uid', async () => {
    const uid = await application();
    const s = await sessionFor(uid);
    const unused = tokenOf((await link(uid)).url);
    expect((await s('GET', '/webhooks')).status).toBe(200);
    expect((await call('DELETE', `/applications/${uid}/portal-access`)).status).toBe(200);
    expect((await s('GET', '/webhooks')).status).toBe(401);
    expect((await call('DELETE', `/applications/${uid}`)).status).toBe(200);
    // The platform gives the uid to an application again (the same customer back, or a reused id).
    expect((await call('POST', '/applications', { uid })).status).toBe(201);
    expect((await s('GET', '/portal/session')).status).toBe(401);
    expect((await s('POST', '/webhooks', { name: unique('wh'), url: 'http://127.0.0.1:9/hook', topic_filter: '#' })).status).toBe(401);
    expect((await signIn(unused)).status).toBe(401);
    // Unrevoked ones of the earlier application too: deleting it ended them for good.
    const kept = await sessionFor(uid);
    const keptLink = tokenOf((await link(uid)).url);
    expect((await call('DELETE', `/applications/${uid}`)).status).toBe(200);
    expect((await call('POST', '/applications', { uid })).status).toBe(201);
    expect((await kept('GET', '/webhooks')).status).toBe(401);
    expect((await signIn(keptLink)).status).toBe(401);
    // The new application's own links work.
    expect((await (await sessionFor(uid))('GET', '/webhooks')).status).toBe(200);
  });

  it('revoking the API key that made the link ends the sessions it opened', async () => {
    const uid = await application();
    const key = `${ns.name}-tmp-${unique('k')}`;
    await applySeed({ namespaces: [{ name: ns.name, keys: [{ key, scopes: ['manage', 'consume'] }] }] });
    const s = await sessionFor(uid, client(server.baseUrl, key));
    expect((await s('GET', '/webhooks')).status).toBe(200);
    const rec = (await listApiKeys(ns.name)).find((k) => k.hash === hashApiKey(key))!;
    await revokeApiKey(ns.name, rec.key_id, Date.now());
    expect((await s('GET', '/webhooks')).status).toBe(401);
  });
});
