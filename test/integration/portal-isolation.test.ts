/**
 * Isolation of portal sessions (docs/portal.md): a session of application A, sent to every route
 * of the route table, reaches nothing but A's webhooks and the catalog. Another application's
 * webhooks, deliveries and secrets answer 404 exactly like webhooks that do not exist; queues,
 * streams, subscriptions, schedules, applications, publishing and the namespace answer 403; and
 * none of those requests changes anything. The same session does its whole job on A's webhooks.
 */
import type { client } from '../fixtures/http';
import { unique } from '../fixtures/queues';
import { until } from '../fixtures/receiver';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { ok, portalSession } from '../fixtures/application-webhooks';
import { ROUTES, type Route } from '../../lambda/core/rules/routes';
import { portalMayCall } from '../../lambda/core/rules/portal';

jest.setTimeout(120_000);

const bed = webhookTestbed('iso');
const w = { a: '', b: '', none: '' };
const app = { a: unique('cust-a'), b: unique('cust-b') };
const res = { q: unique('q'), s: unique('s'), sub: unique('sub'), sch: unique('sch') };
const topic = unique('orders');
let messageId = '';
let receiverUrl = '';
let session: ReturnType<typeof client>;

/** What an API key sees of everything a session must not touch. */
async function snapshot() {
  const paths = [
    `/webhooks/${w.b}`, `/webhooks/${w.b}/status`, `/webhooks/${w.b}/deliveries`, `/webhooks/${w.none}`,
    `/applications/${app.b}`, `/applications/${app.a}`, `/queues/${res.q}`, `/streams/${res.s}`, `/subscriptions/${res.sub}`,
    `/schedules/${res.sch}`, '/applications', '/queues', '/streams', '/subscriptions', '/schedules',
  ];
  return Object.fromEntries(await Promise.all(paths.map(async (p) => [p, (await bed.call('GET', p)).body])));
}

beforeAll(async () => {
  const failing = await bed.receivers.start({ status: 500 });
  receiverUrl = failing.url;
  for (const uid of [app.a, app.b]) await ok(bed.call('POST', '/applications', { uid }));
  const hook = (application?: string) => ({ name: unique('wh'), url: failing.url, topic_filter: topic, retry_count: 0, ...(application ? { application } : {}) });
  w.a = (await ok(bed.call('POST', '/webhooks', hook(app.a)))).name;
  w.b = (await ok(bed.call('POST', '/webhooks', hook(app.b)))).name;
  w.none = (await ok(bed.call('POST', '/webhooks', hook()))).name;
  await ok(bed.call('POST', '/queues', { name: res.q, topic_filter: `${res.q}/#` }));
  await ok(bed.call('POST', '/streams', { name: res.s, topic_filter: `${res.s}/#` }));
  await ok(bed.call('POST', '/subscriptions', { name: res.sub, topic_filter: `${res.sub}/#` }));
  await ok(bed.call('POST', '/schedules', { name: res.sch, every: 3600, topic: `${res.q}/x`, payload: 'p', enabled: false }));
  // A message for each application (a webhook of an application receives only those addressed
  // to it); the unowned webhook receives both.
  messageId = (await ok(bed.call('POST', `/topics/${topic}/messages`, { payload: '{"n":1}', application: app.a }))).message_id;
  await ok(bed.call('POST', `/topics/${topic}/messages`, { payload: '{"n":2}', application: app.b }));
  // Every webhook's delivery has failed and is in its log.
  for (const name of [w.a, w.b, w.none]) {
    await until(async () => ((await bed.call('GET', `/webhooks/${name}/deliveries`)).body.data.deliveries.length > 0 ? true : undefined), 20_000, `the failed delivery to ${name}`);
  }
  session = await portalSession(bed, app.a);
});

/** A path of `route` whose every parameter names something of B's, or of the namespace's. */
function pathFor(route: Route, webhook: string): string {
  const values: Record<string, string> = {
    queue_name: res.q, stream_name: res.s, subscription_name: res.sub, schedule_name: res.sch, webhook_name: webhook,
    message_id: messageId, uid: app.b, topic: `${res.q}/x`,
  };
  return route.path.replace(/\{([^}+]+)\+?\}/g, (_, name: string) => {
    // The event catalog's routes (built beside this one) name an event type: one that does not exist.
    if (!(name in values) && !route.path.startsWith('/event-types')) throw new Error(`no value for {${name}} of ${route.method} ${route.path}: add one`);
    return encodeURIComponent(values[name] ?? 'orders/none').replace(/%2F/g, '/');
  });
}

