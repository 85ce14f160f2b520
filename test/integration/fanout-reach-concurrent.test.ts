/**
 * The per-publish reach cap (`bindings-per-publish`, docs/security.md) under creates at once: the
 * reach is judged on the filter counts as of a bindings version, and the create's transaction
 * holds to that version, so creates on different filters that match one topic cannot each see
 * room and all commit. One after another, the fourth is refused; at once, exactly as many as the
 * cap allows pass and the others answer 409.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { setNamespaceCap } from '../../lambda/core/storage/resource-limits';
import { matchBindings } from '../../lambda/publishing/binding-index';

jest.setTimeout(90_000);

const CAP = 3;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

async function cappedNamespace() {
  const ns = await createTestNamespace('fanrace');
  await setNamespaceCap(ns.name, 'bindings-per-publish', CAP);
  return { name: ns.name, call: client(server.baseUrl, ns.key) };
}

const bodies = {
  webhooks: (topic_filter: string) => ({ name: unique('wh'), url: 'http://127.0.0.1:9/hook', topic_filter, enabled: false }),
  queues: (topic_filter: string) => ({ name: unique('q'), topic_filter }),
};

it.each(Object.keys(bodies) as (keyof typeof bodies)[])('%s created at once on filters that match one topic never let it reach more than bindings-per-publish', async (kind) => {
  const ns = await cappedNamespace();
  const root = unique('t');
  const filters = ['#', `${root}/#`, `${root}/+`, '+/x', '+/+', `${root}/x`];
  const answers = await Promise.all(filters.map((f) => ns.call('POST', `/${kind}`, bodies[kind](f))));
  const statuses = answers.map((a) => a.status).sort();
  const refusals = answers.filter((a) => a.status === 409).map((a) => a.body.error?.code);
  // The bindings one publish to `<root>/x` reaches, as publish matches them.
  const reach = (await matchBindings(ns.name, `${root}/x`)).length;
  expect({ statuses, refusals, reach }).toEqual({ statuses: [201, 201, 201, 409, 409, 409], refusals: Array(3).fill('LIMIT_EXCEEDED'), reach: CAP });
});

it('the same creates one after another: the fourth and later are refused 409', async () => {
  const ns = await cappedNamespace();
  const statuses: number[] = [];
  for (const f of ['#', 't/#', 't/+', '+/x', '+/+', 't/x']) statuses.push((await ns.call('POST', '/webhooks', bodies.webhooks(f))).status);
  expect(statuses).toEqual([201, 201, 201, 409, 409, 409]);
});

it('far from the cap, creates at once on overlapping filters all pass: they do not wait on each other', async () => {
  const ns = await createTestNamespace('fanrace');
  const call = client(server.baseUrl, ns.key);
  const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => call('POST', '/webhooks', bodies.webhooks(i % 2 ? '#' : `t/${i}`))));
  expect(answers.map((a) => a.status)).toEqual(Array(16).fill(201));
});
