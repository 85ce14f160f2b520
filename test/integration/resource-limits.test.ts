/**
 * Per-namespace caps on resources and on bindings per topic filter (docs/admin.md), through
 * the real local gateway on DynamoDB Local: set with the admin CLI, enforced at create and at a
 * webhook update that moves its binding, exact under concurrent creates, freed by a delete.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { admin } from '../fixtures/admin';

jest.setTimeout(120_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function namespaceWith(limits: Record<string, number>) {
  const ns = await createTestNamespace('rl');
  for (const [what, n] of Object.entries(limits)) expect((await admin(['resource-limit', 'set', ns.name, what, String(n)])).code).toBe(0);
  return { ...ns, call: client(server.baseUrl, ns.key) };
}

const bodies = {
  queues: (name: string, filter: string) => ['/queues', { name, topic_filter: filter }] as const,
  streams: (name: string, filter: string) => ['/streams', { name, topic_filter: filter }] as const,
  subscriptions: (name: string, filter: string) => ['/subscriptions', { name, topic_filter: filter }] as const,
  webhooks: (name: string, filter: string) => ['/webhooks', { name, url: 'http://127.0.0.1:9/hook', topic_filter: filter, retry_count: 0 }] as const,
};
type Kind = keyof typeof bodies;

it('shows the documented defaults and refuses bad settings with a usage error', async () => {
  const ns = await createTestNamespace('rl');
  const got = await admin(['resource-limit', 'get', ns.name, '--json']);
  expect(got.code).toBe(0);
  expect(JSON.parse(got.out)).toEqual({
    namespace: ns.name,
    limits: { queues: 1000, streams: 1000, subscriptions: 1000, webhooks: 100, 'bindings-per-topic-filter': 100, 'bindings-per-publish': 200, 'held-messages': 1_000_000, 'held-bytes': 1024 ** 3, 'schedule-runs-per-minute': 1000, 'event-types': 500, applications: 1000, 'webhooks-per-application': 20 },
    counts: { queues: 0, streams: 0, subscriptions: 0, webhooks: 0, 'event-types': 0, applications: 0 },
    held: { messages: 0, bytes: 0 },
  });
  expect((await admin(['resource-limit', 'set', ns.name, 'topics', '5'])).code).toBe(2);
  expect((await admin(['resource-limit', 'set', ns.name, 'queues', '-1'])).code).toBe(2);
  expect((await admin(['resource-limit', 'set', 'no-such-namespace-xyz', 'queues', '5'])).code).not.toBe(0);
});

describe.each(Object.keys(bodies) as Kind[])('%s', (kind) => {
  it('refuses a create at the cap with 409 LIMIT_EXCEEDED saying how to raise it; a delete frees the slot', async () => {
    const ns = await namespaceWith({ [kind]: 1 });
    const make = (name: string, filter: string) => {
      const [path, body] = bodies[kind](name, filter);
      return ns.call('POST', path, body);
    };
    expect((await make('one', 'a/#')).status).toBe(201);
    const two = await make('two', 'b/#');
    expect(two.status).toBe(409);
    expect(two.body).toMatchObject({ success: false, data: null, error: { code: 'LIMIT_EXCEEDED', details: { limit: 1, resource: kind } } });
    expect(two.body.error?.message).toContain(`resource-limit set <namespace> ${kind}`);
    expect((await ns.call('GET', `/${kind}/two`)).status).toBe(404);
    expect((await ns.call('DELETE', `/${kind}/one`)).status).toBe(200);
    expect((await make('two', 'b/#')).status).toBe(201);
    const got = JSON.parse((await admin(['resource-limit', 'get', ns.name, '--json'])).out);
    expect(got.counts[kind]).toBe(1);
  });
});

it('counts exactly under concurrent creates at the cap', async () => {
  const ns = await namespaceWith({ streams: 4 });
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => ns.call('POST', '/streams', { name: `s${i}`, topic_filter: `c${i}/#` })));
  const statuses = answers.map((a) => a.status).sort();
  expect(statuses.filter((s) => s === 201)).toHaveLength(4);
  expect(statuses.filter((s) => s === 409)).toHaveLength(8);
  expect(answers.filter((a) => a.status === 409).every((a) => a.body.error?.code === 'LIMIT_EXCEEDED')).toBe(true);
  const list = await ns.call('GET', '/streams?limit=100');
  expect(list.body.data.total ?? list.body.data.length).toBe(4);
  expect(JSON.parse((await admin(['resource-limit', 'get', ns.name, '--json'])).out).counts.streams).toBe(4);
});

it('deletes at once every resource of a namespace and counts each out once', async () => {
  const ns = await namespaceWith({ streams: 8 });
  for (let i = 0; i < 8; i++) expect((await ns.call('POST', '/streams', { name: `d${i}`, topic_filter: `d${i}/#` })).status).toBe(201);
  // Every delete's transaction writes the namespace's count and version items: they conflict.
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ns.call('DELETE', `/streams/d${i}`)));
  expect(answers.map((a) => a.status)).toEqual(Array(8).fill(answers[0].status));
  expect(answers[0].status).toBeLessThan(300);
  expect(JSON.parse((await admin(['resource-limit', 'get', ns.name, '--json'])).out).counts.streams).toBe(0);
});

it('caps the bindings of one topic filter across kinds, wildcards included, exactly under concurrent creates', async () => {
  const ns = await namespaceWith({ 'bindings-per-topic-filter': 3 });
  expect((await ns.call('POST', ...bodies.queues('q1', '#'))).status).toBe(201);
  expect((await ns.call('POST', ...bodies.streams('s1', '#'))).status).toBe(201);
  const racers = await Promise.all([
    ns.call('POST', ...bodies.subscriptions('u1', '#')),
    ns.call('POST', ...bodies.subscriptions('u2', '#')),
    ns.call('POST', ...bodies.streams('s2', '#')),
    ns.call('POST', ...bodies.queues('q2', '#')),
  ]);
  expect(racers.filter((r) => r.status === 201)).toHaveLength(1);
  const refused = racers.filter((r) => r.status === 409);
  expect(refused).toHaveLength(3);
  for (const r of refused) {
    expect(r.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 3, resource: 'bindings-per-topic-filter', topic_filter: '#' } });
    expect(r.body.error?.message).toContain('bindings-per-topic-filter');
  }
  // Another filter has its own count, even one every `#` publish also matches.
  expect((await ns.call('POST', ...bodies.queues('q3', 'orders/#'))).status).toBe(201);
  // A delete frees the filter's slot.
  expect((await ns.call('DELETE', '/queues/q1')).status).toBe(200);
  expect((await ns.call('POST', ...bodies.queues('q4', '#'))).status).toBe(201);
});

it('refuses a webhook update that moves its binding to a full filter, and moving away frees the old one', async () => {
  const ns = await namespaceWith({ 'bindings-per-topic-filter': 1 });
  expect((await ns.call('POST', ...bodies.webhooks('h1', 'full/#'))).status).toBe(201);
  expect((await ns.call('POST', ...bodies.webhooks('h2', 'other/#'))).status).toBe(201);
  const moved = await ns.call('PATCH', '/webhooks/h2', { topic_filter: 'full/#' });
  expect(moved.status).toBe(409);
  expect(moved.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { topic_filter: 'full/#' } });
  expect((await ns.call('GET', '/webhooks/h2')).body.data.topic_filter).toBe('other/#');
  // An update that keeps its filter is not counted again.
  expect((await ns.call('PATCH', '/webhooks/h2', { timeout: 10 })).status).toBe(200);
  // h1 moves away: full/# has room, other/# is taken by h2.
  expect((await ns.call('PATCH', '/webhooks/h1', { topic_filter: 'third/#' })).status).toBe(200);
  expect((await ns.call('PATCH', '/webhooks/h2', { topic_filter: 'full/#' })).status).toBe(200);
  expect((await ns.call('POST', ...bodies.webhooks('h3', 'other/#'))).status).toBe(201);
  expect((await ns.call('POST', ...bodies.webhooks('h4', 'third/#'))).status).toBe(409);
});

it('caps the bindings one publish reaches across every filter it matches (bindings-per-publish)', async () => {
  const ns = await namespaceWith({ 'bindings-per-publish': 5 });
  for (const [name, filter] of [['q1', '#'], ['q2', '#'], ['q3', '+/#'], ['q4', 't/+'], ['q5', 't/x']]) {
    expect({ name, status: (await ns.call('POST', ...bodies.queues(name, filter))).status }).toEqual({ name, status: 201 });
  }
  // A publish to t/x now reaches 5; one more binding on any filter t/x matches would make it 6.
  for (const [kind, name, filter] of [['streams', 's1', 't/#'], ['webhooks', 'h1', '+/x'], ['subscriptions', 'u1', '#']] as const) {
    const [path, body] = bodies[kind](name, filter);
    const refused = await ns.call('POST', path, body);
    expect({ name, status: refused.status }).toEqual({ name, status: 409 });
    expect(refused.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 5, resource: 'bindings-per-publish', topic_filter: filter, reach: 6 } });
    expect(refused.body.error?.message).toContain('bindings-per-publish');
    expect((await ns.call('GET', `/${kind}/${name}`)).status).toBe(404);
  }
  // Filters no topic shares with t/x add up on their own: u/v reaches #, #, +/# and itself.
  expect((await ns.call('POST', ...bodies.queues('q6', 'u/v'))).status).toBe(201);
  // A webhook moving onto a filter that would exceed it is refused too, and a delete frees room.
  expect((await ns.call('POST', ...bodies.webhooks('h2', 'other/a/b'))).status).toBe(201);
  expect((await ns.call('PATCH', '/webhooks/h2', { topic_filter: 't/+' })).status).toBe(409);
  expect((await ns.call('DELETE', '/queues/q1')).status).toBe(200);
  expect((await ns.call('PATCH', '/webhooks/h2', { topic_filter: 't/+' })).status).toBe(200);
});