/** A body that would succeed for a key, so a refusal is the session's, not the body's. */
const bodyFor = (route: Route): Record<string, unknown> | undefined => {
  if (route.method === 'GET' || route.method === 'DELETE') return undefined;
  if (route.path === '/webhooks') return { name: unique('wh'), url: receiverUrl, topic_filter: topic, application: app.b };
  if (route.path === '/webhooks/test') return { name: 'probe', url: receiverUrl, topic_filter: topic };
  if (route.path.endsWith('/replay') && !route.path.includes('/deliveries/')) return { since: new Date(Date.now() - 3600_000).toISOString() };
  if (route.path.startsWith('/topics/')) return route.path.endsWith('/batch') ? { messages: [{ payload: 'x' }] } : { payload: 'x' };
  if (route.path === '/applications') return { uid: unique('cust') };
  return {};
};

describe('a portal session of application A, on every route of the route table', () => {
  const routes = ROUTES.map((r) => [`${r.method} ${r.path}`, r] as const);

  // What an API key saw after the last route that could write (GET routes are not snapshotted:
  // re-reading 15 paths twice around each of them took most of this file's minute and a half).
  let last: Awaited<ReturnType<typeof snapshot>> | undefined;

  it.each(routes)('%s reaches nothing of B, of other webhooks or of the namespace', async (_name, route) => {
    const writes = route.method !== 'GET';
    const before = writes ? (last ??= await snapshot()) : undefined;
    const allowed = portalMayCall('session', route);
    const targets = route.path.includes('{webhook_name}') ? [w.b, w.none] : [w.b];
    for (const target of targets) {
      const r = await session(route.method, pathFor(route, target), bodyFor(route));
      const seen = { route: `${route.method} ${route.path}`, target, status: r.status, code: r.body.error?.code };
      if (!allowed) expect(seen).toEqual({ ...seen, status: 403, code: 'INSUFFICIENT_PERMISSIONS' });
      else if (route.path.includes('{webhook_name}')) expect(seen).toEqual({ ...seen, status: 404, code: 'WEBHOOK_NOT_FOUND' });
      else if (route.path === '/webhooks' && route.method === 'GET') {
        expect(r.status).toBe(200);
        expect(r.body.data.webhooks.every((x: { application: string }) => x.application === app.a)).toBe(true);
        expect(r.body.data.webhooks.map((x: { name: string }) => x.name)).not.toContain(w.b);
      } else if (route.path === '/webhooks' && route.method === 'POST') {
        expect([r.status, r.body.data?.application]).toEqual([201, app.a]); // forced to A, whatever the body says
      } else if (route.path === '/webhooks/test') expect(r.status).toBe(200);
      else if (route.path === '/portal/session' && route.method === 'GET') expect(r.body.data.application.uid).toBe(app.a);
      // The catalog is the namespace's, read-only: the list answers, a missing type is 404.
      else if (route.path === '/event-types') expect(r.status).toBe(200);
      else if (route.path.startsWith('/event-types/')) expect([r.status, r.body.error?.code]).toEqual([404, 'EVENT_TYPE_NOT_FOUND']);
      else throw new Error(`${route.method} ${route.path} is allowed to sessions: say here what it answers`);
    }
    // Nothing of B, of the namespace or of unowned webhooks changed.
    if (writes) {
      last = await snapshot();
      expect(last).toEqual(before);
    }
  });

  it('lists only A\'s webhooks even when asked for B\'s', async () => {
    const r = await session('GET', `/webhooks?application=${app.b}&limit=100`);
    expect(r.body.data.webhooks.map((x: { name: string }) => x.name)).toContain(w.a);
    expect(r.body.data.webhooks.every((x: { application: string }) => x.application === app.a)).toBe(true);
  });
});

describe("the same session on A's own webhook", () => {
  it('sees its failed delivery, replays it, reads its status, rotates its secret, and cannot move it to B', async () => {
    const log = await ok(session('GET', `/webhooks/${w.a}/deliveries`), 200);
    expect(log.deliveries[0]).toMatchObject({ message_id: messageId, outcome: 'failed', status_code: 500 });
    expect((await session('POST', `/webhooks/${w.a}/deliveries/${messageId}/replay`)).status).toBe(200);
    expect((await ok(session('GET', `/webhooks/${w.a}/status`), 200)).name).toBe(w.a);
    const rotated = await ok(session('POST', `/webhooks/${w.a}/secret/rotate`, {}), 200);
    expect(rotated.secret).toMatch(/^whsec_/);
    const moved = await ok(session('PATCH', `/webhooks/${w.a}`, { application: app.b, retry_count: 1 }), 200);
    expect([moved.application, moved.retry_count]).toEqual([app.a, 1]);
    expect((await session('PATCH', `/webhooks/${w.a}`, { application: null })).body.data.application).toBe(app.a);
    expect((await session('DELETE', `/webhooks/${w.a}`)).status).toBe(200);
    expect((await bed.call('GET', `/webhooks/${w.a}`)).status).toBe(404);
  });
});
