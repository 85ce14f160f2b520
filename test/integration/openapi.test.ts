/**
 * The OpenAPI document against real answers: it is served without auth by the local gateway, and
 * the answers of every route (and some errors) validate against the document's schemas for their
 * operation and status. Success `data` is checked strictly: a field the handlers answer with but
 * the document does not list fails the test.
 */
import * as z from 'zod';
import { ROUTES, type Route } from '../../lambda/core/rules/routes';
import { openApiPath } from '../../lambda/api-docs/openapi';
import { client, startTestServer, type TestResponse, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { startReceiver, type Receiver } from '../fixtures/receiver';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { resetConfig } from '../../lambda/core/config';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { putRetained } from '../../lambda/webhooks/storage/delivery-log';

type Schema = Record<string, any>;
let server: TestServer;
let ns: TestNamespace;
let receiver: Receiver;
let doc: Schema;
let call: ReturnType<typeof client>;
const checked = new Set<string>();

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('oa');
  receiver = await startReceiver();
  call = client(server.baseUrl, ns.key);
  // Replays (extension) queue delivery jobs: a delivery queue of this file's own, never consumed.
  process.env.MSG_WEBHOOK_QUEUE_URL = (await ensureDeliveryQueues(`openapi-${Date.now()}`)).url;
  resetConfig();
}, 60_000);
afterAll(async () => {
  await receiver.close();
  await server.close();
});

