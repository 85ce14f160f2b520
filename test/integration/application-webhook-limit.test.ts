/**
 * The per-application cap on webhooks (`webhooks-per-application`, docs/portal.md): one
 * application's portal session, or a key creating webhooks that name it, cannot take the whole
 * namespace's webhook cap (nor the bindings of `#`) from the platform and the other applications.
 * Counted in the webhook's own create, update and delete transactions; an application's delete
 * counts its webhooks out.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique, type Call } from '../fixtures/queues';
import { admin } from '../fixtures/admin';

jest.setTimeout(120_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A portal session of application `uid`, through a link as the portal page gets one. */
async function sessionOf(uid: string, issuer: Call): Promise<Call> {
  const access = await issuer('POST', `/applications/${uid}/portal-access`, {});
  expect(access.status).toBe(201);
  const link = decodeURIComponent(new URL(access.body.data.url).hash.replace(/^#token=/, ''));
  const exchanged = await client(server.baseUrl, link)('POST', '/portal/session');
  expect(exchanged.status).toBe(201);
  return client(server.baseUrl, exchanged.body.data.session_token);
}

const hook = (topic_filter = '#', application?: string) => ({ name: unique('wh'), url: 'http://127.0.0.1:9/hook', topic_filter, ...(application ? { application } : {}) });

async function capped(limits: Record<string, number>) {
  const ns = await createTestNamespace('appcap');
  for (const [what, n] of Object.entries(limits)) expect((await admin(['resource-limit', 'set', ns.name, what, String(n)])).code).toBe(0);
  return client(server.baseUrl, ns.key);
}

it("one application's session cannot take the whole namespace's webhook cap from the others", async () => {
  const platform = await capped({ webhooks: 4, 'webhooks-per-application': 2 });
  const [a, b] = [unique('cust-a'), unique('cust-b')];
  for (const uid of [a, b]) expect((await platform('POST', '/applications', { uid })).status).toBe(201);
  const sessionA = await sessionOf(a, platform);
  const sessionB = await sessionOf(b, platform);
  let made = 0;
  while (made < 10 && (await sessionA('POST', '/webhooks', hook('#'))).status === 201) made += 1;
  expect(made).toBe(2);
  const over = await sessionA('POST', '/webhooks', hook('#'));
  expect([over.status, over.body.error?.code, over.body.error?.details]).toEqual([409, 'LIMIT_EXCEEDED', { limit: 2, resource: 'webhooks-per-application', application: a }]);
  expect(over.body.error?.message).toContain('resource-limit set <namespace> webhooks-per-application');
  expect((await sessionB('POST', '/webhooks', hook('#'))).status).toBe(201);
  expect((await platform('POST', '/webhooks', hook('#'))).status).toBe(201);
});

it('counts webhooks a key creates for an application, frees a slot on delete, on a move to another application, and when the application goes', async () => {
  const platform = await capped({ 'webhooks-per-application': 1 });
  const [a, b] = [unique('cust-a'), unique('cust-b')];
  for (const uid of [a, b]) expect((await platform('POST', '/applications', { uid })).status).toBe(201);
  const first = hook('x/#', a);
  expect((await platform('POST', '/webhooks', first)).status).toBe(201);
  expect((await platform('POST', '/webhooks', hook('y/#', a))).status).toBe(409);
  // A webhook that names no application is not counted against any.
  const loose = hook('z/#');
  expect((await platform('POST', '/webhooks', loose)).status).toBe(201);
  // Giving it an application at the cap is refused, and changes nothing.
  const moveIn = await platform('PATCH', `/webhooks/${loose.name}`, { application: a });
  expect([moveIn.status, moveIn.body.error?.details?.resource]).toEqual([409, 'webhooks-per-application']);
  expect((await platform('GET', `/webhooks/${loose.name}`)).body.data.application ?? null).toBeNull();
  // Moving the first to b counts it out of a and into b.
  expect((await platform('PATCH', `/webhooks/${first.name}`, { application: b })).status).toBe(200);
  expect((await platform('PATCH', `/webhooks/${loose.name}`, { application: a })).status).toBe(200);
  expect((await platform('POST', '/webhooks', hook('y/#', b))).status).toBe(409);
  // A delete frees the slot.
  expect((await platform('DELETE', `/webhooks/${first.name}`)).status).toBe(200);
  expect((await platform('POST', '/webhooks', hook('y/#', b))).status).toBe(201);
  // Deleting the application counts its webhooks out: the uid created again has its whole cap.
  expect((await platform('DELETE', `/applications/${a}`)).status).toBe(200);
  expect((await platform('POST', '/applications', { uid: a })).status).toBe(201);
  expect((await platform('POST', '/webhooks', hook('w/#', a))).status).toBe(201);
});

it('defaults to 20 webhooks an application', async () => {
  const ns = await createTestNamespace('appcap');
  expect(JSON.parse((await admin(['resource-limit', 'get', ns.name, '--json'])).out).limits['webhooks-per-application']).toBe(20);
});

it("customers' webhooks on one topic are bounded per application, not by the topic's binding caps: an addressed publish reaches one customer's", async () => {
  const platform = await capped({ 'bindings-per-topic-filter': 3, 'bindings-per-publish': 3 });
  const topic = unique('orders');
  // Five customers subscribe to the same topic, past the topic's cap of 3.
  const uids = Array.from({ length: 5 }, () => unique('cust'));
  const theirs = uids.map((uid) => hook(`${topic}/#`, uid));
  for (const [i, uid] of uids.entries()) {
    expect((await platform('POST', '/applications', { uid })).status).toBe(201);
    expect((await platform('POST', '/webhooks', theirs[i])).status).toBe(201);
  }
  // The platform's own webhooks (of no application) still count: 3 fit, the 4th is refused.
  const own = Array.from({ length: 3 }, () => hook(`${topic}/#`));
  for (const w of own) expect((await platform('POST', '/webhooks', w)).status).toBe(201);
  const fourth = await platform('POST', '/webhooks', hook(`${topic}/#`));
  expect([fourth.status, fourth.body.error?.code]).toEqual([409, 'LIMIT_EXCEEDED']);
  // A customer's webhook taken out of its application counts again, and there is no room.
  const moved = hook(`${topic}/#`, uids[0]);
  expect((await platform('POST', '/webhooks', moved)).status).toBe(201);
  const out = await platform('PUT', `/webhooks/${moved.name}`, { url: moved.url, topic_filter: moved.topic_filter });
  expect([out.status, out.body.error?.code]).toEqual([409, 'LIMIT_EXCEEDED']);
  // Deleting a platform webhook makes room; the move then fits and counts.
  expect((await platform('DELETE', `/webhooks/${own[0].name}`)).status).toBe(200);
  expect((await platform('PUT', `/webhooks/${moved.name}`, { url: moved.url, topic_filter: moved.topic_filter })).status).toBe(200);
  expect((await platform('POST', '/webhooks', hook(`${topic}/#`))).status).toBe(409);
  // Deleting a customer's webhook leaves the topic's count alone.
  expect((await platform('DELETE', `/webhooks/${theirs[1].name}`)).status).toBe(200);
  expect((await platform('POST', '/webhooks', hook(`${topic}/#`))).status).toBe(409);
});
