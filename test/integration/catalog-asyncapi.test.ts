/**
 * `GET /asyncapi.json` (docs/catalog.md): the AsyncAPI 3.0 document generated from a namespace's
 * event catalog, through the local gateway, validated by the AsyncAPI initiative's own parser
 * (@asyncapi/parser: the specification's JSON Schema plus its Spectral rules).
 */
import { Parser, DiagnosticSeverity } from '@asyncapi/parser';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';

jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const order = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['id', 'lines'],
  properties: { id: { type: 'integer' }, lines: { type: 'array', items: { $ref: '#/$defs/line' } } },
  $defs: { line: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } } } },
};

async function parse(doc: unknown) {
  const { document, diagnostics } = await new Parser().parse(doc as never);
  return { document, errors: diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error).map((d) => `${d.path.join('.')}: ${d.message}`) };
}

describe('GET /asyncapi.json', () => {
  it('is a valid AsyncAPI 3.0 document with a channel, message, schema and examples per event type', async () => {
    const ns = await createTestNamespace('aa');
    const call = client(server.baseUrl, ns.key);
    expect((await call('POST', '/event-types', { name: 'orders/created', description: 'An order was placed.\nSent once per order.', schema: order, enforce: true, examples: ['{"id":1,"lines":[{"sku":"a","qty":2}]}'] })).status).toBe(201);
    expect((await call('POST', '/event-types', { name: 'orders/#', description: 'Everything about orders.' })).status).toBe(201);
    expect((await call('POST', '/event-types', { name: '+/deleted', schema: { type: 'object' }, examples: [{ id: 'x' }] })).status).toBe(201);
    expect((await call('POST', '/event-types', { name: 'orders/+' })).status).toBe(201);

    const res = await client(server.baseUrl, ns.keys.consume)('GET', '/asyncapi.json');
    expect(res.status).toBe(200);
    const doc = res.body.data;
    expect(doc).toMatchObject({ asyncapi: '3.0.0', info: { title: `Events of namespace ${ns.name}`, version: '4' }, defaultContentType: 'application/json' });
    expect(Object.values(doc.channels).map((c) => (c as { address: string }).address)).toEqual(['+/deleted', 'orders/#', 'orders/+', 'orders/created']);

    const { document, errors } = await parse(doc);
    expect(errors).toEqual([]);
    // The parser does judge: the same document with an AsyncAPI 2 style operation is refused.
    expect((await parse({ ...doc, operations: { bad: { action: 'publish', channel: { $ref: '#/channels/nope' } } } })).errors).not.toEqual([]);
    const created = document!.channels().all().find((c) => c.address() === 'orders/created')!;
    expect(created.description()).toBe('An order was placed.\nSent once per order.');
    const [message] = created.messages().all();
    expect(message.name()).toBe('orders/created');
    expect(message.summary()).toBe('An order was placed.');
    // The schema, its same-document reference resolved by the parser to the line schema.
    const payload = message.payload()!;
    expect(payload.required()).toEqual(['id', 'lines']);
    expect(payload.properties()!.lines.items()).toMatchObject({});
    expect((payload.properties()!.lines.items() as { properties(): Record<string, { type(): unknown }> }).properties().qty.type()).toBe('integer');
    expect(message.examples().all().map((e) => e.payload())).toEqual([{ id: 1, lines: [{ sku: 'a', qty: 2 }] }]);
    expect(document!.operations().all().map((o) => o.action())).toEqual(['send', 'send', 'send', 'send']);
  });

  it('is a valid, empty document for a namespace without event types', async () => {
    const ns = await createTestNamespace('aa0');
    const res = await client(server.baseUrl, ns.key)('GET', '/asyncapi.json');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ asyncapi: '3.0.0', channels: {}, operations: {}, info: { version: '0' } });
    expect((await parse(res.body.data)).errors).toEqual([]);
  });
});

describe('a catalog past what one Lambda response carries', () => {
  // 100 event types of a 31 KiB schema and a 31 KiB example each (the caps are 500 types of
  // 32 KiB + 32 KiB) are about 6.4 MB of JSON, over Lambda's 6 MB synchronous response
  // (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html), which API Gateway
  // answers 502. The portal's event picker asks for a page of 100.
  it('answers the page of 100 event types cut to the response budget, and the AsyncAPI document without examples, both 200', async () => {
    const big = await createTestNamespace('aabig');
    const own = client(server.baseUrl, big.key);
    const schema = { description: 'd'.repeat(31 * 1024) };
    const examples = [JSON.stringify('e'.repeat(31 * 1024))];
    for (let i = 0; i < 100; i++) expect((await own('POST', '/event-types', { name: `big/t${String(i).padStart(2, '0')}`, schema, examples })).status).toBe(201);
    const page = await own('GET', '/event-types?limit=100');
    expect([page.status, page.body.data?.total]).toEqual([200, 100]);
    const first = page.body.data.event_types.length;
    expect(first).toBeLessThan(100);
    expect(page.body.data.limit).toBe(first);
    const rest = await own('GET', `/event-types?limit=100&offset=${first}`);
    expect(rest.status).toBe(200);
    const names = [...page.body.data.event_types, ...rest.body.data.event_types].map((t: { name: string }) => t.name);
    expect(names).toEqual(Array.from({ length: 100 }, (_, i) => `big/t${String(i).padStart(2, '0')}`));

    const doc = await own('GET', '/asyncapi.json');
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.data.channels)).toHaveLength(100);
    expect(Object.keys(doc.body.data.components.schemas)).toHaveLength(100);
    expect(Object.values(doc.body.data.components.messages).filter((m) => (m as { examples?: unknown }).examples)).toEqual([]);
    expect(doc.body.data.info['x-examples-omitted']).toBe(true);
    expect(doc.body.data.info.description).toMatch(/examples .*GET \/event-types/);
  });
});

describe('a catalog whose schemas alone pass what one Lambda response carries', () => {
  // 90 schemas of 16,000 quotes in a description: 32 KB of JSON each (under the 32 KiB cap),
  // escaped twice on the way out (the proxy integration's `body` is a JSON string) 64 KB each.
  it('refuses the AsyncAPI document with 413 MESSAGE_TOO_LARGE saying to read the event types in pages', async () => {
    const big = await createTestNamespace('aaquote');
    const own = client(server.baseUrl, big.key);
    const schema = { description: '"'.repeat(16_000) };
    for (let i = 0; i < 90; i++) expect((await own('POST', '/event-types', { name: `q/t${i}`, schema })).status).toBe(201);
    const doc = await own('GET', '/asyncapi.json');
    expect([doc.status, doc.body.error?.code]).toEqual([413, 'MESSAGE_TOO_LARGE']);
    expect(doc.body.error?.message).toMatch(/even without examples.*GET \/event-types/);
  });
});
