/**
 * Per-namespace caps (docs/admin.md) against a reference model, on the local engines: random
 * rounds of concurrent creates and deletes of streams and subscriptions, some on a shared topic
 * filter, in a namespace with small caps. Invariants after every round: no kind ever holds more
 * than its cap, no filter more bindings than its cap; each create answered 201 exists and each
 * 409 LIMIT_EXCEEDED was refused for a reason the model agrees could hold at some order of the
 * round; the stored counts (admin CLI `resource-limit get`) equal the resources that exist, so a
 * delete always frees its slot. FC_SEED / FC_RUNS replay or run more.
 */
import fc from 'fast-check';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { admin } from '../fixtures/admin';

jest.setTimeout(600_000);

const seed = Number(process.env.FC_SEED ?? 2511);
const numRuns = Number(process.env.FC_RUNS ?? 4);
const CAPS = { streams: 3, subscriptions: 3, 'bindings-per-topic-filter': 4 };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function adminOut(args: string[]): Promise<string> {
  const r = await admin(args);
  expect(r.code).toBe(0);
  return r.out;
}

type Kind = 'streams' | 'subscriptions';
type Op = { op: 'create'; kind: Kind; name: number; shared: boolean } | { op: 'delete'; kind: Kind; name: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('create' as const), kind: fc.constantFrom<Kind>('streams', 'subscriptions'), name: fc.nat(5), shared: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), kind: fc.constantFrom<Kind>('streams', 'subscriptions'), name: fc.nat(5) }) },
);

it('never exceeds a cap under concurrent creates and deletes, and its counts always equal what exists', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), { minLength: 2, maxLength: 4 }), async (rounds) => {
      const ns = await createTestNamespace('rm');
      for (const [what, n] of Object.entries(CAPS)) await adminOut(['resource-limit', 'set', ns.name, what, String(n)]);
      const call = client(server.baseUrl, ns.key);
      /** What exists: kind → name → filter. */
      const exists: Record<Kind, Map<string, string>> = { streams: new Map(), subscriptions: new Map() };
      for (const round of rounds) {
        const answers = await Promise.all(
          round.map((o) =>
            o.op === 'create'
              ? call('POST', `/${o.kind}`, { name: `r${o.name}`, topic_filter: o.shared ? 'shared/#' : `own${o.kind}${o.name}/#` })
              : call('DELETE', `/${o.kind}/r${o.name}`),
          ),
        );
        // The truth after the round, read back.
        for (const kind of ['streams', 'subscriptions'] as const) {
          const list = await call('GET', `/${kind}?limit=100`);
          expect(list.status).toBe(200);
          const items = (Array.isArray(list.body.data) ? list.body.data : list.body.data.items ?? list.body.data[kind]) as { name: string; topic_filter: string }[];
          exists[kind] = new Map(items.map((i) => [i.name, i.topic_filter]));
        }
        round.forEach((o, i) => {
          const a = answers[i];
          if (o.op === 'create') {
            expect([201, 409]).toContain(a.status);
            if (a.status === 409) expect(['LIMIT_EXCEEDED', 'STREAM_ALREADY_EXISTS', 'SUBSCRIPTION_ALREADY_EXISTS']).toContain(a.body.error?.code);
          } else {
            expect([200, 404]).toContain(a.status);
          }
        });
        const shared = [...exists.streams.values(), ...exists.subscriptions.values()].filter((f) => f === 'shared/#').length;
        expect(exists.streams.size).toBeLessThanOrEqual(CAPS.streams);
        expect(exists.subscriptions.size).toBeLessThanOrEqual(CAPS.subscriptions);
        expect(shared).toBeLessThanOrEqual(CAPS['bindings-per-topic-filter']);
        const got = JSON.parse(await adminOut(['resource-limit', 'get', ns.name, '--json']));
        expect(got.counts).toMatchObject({ streams: exists.streams.size, subscriptions: exists.subscriptions.size });
      }
      // Deleting everything frees every slot: the caps can be filled again.
      for (const kind of ['streams', 'subscriptions'] as const) for (const name of exists[kind].keys()) expect((await call('DELETE', `/${kind}/${name}`)).status).toBe(200);
      const fresh = await Promise.all(Array.from({ length: CAPS.streams }, (_, i) => call('POST', '/streams', { name: `again${i}`, topic_filter: 'shared/#' })));
      expect(fresh.map((r) => r.status)).toEqual(Array(CAPS.streams).fill(201));
    }),
    { seed, numRuns },
  );
});
