/**
 * Applications (docs/portal.md): a platform's customers in a namespace, by the
 * uid the platform chooses. Create, list by uid, get, patch, delete (with its webhooks), the cap
 * per namespace, and webhooks that belong to one (`application`, `GET /webhooks?application=`).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { setNamespaceCap } from '../../lambda/core/storage/resource-limits';
import { markDeleting } from '../../lambda/applications/storage/applications';

jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let call: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('app');
  call = client(server.baseUrl, ns.key);
});
afterAll(() => server?.close());

const webhook = (application?: string) => ({ name: unique('wh'), url: 'http://127.0.0.1:9/hook', topic_filter: unique('t'), ...(application ? { application } : {}) });

describe('applications', () => {
  it('creates one with uid, name and metadata (201), shows it, and refuses the same uid again (409)', async () => {
    const uid = unique('cust');
    const created = await call('POST', '/applications', { uid, name: 'Acme Ltd', metadata: { plan: 'gold' } });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({ uid, name: 'Acme Ltd', metadata: { plan: 'gold' }, created_at: expect.stringMatching(/Z$/), updated_at: created.body.data.created_at });
    expect((await call('GET', `/applications/${uid}`)).body.data).toEqual(created.body.data);
    const again = await call('POST', '/applications', { uid });
    expect([again.status, again.body.error?.code]).toEqual([409, 'APPLICATION_ALREADY_EXISTS']);
  });

  it('refuses bad input with envelope errors, never a 500', async () => {
    const cases: [unknown, number, string][] = [
      [{}, 422, 'VALIDATION_ERROR'],
      [{ uid: 'no spaces allowed' }, 422, 'VALIDATION_ERROR'],
      [{ uid: 5 }, 400, 'INVALID_REQUEST'],
      [{ uid: unique('c'), metadata: { n: 1 } }, 400, 'INVALID_REQUEST'],
      [{ uid: unique('c'), metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 422, 'VALIDATION_ERROR'],
      [{ uid: unique('c'), metadata: { k: 'x'.repeat(257) } }, 422, 'VALIDATION_ERROR'],
      [[], 400, 'INVALID_REQUEST'],
    ];
    for (const [body, status, code] of cases) {
      const r = await call('POST', '/applications', body);
      expect({ body, status: r.status, code: r.body.error?.code }).toEqual({ body, status, code });
    }
    const missing = await call('GET', `/applications/${unique('nobody')}`);
    expect([missing.status, missing.body.error?.code]).toEqual([404, 'APPLICATION_NOT_FOUND']);
  });

  it('lists by uid ascending with limit, offset and total', async () => {
    const own = await createTestNamespace('apl');
    const c = client(server.baseUrl, own.key);
    for (const uid of ['c-3', 'a-1', 'b-2']) expect((await c('POST', '/applications', { uid })).status).toBe(201);
    const all = await c('GET', '/applications');
    expect(all.body.data.applications.map((a: { uid: string }) => a.uid)).toEqual(['a-1', 'b-2', 'c-3']);
    expect(all.body.data).toMatchObject({ total: 3, limit: 50, offset: 0 });
    const page = await c('GET', '/applications?limit=1&offset=1');
    expect(page.body.data.applications.map((a: { uid: string }) => a.uid)).toEqual(['b-2']);
    expect((await c('GET', '/applications?limit=0')).status).toBe(422);
  });

  it('patches name and metadata; null clears them', async () => {
    const uid = unique('cust');
    await call('POST', '/applications', { uid, name: 'Old', metadata: { a: '1' } });
    const patched = await call('PATCH', `/applications/${uid}`, { name: 'New' });
    expect(patched.body.data).toMatchObject({ uid, name: 'New', metadata: { a: '1' } });
    const cleared = await call('PATCH', `/applications/${uid}`, { name: null, metadata: null });
    expect(cleared.body.data).toMatchObject({ uid, name: null, metadata: {} });
    expect((await call('PATCH', `/applications/${unique('nobody')}`, { name: 'x' })).body.error?.code).toBe('APPLICATION_NOT_FOUND');
  });

  it('caps applications per namespace (409 LIMIT_EXCEEDED); a delete frees the slot', async () => {
    const own = await createTestNamespace('apc');
    await setNamespaceCap(own.name, 'applications', 2);
    const c = client(server.baseUrl, own.key);
    expect((await c('POST', '/applications', { uid: 'one' })).status).toBe(201);
    expect((await c('POST', '/applications', { uid: 'two' })).status).toBe(201);
    const over = await c('POST', '/applications', { uid: 'three' });
    expect([over.status, over.body.error?.code, over.body.error?.details]).toEqual([409, 'LIMIT_EXCEEDED', { limit: 2, resource: 'applications' }]);
    expect((await c('DELETE', '/applications/one')).status).toBe(200);
    expect((await c('POST', '/applications', { uid: 'three' })).status).toBe(201);
  });

  it('needs manage to write; any key reads', async () => {
    const uid = unique('cust');
    const pub = client(server.baseUrl, ns.keys.publish);
    expect((await pub('POST', '/applications', { uid })).status).toBe(403);
    expect((await call('POST', '/applications', { uid })).status).toBe(201);
    expect((await pub('GET', `/applications/${uid}`)).status).toBe(200);
    expect((await pub('DELETE', `/applications/${uid}`)).status).toBe(403);
  });
});

describe('webhooks of an application', () => {
  it('refuses a webhook for an application that does not exist (422 on application)', async () => {
    const r = await call('POST', '/webhooks', webhook(unique('nobody')));
    expect([r.status, r.body.error?.code, (r.body.error?.details.fields as { field: string }[])[0].field]).toEqual([422, 'VALIDATION_ERROR', 'application']);
  });

  it('shows the application of a webhook and lists the webhooks of one application', async () => {
    const [a, b] = [unique('a'), unique('b')];
    for (const uid of [a, b]) await call('POST', '/applications', { uid });
    const wa = (await call('POST', '/webhooks', webhook(a))).body.data;
    const wb = (await call('POST', '/webhooks', webhook(b))).body.data;
    expect(wa.application).toBe(a);
    expect((await call('GET', `/webhooks/${wb.name}`)).body.data.application).toBe(b);
    const listed = await call('GET', `/webhooks?application=${a}&limit=100`);
    expect(listed.body.data.webhooks.map((w: { name: string }) => w.name)).toEqual([wa.name]);
    expect(listed.body.data.total).toBe(1);
    expect((await call('GET', '/webhooks?application=bad%20uid')).status).toBe(422);
    // PATCH can move it to another existing application, not to a missing one.
    expect((await call('PATCH', `/webhooks/${wa.name}`, { application: b })).body.data.application).toBe(b);
    expect((await call('PATCH', `/webhooks/${wa.name}`, { application: unique('nobody') })).status).toBe(422);
    expect((await call('PATCH', `/webhooks/${wa.name}`, { application: null })).body.data.application).toBeNull();
  });

  it('takes no new webhook once its delete has begun (checked in the webhook write itself), so none is left behind', async () => {
    const uid = unique('race');
    await call('POST', '/applications', { uid });
    const before = (await call('POST', '/webhooks', webhook(uid))).body.data.name;
    // The delete's first step, as a DELETE cut short after it would leave the application.
    await markDeleting(ns.name, uid, Date.now());
    const late = await call('POST', '/webhooks', webhook(uid));
    expect([late.status, late.body.error?.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect((await call('PATCH', `/webhooks/${before}`, { retry_count: 1 })).status).toBe(422);
    expect((await call('GET', `/applications/${uid}`)).status).toBe(404);
    // A DELETE retried finishes it.
    const del = await call('DELETE', `/applications/${uid}`);
    expect(del.body.data.webhooks_deleted).toBe(1);
    expect((await call('GET', `/webhooks?application=${uid}`)).body.data.total).toBe(0);
  });

  it('deleting an application deletes its webhooks, and only its', async () => {
    const [a, b] = [unique('a'), unique('b')];
    for (const uid of [a, b]) await call('POST', '/applications', { uid });
    const mine = [(await call('POST', '/webhooks', webhook(a))).body.data.name, (await call('POST', '/webhooks', webhook(a))).body.data.name];
    const other = (await call('POST', '/webhooks', webhook(b))).body.data.name;
    const none = (await call('POST', '/webhooks', webhook())).body.data.name;
    const del = await call('DELETE', `/applications/${a}`);
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ deleted_at: expect.stringMatching(/Z$/), webhooks_deleted: 2 });
    for (const name of mine) expect((await call('GET', `/webhooks/${name}`)).status).toBe(404);
    for (const name of [other, none]) expect((await call('GET', `/webhooks/${name}`)).status).toBe(200);
    expect((await call('GET', `/applications/${a}`)).status).toBe(404);
    expect((await call('DELETE', `/applications/${a}`)).status).toBe(404);
    // The uid is free again, and a new webhook for it needs it to exist again.
    expect((await call('POST', '/webhooks', webhook(a))).status).toBe(422);
    expect((await call('POST', '/applications', { uid: a })).status).toBe(201);
  });
});
