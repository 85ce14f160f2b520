/**
 * Deleting an application deletes its webhooks (docs/portal.md), even those
 * created a moment before or during the delete, on engines whose eventually consistent
 * base-table Queries miss recent puts as AWS's may (../fixtures/stale-base-reads.ts). A uid
 * created again is another application: it never gets a webhook of the one deleted.
 */
import { client } from '../fixtures/http';
import { namespaceTestbed } from '../fixtures/testbed';
import { unique } from '../fixtures/queues';
import { staleBaseTableReads } from '../fixtures/stale-base-reads';

jest.setTimeout(90_000);

const LAG_MS = 1500;
const { server, call } = namespaceTestbed('appdel', () => staleBaseTableReads(LAG_MS));

const webhookFor = (application: string) => ({ name: unique('wh'), url: 'http://127.0.0.1:9/hook', topic_filter: unique('t'), application });

async function sessionOf(uid: string) {
  const access = await call('POST', `/applications/${uid}/portal-access`, {});
  const link = decodeURIComponent(new URL(access.body.data.url).hash.replace(/^#token=/, ''));
  return client(server.baseUrl, (await client(server.baseUrl, link)('POST', '/portal/session')).body.data.session_token);
}

it('deletes a webhook created just before the delete, and the uid created again never sees it', async () => {
  const uid = unique('cust');
  expect((await call('POST', '/applications', { uid })).status).toBe(201);
  const made = await call('POST', '/webhooks', webhookFor(uid));
  expect(made.status).toBe(201);

  const del = await call('DELETE', `/applications/${uid}`);
  expect(del.status).toBe(200);
  const left = await call('GET', `/webhooks/${made.body.data.name}`);

  // The platform reuses its customer id for another customer, who signs in.
  expect((await call('POST', '/applications', { uid })).status).toBe(201);
  const session = await sessionOf(uid);
  await new Promise((r) => setTimeout(r, LAG_MS)); // past the lag: the list shows what is there
  const seen = (await session('GET', '/webhooks')).body.data.webhooks.map((w: { name: string }) => w.name);

  expect({ webhooks_deleted: del.body.data.webhooks_deleted, after_delete: left.status, new_session_sees: seen }).toEqual({ webhooks_deleted: 1, after_delete: 404, new_session_sees: [] });
});

/**
 * DELETE /applications/{uid}, sent again after a 503 as its Retry-After says. Its first write (the
 * delete mark on the application item) meets the creates' and moves' transactions, which check
 * that item: DynamoDB refuses a single write to an item a transaction holds
 * (TransactionConflictException; local/aws-harsh/dynamodb-transactions.ts), the SDK's retries can
 * run out while the creates keep coming, and the service answers 503 having written nothing (a
 * retried delete finishes one already marked: storage/applications.ts `markDeleting`).
 */
async function deleteAsClientsDo(uid: string) {
  for (let attempt = 1; ; attempt++) {
    const res = await call('DELETE', `/applications/${uid}`);
    if (res.status !== 503 || attempt === 5) return res;
    await new Promise((r) => setTimeout(r, Number(res.headers['retry-after'] ?? 1) * 1000));
  }
}

it('leaves no webhook behind when creates and moves into the application run during its delete', async () => {
  const uid = unique('cust');
  expect((await call('POST', '/applications', { uid })).status).toBe(201);
  const before = [];
  for (let i = 0; i < 3; i++) before.push((await call('POST', '/webhooks', webhookFor(uid))).body.data.name);
  const outsiders = [];
  for (let i = 0; i < 3; i++) outsiders.push((await call('POST', '/webhooks', { ...webhookFor(uid), application: undefined })).body.data.name);

  // Creates into the application and moves of unowned webhooks into it, sent while the delete runs.
  const creates = Array.from({ length: 6 }, () => webhookFor(uid));
  const [del, ...answers] = await Promise.all([
    new Promise((r) => setTimeout(r, 30)).then(() => deleteAsClientsDo(uid)),
    ...creates.map((w, i) => new Promise((r) => setTimeout(r, i * 15)).then(() => call('POST', '/webhooks', w))),
    ...outsiders.map((name, i) => new Promise((r) => setTimeout(r, i * 20)).then(() => call('PATCH', `/webhooks/${name}`, { application: uid }))),
  ]);
  expect(del.status).toBe(200);
  // Each write either joined the application before its delete was marked (then the sweep deleted
  // it) or was refused (422 naming the unknown application): none is left in the application.
  for (const a of answers) expect([200, 201, 422]).toContain(a.status);

  const joined = answers.filter((a) => a.status === 200 || a.status === 201).length;
  const stillThere = [];
  for (const name of [...before, ...creates.map((w) => w.name), ...outsiders]) {
    const got = await call('GET', `/webhooks/${name}`);
    if (got.status === 200 && got.body.data.application === uid) stillThere.push(name);
  }
  expect({ left_in_application: stillThere, webhooks_deleted: del.body.data.webhooks_deleted }).toEqual({ left_in_application: [], webhooks_deleted: before.length + joined });
});
