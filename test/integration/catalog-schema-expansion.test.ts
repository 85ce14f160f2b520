/**
 * A schema whose references multiply at one place of the payload is refused when written: a
 * ~2 KB `$defs` chain where each definition refers to the one below twice made Ajv validate a
 * 3-byte payload 2^34 times, holding the publish for minutes. 29 s is API Gateway's integration
 * timeout for a REST API (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { unique, type Call } from '../fixtures/queues';

const API_GATEWAY_TIMEOUT_MS = 29_000;
jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let call: Call;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('catexp');
  call = client(server.baseUrl, ns.key);
});
afterAll(() => server.close());

async function queueOn(prefix: string) {
  expect((await call('POST', '/queues', { name: unique('q'), topic_filter: `${prefix}/#` })).status).toBe(201);
}

/** Creates an enforcing event type; a schema refused on `schema` is a fix too (the test then ends). */
async function enforced(name: string, schema: object): Promise<boolean> {
  const res = await call('POST', '/event-types', { name, schema, enforce: true });
  if (res.status === 422) {
    expect((res.body.error?.details.fields as { field: string }[])[0].field).toBe('schema');
    return false;
  }
  expect(res.status).toBe(201);
  return true;
}

describe('a schema whose references multiply at one place of the payload', () => {
  it('a doubling $ref graph answers a publish of "x" within API Gateway\'s timeout', async () => {
    const p = unique('refs');
    await queueOn(p);
    const depth = 34;
    const $defs: Record<string, object> = { d0: { type: 'string' } };
    for (let i = 1; i <= depth; i++) $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
    if (!(await enforced(`${p}/x`, { $ref: `#/$defs/d${depth}`, $defs }))) return;
    const res = await call('POST', `/topics/${p}/x/messages`, { payload: '"x"' });
    expect([201, 422]).toContain(res.status);
  }, API_GATEWAY_TIMEOUT_MS);

  it('is refused at create with 422 on schema, naming the place and the bound', async () => {
    const $defs: Record<string, object> = { d0: { type: 'string' } };
    for (let i = 1; i <= 20; i++) $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
    const res = await call('POST', '/event-types', { name: `${unique('refs')}/x`, schema: { $ref: '#/$defs/d20', $defs } });
    expect(res.status).toBe(422);
    expect(res.body.error?.code).toBe('VALIDATION_ERROR');
    const [f] = res.body.error?.details.fields as { field: string; message: string }[];
    expect(f.field).toBe('schema');
    expect(f.message).toMatch(/10000|10,000/);
  });

  it('a $dynamicRef to its own anchor is refused at create, not at every publish', async () => {
    const res = await call('POST', '/event-types', { name: `${unique('dyn')}/x`, schema: { $dynamicRef: '#meta', $dynamicAnchor: 'meta' }, enforce: true });
    expect(res.status).toBe(422);
    const [f] = res.body.error?.details.fields as { field: string; message: string }[];
    expect(f.field).toBe('schema');
    expect(f.message).toMatch(/refers to itself/);
  });

  it('a recursive schema that descends into the payload is accepted and enforced', async () => {
    const p = unique('tree');
    await queueOn(p);
    const node = { type: 'object', required: ['name'], properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } };
    const tree = { $ref: '#/$defs/node', $defs: { node } };
    expect(await enforced(`${p}/x`, tree)).toBe(true);
    const ok = { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] };
    expect((await call('POST', `/topics/${p}/x/messages`, { payload: JSON.stringify(ok) })).status).toBe(201);
    const bad = { name: 'a', children: [{ name: 'b', children: [{}] }] };
    expect((await call('POST', `/topics/${p}/x/messages`, { payload: JSON.stringify(bad) })).status).toBe(422);
  });
});
