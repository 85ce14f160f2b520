/**
 * Attack on "next_offset moves past gaps" and "a consumer whose committed offset lies inside a
 * gap": reads that start inside, or end at, whole gaps (lambda/logs/rules/log-gaps.ts) answer an offset past
 * them, and the count agrees with what a drain reads.
 */
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { logApi, published, streamBinding, unstorable } from '../fixtures/logs';
import type { Binding } from '../../lambda/core/storage/resources';

jest.setTimeout(180_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('gappos');
  api = client(server.baseUrl, ns.key);
  logs = logApi(api);
});
afterAll(() => server.close());

it('a read starting inside a trailing gap, or from a commit inside it, answers next_offset past the gap', async () => {
  const { name } = await logs.stream({ partition_count: 3 });
  const { binding } = await streamBinding(ns.name, name);
  const at = () => ({ namespace: ns.name, now: Date.now() });
  await appendToStreams(at(), [binding as Binding], [published('m0', Date.now())]);
  // A failed publish of three messages (the last unstorable): a whole gap over positions 1..3.
  await expect(appendToStreams(at(), [binding as Binding], [published('a', Date.now()), published('b', Date.now()), unstorable(Date.now())])).rejects.toThrow();
  const got = await logs.getStream(name);
  const mid = await logs.read(name, { consumer_group: 'mid', start_offset: 2, timeout_seconds: 1 });
  const commit = await api('POST', `/streams/${name}/offsets/commit`, { consumer_group: 'c', offset: 2 });
  const committed = await logs.read(name, { consumer_group: 'c', start_offset: undefined, timeout_seconds: 1 });
  const drain = await logs.read(name, { consumer_group: 'all' });
  const after = await logs.read(name, { consumer_group: 'after', start_offset: drain.next_offset, timeout_seconds: 1 });
  expect({
    count: got.message_count,
    mid: [mid.messages.length, mid.next_offset],
    commit: commit.status,
    committed: [committed.messages.length, committed.next_offset],
    drain: [drain.messages.map((m) => m.payload), drain.next_offset],
    after: [after.messages.length, after.next_offset],
  }).toEqual({ count: 1, mid: [0, 4], commit: 200, committed: [0, 4], drain: [['m0'], 1], after: [0, 4] });
});

it('a long poll waiting inside a trailing gap wakes for the next publish (held)', async () => {
  const { name } = await logs.stream({ partition_count: 3 });
  const { binding } = await streamBinding(ns.name, name);
  const at = () => ({ namespace: ns.name, now: Date.now() });
  await appendToStreams(at(), [binding as Binding], [published('m0', Date.now())]);
  await expect(appendToStreams(at(), [binding as Binding], [published('a', Date.now()), published('b', Date.now()), unstorable(Date.now())])).rejects.toThrow();
  const poll = logs.read(name, { consumer_group: 'poll', start_offset: 2, timeout_seconds: 10 });
  await new Promise((r) => setTimeout(r, 500));
  await appendToStreams(at(), [binding as Binding], [published('m4', Date.now())]);
  const got = await poll;
  expect({ payloads: got.messages.map((m) => m.payload), next: got.next_offset }).toEqual({ payloads: ['m4'], next: 5 });
});
