/**
 * A review's probes of the event catalog's promises (docs/catalog.md) through the local gateway:
 * an event type deleted and created again under the same name is judged by its new schema in a
 * warm container; bad input never answers 500.
 */
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
  ns = await createTestNamespace('catbrk');
  call = client(server.baseUrl, ns.key);
  q = queueApi(call);
});
afterAll(() => server.close());

const enc = encodeURIComponent;
const needs = (field: string) => ({ type: 'object', required: [field] });

async function queueOn(prefix: string) {
  const name = unique('q');
  expect((await call('POST', '/queues', { name, topic_filter: `${prefix}/#` })).status).toBe(201);
  return name;
}

describe('an event type deleted and created again under the same name', () => {
  it('is judged by its new schema, not by the validator the container compiled for the old one', async () => {
    const p = unique('again');
    const queue = await queueOn(p);
    const name = `${p}/x`;
    const publish = async (payload: object) => (await call('POST', `/topics/${name}/messages`, { payload: JSON.stringify(payload) })).status;
    expect((await call('POST', '/event-types', { name, schema: needs('a'), enforce: true })).status).toBe(201);
    expect(await publish({ a: 1 })).toBe(201);
    expect((await call('DELETE', `/event-types/${enc(name)}`)).status).toBe(200);
    const again = await call('POST', '/event-types', { name, schema: needs('b'), enforce: true });
    expect(again.status).toBe(201);
    expect(again.body.data.version).toBe(1);
    expect(await publish({ a: 1 })).toBe(422);
    expect(await publish({ b: 1 })).toBe(201);
    expect((await q.get(queue)).message_count).toBe(2);
  });
});
