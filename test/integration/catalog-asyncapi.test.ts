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
