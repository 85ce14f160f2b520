/**
 * A portal link and the session it opens work the moment they exist
 * (docs/portal.md), on engines whose eventually consistent GetItems miss recent puts as AWS's may
 * (../fixtures/stale-base-reads.ts): the portal page exchanges its link and at once asks
 * `GET /portal/session` (console/src/portal.tsx), and a platform may redirect its customer to the
 * link the moment it has it.
 */
import { client } from '../fixtures/http';
import { namespaceTestbed } from '../fixtures/testbed';
import { unique } from '../fixtures/queues';
import { staleBaseTableReads } from '../fixtures/stale-base-reads';

jest.setTimeout(60_000);

const LAG_MS = 1500;
const { server, call } = namespaceTestbed('psfirst', () => staleBaseTableReads(LAG_MS));

async function linkOf(uid: string) {
  const access = await call('POST', `/applications/${uid}/portal-access`, {});
  expect(access.status).toBe(201);
  return decodeURIComponent(new URL(access.body.data.url).hash.replace(/^#token=/, ''));
}

it('answers a session its first request right after the exchange, and the link is spent', async () => {
  const uid = unique('cust');
  expect((await call('POST', '/applications', { uid })).status).toBe(201);
  const link = await linkOf(uid);
  await new Promise((r) => setTimeout(r, LAG_MS)); // the customer clicks the link a moment later
  const exchanged = await client(server.baseUrl, link)('POST', '/portal/session');
  expect(exchanged.status).toBe(201);
  const session = client(server.baseUrl, exchanged.body.data.session_token);
  const first = await session('GET', '/portal/session');
  const list = await session('GET', '/webhooks');
  const linkAgain = await client(server.baseUrl, link)('POST', '/portal/session');
  expect({ first_request: first.status, application: first.body.data?.application?.uid, list: list.status, link_again: linkAgain.status })
    .toEqual({ first_request: 200, application: uid, list: 200, link_again: 401 });
});

it('signs in with a link used the moment it was issued', async () => {
  const uid = unique('cust');
  expect((await call('POST', '/applications', { uid })).status).toBe(201);
  const exchanged = await client(server.baseUrl, await linkOf(uid))('POST', '/portal/session');
  expect(exchanged.status).toBe(201);
});