/** Inlines `$ref`s to components; `strict` closes every object that lists its properties. */
function resolve(s: unknown, strict: boolean): unknown {
  if (Array.isArray(s)) return s.map((x) => resolve(x, strict));
  if (!s || typeof s !== 'object') return s;
  const o = s as Schema;
  if (typeof o.$ref === 'string') {
    const target = o.$ref.replace('#/', '').split('/').reduce((n: Schema, k: string) => n[k], doc);
    return resolve(target, strict);
  }
  const out: Schema = Object.fromEntries(Object.entries(o).map(([k, v]) => [k, k === 'properties' ? Object.fromEntries(Object.entries(v as Schema).map(([p, ps]) => [p, resolve(ps, strict)])) : resolve(v, strict)]));
  if (strict && out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

/** Validates an answer against the document's schema for the route's operation and status. */
function expectDocumented(route: Route, res: TestResponse) {
  const op = doc.paths[openApiPath(route.path)][route.method.toLowerCase()];
  let response = op.responses[String(res.status)];
  expect({ route: `${route.method} ${route.path}`, status: res.status, documented: response !== undefined }).toMatchObject({ documented: true });
  if (response.$ref) response = resolve(response, false);
  const schema = resolve(response.content['application/json'].schema, res.status < 300);
  const result = z.fromJSONSchema(schema as never).safeParse(res.body);
  expect({ route: `${route.method} ${route.path} ${res.status}`, issues: result.error?.issues ?? [] }).toEqual({ route: expect.any(String), issues: [] });
  if (res.status < 300) {
    for (const h of Object.keys(response.headers ?? {}).filter((name) => name.startsWith('X-RateLimit'))) expect(res.headers[h.toLowerCase()]).toMatch(/^\d+$/);
    checked.add(`${route.method} ${route.path}`);
  }
}

const route = (method: string, path: string) => ROUTES.find((r) => r.method === method && r.path === path) as Route;
async function expectCall(method: string, path: string, url: string, body?: unknown, status?: number) {
  const res = await call(method, url, body);
  if (status !== undefined) expect({ url, status: res.status, body: res.body }).toMatchObject({ status });
  expectDocumented(route(method, path), res);
  return res;
}

describe('OpenAPI document served by the local gateway', () => {
  it('answers GET /api/v1/openapi.json without a key, and 405 to another method', async () => {
    const anon = client(server.baseUrl);
    const res = await anon('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toMatchObject({ openapi: '3.1.0', info: { title: 'Messaging Service API' } });
    doc = res.body as unknown as Schema;
    const post = await anon('POST', '/openapi.json', {});
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
  });

  it('describes the answers of every route, errors included', async () => {
    expect(doc).toBeDefined();
    await expectCall('GET', '/namespace', '/namespace', undefined, 200);
    await expectCall('GET', '/namespace/access', '/namespace/access', undefined, 200);

    await expectCall('POST', '/queues', '/queues', { name: 'q1', topic_filter: 'orders/#', dead_letter_topic: 'dlq/orders' }, 201);
    await expectCall('POST', '/queues', '/queues', { name: 'q1', topic_filter: 'orders/#' }, 409);
    await expectCall('POST', '/queues', '/queues', { name: 'q2', topic_filter: 'orders/#/x' }, 400);
    await expectCall('GET', '/queues', '/queues?limit=10', undefined, 200);
    await expectCall('GET', '/queues', '/queues?limit=1000', undefined, 422);
    await expectCall('GET', '/queues/{queue_name}', '/queues/q1', undefined, 200);
    await expectCall('GET', '/queues/{queue_name}', '/queues/nope', undefined, 404);
    // Extensions: an ordered queue with a default delay shows both settings.
    await expectCall('POST', '/queues', '/queues', { name: 'q3', topic_filter: 'ordered/#', ordering: 'fifo', delay_seconds: 5 }, 201);
    expect((await expectCall('GET', '/queues/{queue_name}', '/queues/q3', undefined, 200)).body.data).toMatchObject({ ordering: 'fifo', delay_seconds: 5 });
    await expectCall('POST', '/queues', '/queues', { name: 'q4', topic_filter: 'ordered/#', ordering: 'lifo' }, 422);
    await expectCall('DELETE', '/queues/{queue_name}', '/queues/q3', undefined, 200);
    await expectCall('POST', '/streams', '/streams', { name: 's1', topic_filter: 'orders/+/created', partition_count: 2 }, 201);
    await expectCall('POST', '/subscriptions', '/subscriptions', { name: 'sub1', topic_filter: '#' }, 201);

    await expectCall('POST', '/topics/{topic+}/messages', '/topics/orders/eu/created/messages', { payload: '{"n":1}', properties: { a: 'b' }, partition_key: 'k' }, 201);
    await expectCall('POST', '/topics/{topic+}/messages/batch', '/topics/orders/us/created/messages/batch', { messages: [{ payload: 'x' }, { payload: 'y' }] }, 201);
    await expectCall('POST', '/topics/{topic+}/messages', '/topics/orders/eu/created/messages', { payload: 'x'.repeat(256 * 1024 + 1) }, 413);
    await expectCall('POST', '/topics/{topic+}/messages', '/topics/orders/eu/created/messages', {}, 422);
    await expectCall('POST', '/topics/{topic+}/messages', '/topics/orders/eu/created/messages', { payload: 'x', application: 'nobody' }, 404);
    await expectCall('POST', '/topics/{topic+}/messages/batch', '/topics/orders/eu/created/messages/batch', { messages: [{ payload: 'x', application: 'nobody' }] }, 404);

    const consumed = await expectCall('POST', '/queues/{queue_name}/messages/consume', '/queues/q1/messages/consume', { max_messages: 3, timeout_seconds: 0 }, 200);
    expect(consumed.body.data.count).toBe(3);
    await expectCall('POST', '/queues/{queue_name}/messages/consume', '/queues/q1/messages/consume', { max_messages: 101 }, 422);
    const [m1, m2, m3] = consumed.body.data.messages as { message_id: string; receipt_handle: string }[];
    await expectCall('POST', '/queues/{queue_name}/messages/{message_id}/ack', `/queues/q1/messages/${m1.message_id}/ack`, { receipt_handle: `${m1.receipt_handle}x` }, 409);
    await expectCall('POST', '/queues/{queue_name}/messages/{message_id}/ack', `/queues/q1/messages/${m1.message_id}/ack`, { receipt_handle: m1.receipt_handle }, 200);
    await expectCall('POST', '/queues/{queue_name}/messages/{message_id}/ack', `/queues/q1/messages/${m1.message_id}/ack`, { receipt_handle: m1.receipt_handle }, 404);
    const batch = await expectCall('POST', '/queues/{queue_name}/messages/ack', '/queues/q1/messages/ack', {
      entries: [m2, m3, { message_id: 'gone', receipt_handle: 'x' }].map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })),
    }, 200);
    expect(batch.body.data.acknowledged_count).toBe(2);
    // Console extensions (docs/console.md): a queue's SQS counts and its redrive.
    await expectCall('GET', '/queues/{queue_name}/stats', '/queues/q1/stats', undefined, 200);
    await expectCall('GET', '/queues/{queue_name}/stats', '/queues/nope/stats', undefined, 404);
    await expectCall('POST', '/queues/{queue_name}/redrive', '/queues/q1/redrive', { to_topic: 'elsewhere/x', max: 10 }, 200);
    await expectCall('POST', '/queues/{queue_name}/redrive', '/queues/q1/redrive', { to_topic: 'orders/eu/created' }, 422);

    await expectCall('GET', '/streams', '/streams', undefined, 200);
    await expectCall('GET', '/streams/{stream_name}', '/streams/s1', undefined, 200);
    await expectCall('POST', '/streams/{stream_name}/messages/consume', '/streams/s1/messages/consume', { consumer_group: 'g', start_offset: 'earliest', timeout_seconds: 0 }, 200);
    await expectCall('POST', '/streams/{stream_name}/offsets/commit', '/streams/s1/offsets/commit', { consumer_group: 'g', offset: 1 }, 200);
    await expectCall('POST', '/streams/{stream_name}/offsets/commit', '/streams/s1/offsets/commit', { consumer_group: 'g', offset: 99 }, 422);
    await expectCall('GET', '/streams/{stream_name}/groups', '/streams/s1/groups', undefined, 200);
    await expectCall('GET', '/streams/{stream_name}/groups', '/streams/s1/groups?limit=0', undefined, 422);

    await expectCall('GET', '/subscriptions', '/subscriptions', undefined, 200);
    await expectCall('GET', '/subscriptions/{subscription_name}', '/subscriptions/sub1', undefined, 200);
    await expectCall('POST', '/subscriptions/{subscription_name}/messages/consume', '/subscriptions/sub1/messages/consume', { subscriber_id: 'w1', timeout_seconds: 0 }, 200);
    await expectCall('GET', '/subscriptions/{subscription_name}/subscribers', '/subscriptions/sub1/subscribers', undefined, 200);
    await expectCall('GET', '/subscriptions/{subscription_name}/subscribers', '/subscriptions/nope/subscribers', undefined, 404);

    const hook = { name: 'h1', url: receiver.url, topic_filter: 'hooks/#' };
    await expectCall('POST', '/webhooks', '/webhooks', { ...hook, headers: { 'X-Api-Key': 'k' }, on_failure: 'send_to_dlq', dead_letter_topic: 'dlq/hooks' }, 201);
    await expectCall('GET', '/webhooks', '/webhooks', undefined, 200);
    await expectCall('GET', '/webhooks/{webhook_name}', '/webhooks/h1', undefined, 200);
    await expectCall('PUT', '/webhooks/{webhook_name}', '/webhooks/h1', { url: receiver.url, topic_filter: 'hooks/+', condition: { field: 'n', operator: '>', value: 1 } }, 200);
    await expectCall('PATCH', '/webhooks/{webhook_name}', '/webhooks/h1', { retry_delay: 4, condition: null }, 200);
    await expectCall('GET', '/webhooks/{webhook_name}/status', '/webhooks/h1/status', undefined, 200);
    await expectCall('POST', '/webhooks/test', '/webhooks/test', hook, 200);
    // Extensions: the delivery log, replay (of a failed delivery's retained message) and rotation.
    await expectCall('GET', '/webhooks/{webhook_name}/deliveries', '/webhooks/h1/deliveries?status=failed&limit=5', undefined, 200);
    await expectCall('GET', '/webhooks/{webhook_name}/deliveries', '/webhooks/h1/deliveries?status=nope', undefined, 400);
    await expectCall('GET', '/webhooks/{webhook_name}/deliveries', '/webhooks/h1/deliveries?limit=0', undefined, 422);
    const h1 = (await getWebhook(ns.name, 'h1'))!;
    await putRetained(ns.name, h1.id, { message_id: 'M1', topic: 'hooks/x', payload: 'p', content_type: 'text/plain', properties: {}, published_at: Date.now(), size: 1 }, Date.now());
    await expectCall('POST', '/webhooks/{webhook_name}/deliveries/{message_id}/replay', '/webhooks/h1/deliveries/M1/replay', undefined, 200);
    await expectCall('POST', '/webhooks/{webhook_name}/deliveries/{message_id}/replay', '/webhooks/h1/deliveries/M2/replay', undefined, 404);
    await expectCall('POST', '/webhooks/{webhook_name}/replay', '/webhooks/h1/replay', { since: new Date(Date.now() - 60_000).toISOString() }, 200);
    await expectCall('POST', '/webhooks/{webhook_name}/replay', '/webhooks/h1/replay', {}, 422);
    await expectCall('POST', '/webhooks/{webhook_name}/secret/rotate', '/webhooks/h1/secret/rotate', { grace_seconds: 60 }, 200);
    await expectCall('POST', '/webhooks/{webhook_name}/secret/rotate', '/webhooks/h1/secret/rotate', { grace_seconds: 'x' }, 400);
    await expectCall('DELETE', '/webhooks/{webhook_name}', '/webhooks/h1', undefined, 200);
    await expectCall('GET', '/webhooks/{webhook_name}', '/webhooks/h1', undefined, 404);

    // Long delays and their cancel (docs/schedules.md): held in DynamoDB beyond 900 s.
    const held = await expectCall('POST', '/topics/{topic+}/messages', '/topics/orders/eu/later/messages', { payload: 'later', delay_seconds: 7200 }, 201);
    await expectCall('DELETE', '/messages/{message_id}/delivery', `/messages/${held.body.data.message_id}/delivery`, undefined, 200);
    await expectCall('DELETE', '/messages/{message_id}/delivery', '/messages/nope/delivery', undefined, 404);
    // Schedules.
    await expectCall('POST', '/schedules', '/schedules', { name: 'sch1', every: 300, topic: 'orders/eu/tick', payload: 'tick' }, 201);
    await expectCall('POST', '/schedules', '/schedules', { name: 'sch2', every: 30, topic: 'orders/eu/tick', payload: 'tick' }, 422);
    await expectCall('GET', '/schedules', '/schedules', undefined, 200);
    await expectCall('GET', '/schedules/{schedule_name}', '/schedules/sch1', undefined, 200);
    await expectCall('PUT', '/schedules/{schedule_name}', '/schedules/sch1', { every: 600, topic: 'orders/eu/tick', payload: 'tick' }, 200);
    await expectCall('PATCH', '/schedules/{schedule_name}', '/schedules/sch1', { enabled: false }, 200);
    await expectCall('DELETE', '/schedules/{schedule_name}', '/schedules/sch1', undefined, 200);
    await expectCall('GET', '/schedules/{schedule_name}', '/schedules/sch1', undefined, 404);

    // Event catalog (docs/catalog.md): an enforced schema refuses a publish it applies to.
    const orders = { name: 'orders/#', description: 'Orders', schema: { type: 'object', required: ['n'] }, enforce: true, examples: ['{"n":1}'] };
    await expectCall('POST', '/event-types', '/event-types', orders, 201);
    await expectCall('POST', '/event-types', '/event-types', orders, 409);
    await expectCall('POST', '/event-types', '/event-types', { name: 'orders/#/x' }, 400);
    await expectCall('POST', '/event-types', '/event-types', { name: 'x', schema: { type: 'nope' } }, 422);
    await expectCall('POST', '/topics/{topic+}/messages', '/topics/orders/eu/created/messages', { payload: '{"m":1}' }, 422);
    await expectCall('POST', '/topics/{topic+}/messages/batch', '/topics/orders/eu/created/messages/batch', { messages: [{ payload: '{"n":1}' }, { payload: 'x' }] }, 422);
    await expectCall('GET', '/event-types', '/event-types?limit=10', undefined, 200);
    await expectCall('GET', '/event-types', '/event-types?offset=-1', undefined, 422);
    await expectCall('GET', '/event-types/{event_type+}', '/event-types/orders%2F%23', undefined, 200);
    await expectCall('PATCH', '/event-types/{event_type+}', '/event-types/orders%2F%23', { enforce: false, examples: null }, 200);
    await expectCall('PATCH', '/event-types/{event_type+}', '/event-types/orders%2F%23', { enforce: 'yes' }, 400);
    await expectCall('GET', '/asyncapi.json', '/asyncapi.json', undefined, 200);
    await expectCall('DELETE', '/event-types/{event_type+}', '/event-types/orders%2F%23', undefined, 200);
    await expectCall('GET', '/event-types/{event_type+}', '/event-types/orders%2F%23', undefined, 404);

    await expectCall('DELETE', '/queues/{queue_name}', '/queues/q1', undefined, 200);
    await expectCall('DELETE', '/streams/{stream_name}', '/streams/s1', undefined, 200);
    await expectCall('DELETE', '/subscriptions/{subscription_name}', '/subscriptions/sub1', undefined, 200);

    // Applications and portal access (docs/portal.md).
    await expectCall('POST', '/applications', '/applications', { uid: 'cust-1', name: 'Customer', metadata: { plan: 'gold' } }, 201);
    await expectCall('POST', '/applications', '/applications', { uid: 'cust-1' }, 409);
    await expectCall('GET', '/applications', '/applications', undefined, 200);
    await expectCall('GET', '/applications/{uid}', '/applications/cust-1', undefined, 200);
    await expectCall('GET', '/applications/{uid}', '/applications/nope', undefined, 404);
    await expectCall('PATCH', '/applications/{uid}', '/applications/cust-1', { name: null }, 200);
    const access = await expectCall('POST', '/applications/{uid}/portal-access', '/applications/cust-1/portal-access', { session_days: 3 }, 201);
    const linkToken = decodeURIComponent(new URL(access.body.data.url).hash.replace(/^#token=/, ''));
    const opened = await client(server.baseUrl, linkToken)('POST', '/portal/session');
    expect(opened.status).toBe(201);
    expectDocumented(route('POST', '/portal/session'), opened);
    expectDocumented(route('POST', '/portal/session'), await call('POST', '/portal/session'));
    const me = await client(server.baseUrl, opened.body.data.session_token)('GET', '/portal/session');
    expect(me.status).toBe(200);
    expectDocumented(route('GET', '/portal/session'), me);
    await expectCall('DELETE', '/applications/{uid}/portal-access', '/applications/cust-1/portal-access', undefined, 200);
    await expectCall('DELETE', '/applications/{uid}', '/applications/cust-1', undefined, 200);
    await expectCall('DELETE', '/applications/{uid}', '/applications/cust-1', undefined, 404);

    // The error answers shared by every operation: no key, and a key without the scope.
    expectDocumented(route('GET', '/queues'), await client(server.baseUrl)('GET', '/queues'));
    expectDocumented(route('POST', '/queues'), await client(server.baseUrl, ns.keys.publish)('POST', '/queues', { name: 'q9', topic_filter: '#' }));

    expect(ROUTES.map((r) => `${r.method} ${r.path}`).filter((r) => !checked.has(r))).toEqual([]);
  }, 60_000);
});
