/**
 * The event catalog through the real local gateway on DynamoDB Local (docs/catalog.md): event
 * types CRUD with its errors, scopes and cap; enforcement on single and batch publish (422 naming
 * the path and keyword, nothing stored); the most specific event type applying; a change seen by
 * the very next publish; what enforcement costs in DynamoDB requests per publish; namespaces
 * kept apart.
 */
import { ddb } from '../../lambda/core/storage/client';
import { setNamespaceCap } from '../../lambda/core/storage/resource-limits';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi, unique, type Call } from '../fixtures/queues';

jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let call: Call;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('cat');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const enc = encodeURIComponent;
const order = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 }, lines: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer', minimum: 1 } } } } } };

/** A queue on `<prefix>/#` and its topic prefix. */
async function queueOn(prefix: string) {
  const name = unique('q');
  expect((await call('POST', '/queues', { name, topic_filter: `${prefix}/#` })).status).toBe(201);
  return name;
}
const count = async (name: string) => (await q.get(name)).message_count;

describe('event types', () => {
  it('creates, gets (name percent-encoded), lists by name, patches and deletes an event type', async () => {
    const p = unique('shop');
    const created = await call('POST', '/event-types', { name: `${p}/orders/created`, description: 'An order was placed.', schema: order, examples: ['{"id":1}', { id: 2 }] });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      name: `${p}/orders/created`,
      description: 'An order was placed.',
      schema: order,
      enforce: false,
      examples: ['{"id":1}', { id: 2 }],
      version: 1,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect((await call('POST', '/event-types', { name: `${p}/#` })).status).toBe(201);
    expect((await call('POST', '/event-types', { name: `${p}/orders/created` })).body.error).toMatchObject({ code: 'EVENT_TYPE_ALREADY_EXISTS' });

    const got = await call('GET', `/event-types/${enc(`${p}/orders/created`)}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(created.body.data);
    // Levels sent as path segments name the same event type (as topics do in /topics/{topic}):
    // whether a gateway decodes %2F before matching routes does not matter.
    const levels = await call('GET', `/event-types/${p}/orders/created`);
    expect({ status: levels.status, data: levels.body.data }).toEqual({ status: 200, data: created.body.data });
    expect((await call('GET', `/event-types/${p}/orders%2Fcreated`)).body.data).toEqual(created.body.data);
    const list = await call('GET', '/event-types?limit=100');
    const mine = (list.body.data.event_types as { name: string }[]).map((e) => e.name).filter((n) => n.startsWith(p));
    expect(mine).toEqual([`${p}/#`, `${p}/orders/created`]);
    expect(list.body.data).toMatchObject({ limit: 100, offset: 0, total: expect.any(Number) });
    expect((await call('GET', '/event-types?limit=1&offset=1')).body.data.event_types).toHaveLength(1);

    const patched = await call('PATCH', `/event-types/${enc(`${p}/orders/created`)}`, { enforce: true, examples: null });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ enforce: true, examples: [], schema: order, description: 'An order was placed.', version: 2 });

    const deleted = await call('DELETE', `/event-types/${enc(`${p}/#`)}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ deleted_at: expect.stringMatching(ISO_MS) });
    expect((await call('GET', `/event-types/${enc(`${p}/#`)}`)).body.error).toMatchObject({ code: 'EVENT_TYPE_NOT_FOUND' });
    expect((await call('DELETE', `/event-types/${enc(`${p}/#`)}`)).status).toBe(404);
    expect((await call('PATCH', `/event-types/${enc(`${p}/#`)}`, { enforce: false })).status).toBe(404);
  });

  it.each([
    ['a name that is no topic filter', { name: 'a/#/b' }, 400, 'INVALID_TOPIC_FILTER', 'name'],
    ['a missing name', {}, 422, 'VALIDATION_ERROR', 'name'],
    ['a schema that is not an object', { name: 'x/y', schema: 'string' }, 400, 'INVALID_REQUEST', 'schema'],
    ['an invalid JSON Schema', { name: 'x/y', schema: { type: 'nope' } }, 422, 'VALIDATION_ERROR', 'schema'],
    ['enforce without a schema', { name: 'x/y', enforce: true }, 422, 'VALIDATION_ERROR', 'enforce'],
    ['an example failing the schema', { name: 'x/y', schema: order, examples: [{ id: 0 }] }, 422, 'VALIDATION_ERROR', 'examples.0'],
    ['too many examples', { name: 'x/y', examples: Array.from({ length: 11 }, (_, i) => i) }, 422, 'VALIDATION_ERROR', 'examples'],
  ])('refuses %s', async (_label, body, status, code, field) => {
    const res = await call('POST', '/event-types', body);
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ code, details: { fields: [expect.objectContaining({ field })] } });
    expect((await call('GET', `/event-types/${enc('x/y')}`)).status).toBe(404);
  });

  it('lets any key read the catalog and only a manage key change it', async () => {
    const name = `${unique('scoped')}/created`;
    expect((await client(server.baseUrl, ns.keys.publish)('POST', '/event-types', { name })).body.error).toMatchObject({ code: 'INSUFFICIENT_PERMISSIONS' });
    expect((await client(server.baseUrl, ns.keys.manage)('POST', '/event-types', { name })).status).toBe(201);
    expect((await client(server.baseUrl, ns.keys.consume)('GET', `/event-types/${enc(name)}`)).status).toBe(200);
    expect((await client(server.baseUrl, ns.keys.publish)('GET', '/asyncapi.json')).status).toBe(200);
    expect((await client(server.baseUrl, ns.keys.consume)('DELETE', `/event-types/${enc(name)}`)).status).toBe(403);
    expect((await client(server.baseUrl)('GET', '/event-types')).status).toBe(401);
  });

  it('caps event types per namespace with 409 LIMIT_EXCEEDED, and a delete frees a slot', async () => {
    const other = await createTestNamespace('catcap');
    const c = client(server.baseUrl, other.key);
    await setNamespaceCap(other.name, 'event-types', 2);
    expect((await c('POST', '/event-types', { name: 'a' })).status).toBe(201);
    expect((await c('POST', '/event-types', { name: 'b' })).status).toBe(201);
    const refused = await c('POST', '/event-types', { name: 'c' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 2, resource: 'event-types' } });
    expect((await c('GET', '/event-types')).body.data.total).toBe(2);
    expect((await c('DELETE', '/event-types/a')).status).toBe(200);
    expect((await c('POST', '/event-types', { name: 'c' })).status).toBe(201);
  });
});

describe('concurrent writes', () => {
  it('never pass the cap, and count exactly, beside queue creates that move the same versions item', async () => {
    const other = await createTestNamespace('catrace');
    const c = client(server.baseUrl, other.key);
    await setNamespaceCap(other.name, 'event-types', 10);
    // As a client does: a 503 (conflicts that outlasted the write's tries on a loaded machine,
    // nothing stored) is sent again after a pause.
    const sent = async (method: string, path: string, body: unknown) => {
      for (let tries = 1; ; tries++) {
        const r = await c(method, path, body);
        if (r.status !== 503 || tries === 5) return r;
        await new Promise((res) => setTimeout(res, 200 * tries));
      }
    };
    const answers = await Promise.all([
      ...Array.from({ length: 14 }, (_, i) => sent('POST', '/event-types', { name: `race/${i}` })),
      ...Array.from({ length: 4 }, (_, i) => sent('POST', '/queues', { name: `race-${i}`, topic_filter: `race/${i}` })),
    ]);
    const types = answers.slice(0, 14).map((a) => a.status);
    expect(types.filter((s) => s === 201)).toHaveLength(10);
    expect(types.filter((s) => s === 409)).toHaveLength(4);
    expect(answers.slice(14).map((a) => a.status)).toEqual([201, 201, 201, 201]);
    const list = await c('GET', '/event-types?limit=100');
    expect({ listed: list.body.data.event_types.length, total: list.body.data.total }).toEqual({ listed: 10, total: 10 });
  });
});

describe('publishing to a topic with an enforced schema', () => {
  it('refuses a payload failing the schema or not JSON with 422 naming the path and keyword, storing nothing', async () => {
    const p = unique('enf');
    const queue = await queueOn(p);
    expect((await call('POST', '/event-types', { name: `${p}/#`, schema: order, enforce: true })).status).toBe(201);
    const bad = await call('POST', `/topics/${p}/orders/messages`, { payload: JSON.stringify({ id: 1, lines: [{ qty: 1 }, { qty: 0 }] }) });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: {
        event_type: `${p}/#`,
        fields: [{ field: 'payload', message: expect.stringContaining('/lines/1/qty') }],
        violations: [{ instance_path: '/lines/1/qty', keyword: 'minimum', schema_path: '#/properties/lines/items/properties/qty/minimum', message: 'must be >= 1' }],
      },
    });
    const notJson = await call('POST', `/topics/${p}/orders/messages`, { payload: 'id=1' });
    expect(notJson.status).toBe(422);
    expect(notJson.body.error?.details.violations).toEqual([expect.objectContaining({ keyword: 'json' })]);
    expect(await count(queue)).toBe(0);
    expect((await call('POST', `/topics/${p}/orders/messages`, { payload: '{"id":7}' })).status).toBe(201);
    expect(await count(queue)).toBe(1);
  });

  it('refuses a whole batch when one message fails, naming its index, and stores none of it', async () => {
    const p = unique('batch');
    const queue = await queueOn(p);
    expect((await call('POST', '/event-types', { name: `${p}/+`, schema: order, enforce: true })).status).toBe(201);
    const messages = [{ payload: '{"id":1}' }, { payload: '{"id":2}' }, { payload: '{"lines":[]}' }, { payload: '{"id":3}' }, { payload: '[' }];
    const res = await call('POST', `/topics/${p}/x/messages/batch`, { messages });
    expect(res.status).toBe(422);
    expect(res.body.error?.details.violations).toEqual([
      expect.objectContaining({ index: 2, instance_path: '', keyword: 'required' }),
      expect.objectContaining({ index: 4, keyword: 'json' }),
    ]);
    expect((res.body.error?.details.fields as { field: string }[]).map((f) => f.field)).toEqual(['messages.2.payload', 'messages.4.payload']);
    expect(await count(queue)).toBe(0);
    expect((await call('POST', `/topics/${p}/x/messages/batch`, { messages: [messages[0], messages[1], messages[3]] })).status).toBe(201);
    expect(await count(queue)).toBe(3);
  });

  it('applies the most specific event type: an exact topic without enforce overrides an enforcing filter', async () => {
    const p = unique('spec');
    await queueOn(p);
    expect((await call('POST', '/event-types', { name: `${p}/#`, schema: order, enforce: true })).status).toBe(201);
    expect((await call('POST', '/event-types', { name: `${p}/free`, description: 'anything goes' })).status).toBe(201);
    expect((await call('POST', `/topics/${p}/free/messages`, { payload: 'not json' })).status).toBe(201);
    expect((await call('POST', `/topics/${p}/other/messages`, { payload: 'not json' })).status).toBe(422);
    // A topic no event type matches is not checked at all.
    const loose = unique('loose');
    await queueOn(loose);
    expect((await call('POST', `/topics/${loose}/a/messages`, { payload: 'not json' })).status).toBe(201);
  });

  it('sees a catalog change in the very next publish', async () => {
    const p = unique('next');
    await queueOn(p);
    const name = enc(`${p}/#`);
    const publishBad = async () => (await call('POST', `/topics/${p}/a/messages`, { payload: '{}' })).status;
    expect(await publishBad()).toBe(201);
    expect((await call('POST', '/event-types', { name: `${p}/#`, schema: order, enforce: true })).status).toBe(201);
    expect(await publishBad()).toBe(422);
    expect((await call('PATCH', `/event-types/${name}`, { enforce: false })).status).toBe(200);
    expect(await publishBad()).toBe(201);
    expect((await call('PATCH', `/event-types/${name}`, { enforce: true, schema: { type: 'object' } })).status).toBe(200);
    expect(await publishBad()).toBe(201);
    expect((await call('PATCH', `/event-types/${name}`, { schema: { type: 'object', required: ['x'] } })).status).toBe(200);
    expect(await publishBad()).toBe(422);
    expect((await call('DELETE', `/event-types/${name}`)).status).toBe(200);
    expect(await publishBad()).toBe(201);
  });

  it('costs no DynamoDB request per warm publish: the catalog is read once per change, not per publish or message', async () => {
    const p = unique('cost');
    const plain = unique('plain');
    await queueOn(p);
    await queueOn(plain);
    // Warm: this container's bindings index is then current, so the two runs below differ only by the catalog.
    expect((await call('POST', `/topics/${plain}/warm/messages`, { payload: '{}' })).status).toBe(201);
    expect((await call('POST', '/event-types', { name: `${p}/#`, schema: order, enforce: true })).status).toBe(201);
    const catalogReads: string[] = [];
    const all = { enforced: 0, plain: 0 };
    let counting: keyof typeof all = 'enforced';
    const mw = `catalog-cost-${p}`;
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        if (JSON.stringify(args.input).includes('EVENTTYPES')) catalogReads.push(context.commandName as string);
        // Rate and fan-out counters are per minute window: left out, unrelated to the catalog.
        const input = JSON.stringify(args.input);
        if (input.includes(ns.name) && !input.includes('#RATE#')) all[counting]++;
        return next(args);
      },
      { step: 'initialize', name: mw },
    );
    const batch = (i: number) => ({ messages: Array.from({ length: 10 }, (_, j) => ({ payload: `{"id":${i * 10 + j + 1}}` })) });
    try {
      for (let i = 0; i < 10; i++) expect((await call('POST', `/topics/${p}/a/messages/batch`, batch(i))).status).toBe(201);
      counting = 'plain';
      for (let i = 0; i < 10; i++) expect((await call('POST', `/topics/${plain}/a/messages/batch`, batch(i))).status).toBe(201);
    } finally {
      ddb().middlewareStack.remove(mw);
    }
    // The first publish after the change reloads the catalog (one Query) and reads the schema it
    // compiles (one GetItem); the other nine, and their 90 messages, read nothing of the catalog.
    expect(catalogReads).toEqual(['QueryCommand', 'GetItemCommand']);
    // Totals also move with the queue's per-time-bucket counter items, so they are compared by a
    // bound that a read per publish (10 more) or per message (100 more) would break.
    expect(all.enforced - all.plain).toBeLessThan(10);
    process.stderr.write(`catalog cost: 10 batches of 10 to an enforced topic made ${all.enforced} DynamoDB requests, to a topic without event type ${all.plain}\n`);
  });
});

describe('namespaces', () => {
  it('never see each other’s event types or enforcement', async () => {
    const p = unique('iso');
    await queueOn(p);
    expect((await call('POST', '/event-types', { name: `${p}/#`, schema: order, enforce: true })).status).toBe(201);
    const other = await createTestNamespace('catiso');
    const c = client(server.baseUrl, other.key);
    expect((await c('POST', '/queues', { name: 'q', topic_filter: `${p}/#` })).status).toBe(201);
    expect((await c('POST', `/topics/${p}/a/messages`, { payload: 'not json' })).status).toBe(201);
    expect((await c('GET', `/event-types/${enc(`${p}/#`)}`)).status).toBe(404);
    expect((await c('GET', '/event-types')).body.data).toMatchObject({ event_types: [], total: 0 });
    expect((await c('DELETE', `/event-types/${enc(`${p}/#`)}`)).status).toBe(404);
    expect(Object.keys((await c('GET', '/asyncapi.json')).body.data.channels)).toEqual([]);
    expect((await call('POST', `/topics/${p}/a/messages`, { payload: 'not json' })).status).toBe(422);
  });
});
