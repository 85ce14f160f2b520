/**
 * A portal session's requests count on its application's own budget (docs/rate-limits.md "Portal
 * sessions"), never on the namespace's: one customer's session can deny neither the platform's key
 * nor another customer's session. The budget is the namespace's `portal` limit a minute, per
 * application and category; its answers carry that counter's X-RateLimit-* headers.
 */
import { client, startTestServer, type TestResponse, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { sleep } from '../../lambda/core/rules/clock';
import { recordDynamoCalls } from '../fixtures/dynamo-calls';
import { afterIndexLag } from '../fixtures/harsh-waits';

jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

const rate = (r: TestResponse) => ({ limit: Number(r.headers['x-ratelimit-limit']), remaining: Number(r.headers['x-ratelimit-remaining']) });

/** Waits for the next minute when fewer than `seconds` are left in this one: a burst lands in one window. */
async function roomInWindow(seconds = 20) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await sleep(left + 50);
}

async function namespaceWithCustomers(limits: { management: number; portal?: number }) {
  const ns = await createTestNamespace('psrate', limits);
  const call = client(server.baseUrl, ns.key);
  const sessionOf = async (uid: string) => {
    expect((await call('POST', '/applications', { uid })).status).toBe(201);
    const access = await call('POST', `/applications/${uid}/portal-access`, {});
    const link = decodeURIComponent(new URL(access.body.data.url).hash.replace(/^#token=/, ''));
    return client(server.baseUrl, (await client(server.baseUrl, link)('POST', '/portal/session')).body.data.session_token);
  };
  return { call, sessionOf };
}

it("one customer's session does not spend the platform's nor another customer's management budget", async () => {
  const MANAGEMENT = 30;
  await roomInWindow();
  const { call, sessionOf } = await namespaceWithCustomers({ management: MANAGEMENT });
  const [a, b] = [await sessionOf(unique('cust-a')), await sessionOf(unique('cust-b'))];

  let sent = 0;
  while (sent < MANAGEMENT + 5 && (await a('GET', '/webhooks')).status !== 429) sent++;

  const platform = await call('GET', '/applications');
  const otherCustomer = await b('GET', '/webhooks');
  expect({ sent_by_a: sent, platform: platform.status, customer_b: otherCustomer.status }).toEqual({ sent_by_a: MANAGEMENT + 5, platform: 200, customer_b: 200 });
});

it("refuses a session over its application's portal limit with that counter's headers, and no one else", async () => {
  await roomInWindow();
  const { call, sessionOf } = await namespaceWithCustomers({ management: 50, portal: 4 });
  const uidA = unique('cust-a');
  const a = await sessionOf(uidA); // the link's exchange is the application's first request
  const b = await sessionOf(unique('cust-b'));

  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await a('GET', '/webhooks'));
  expect(answers.map((r) => [r.status, rate(r)])).toEqual([
    [200, { limit: 4, remaining: 2 }],
    [200, { limit: 4, remaining: 1 }],
    [200, { limit: 4, remaining: 0 }],
    [429, { limit: 4, remaining: 0 }],
  ]);
  const refused = answers[3];
  expect(refused.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { category: 'management', limit: 4, application: uidA } });
  expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  // A route the session may not call (403) shows the same counter, uncounted, read eventually
  // consistently (docs/rate-limits.md): once the counts above show.
  await afterIndexLag();
  const forbidden = await a('GET', '/queues');
  expect([forbidden.status, rate(forbidden)]).toEqual([403, { limit: 4, remaining: 0 }]);

  // B has its own budget; the platform's key counts on the namespace's (it sent 2 applications,
  // 2 links: 4 of 50), untouched by either session.
  const other = await b('GET', '/webhooks');
  expect([other.status, rate(other)]).toEqual([200, { limit: 4, remaining: 2 }]);
  const platform = await call('GET', '/applications');
  expect([platform.status, rate(platform)]).toEqual([200, { limit: 50, remaining: 45 }]);
});

it("costs a session request one counter write, on its application's counter only", async () => {
  const { sessionOf } = await namespaceWithCustomers({ management: 50 });
  const uid = unique('cust');
  const session = await sessionOf(uid);
  const rec = recordDynamoCalls();
  try {
    expect((await session('GET', '/webhooks')).status).toBe(200);
  } finally {
    rec.stop();
  }
  const counterWrites = rec.calls.filter((c) => /^Update(Item)?Command$/.test(c.command) && String(c.input.Key?.pk).includes('#RATE#')).map((c) => c.input.Key.pk.split('#RATE#')[1].replace(/#\d+$/, ''));
  expect(counterWrites).toEqual([`portal#${uid}#management`]);
});
