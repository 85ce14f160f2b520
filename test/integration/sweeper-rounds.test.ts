/**
 * The sweeper framework (lambda/sweeper/tasks.ts) on DynamoDB Local: a round that is stopped
 * midway resumes where it stopped (its cursor is in the metadata table), namespaces take turns so
 * a namespace with many resources or a large backlog delays no other by more than a run, and purge
 * jobs are worked off and closed. Each test runs its own task (own cursor) over its own
 * namespaces only, so other test files' resources are never swept here.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { chunkCount, headOf, logApi, uniq } from '../fixtures/logs';
import { runResourceTask, type NamespaceSource } from '../../lambda/sweeper/tasks';
import type { ResourceTask, SweepContext } from '../../lambda/core/sweep-task';
import { sweepSubscription, subscriptionsTask } from '../../lambda/subscriptions/sweep';
import { streamsTask } from '../../lambda/streams/sweep';
import { getNamespaceCursor, getSweepCursor } from '../../lambda/sweeper/storage/sweep-cursors';
import { getStream } from '../../lambda/streams/storage/streams';
import { streamLogKey } from '../../lambda/streams/storage/stream-log';
import type { SubscriptionItem } from '../../lambda/subscriptions/storage/subscriptions';
import { PENDING_SETTLE_MS } from '../../lambda/logs/rules/log-horizon';

jest.setTimeout(60_000);

let server: TestServer;
let a: TestNamespace;
let b: TestNamespace;
let apiA: ReturnType<typeof logApi>;
let apiB: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  // Namespace names sort swa-… before swb-…: the round visits a first.
  [a, b] = await Promise.all([createTestNamespace('swa'), createTestNamespace('swb')]);
  apiA = logApi(client(server.baseUrl, a.key));
  apiB = logApi(client(server.baseUrl, b.key));
});
afterAll(() => server.close());

/** Only these namespaces, in name order. */
const only = (...names: string[]): NamespaceSource => async (_kind, after) => [...names].sort().find((n) => after === undefined || n > after);
const ctx = (): SweepContext => ({ now: Date.now(), deadline: Date.now() + 30_000, log: () => undefined });

/** A subscription task with its own cursor that records what it visits. */
function recordingTask(visited: string[], opts: { perNamespace?: number; walkLimit?: number } = {}): ResourceTask<SubscriptionItem> {
  return {
    ...subscriptionsTask,
    name: uniq('test-subscriptions'),
    perNamespace: opts.perNamespace,
    purge: undefined,
    visit: async (s, c) => {
      visited.push(s.name);
      return sweepSubscription(s, c, opts.walkLimit);
    },
  };
}

/** Subscriptions named `{prefix}{i}-…` (so in that order), each with expired messages. */
async function expiredSubscriptions(api: ReturnType<typeof logApi>, prefix: string, count: number, messagesEach = 1) {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const { name, topic } = await api.subscription({ message_ttl_seconds: 1 }, `${prefix}${i}-${uniq('x')}`);
    for (let sent = 0; sent < messagesEach; sent += 100) {
      await api.publishBatch(topic, Array.from({ length: Math.min(100, messagesEach - sent) }, (_, j) => ({ payload: `${sent + j}` })));
    }
    names.push(name);
  }
  await new Promise((r) => setTimeout(r, 1100)); // past message_ttl_seconds
  return names;
}

describe('a round stopped midway', () => {
  it('resumes after the last resource it visited, from the cursor in the metadata table', async () => {
    const names = await expiredSubscriptions(apiA, 'r', 5);
    const visited: string[] = [];
    const task = recordingTask(visited, { perNamespace: 2 });
    const source = only(a.name);

    // Stopped after one visit, as by a deadline or a crash.
    await runResourceTask(task, ctx(), { namespaces: source, maxVisits: 1 });
    expect(visited).toEqual([names[0]]);
    expect(await getNamespaceCursor(a.name, task.name)).toBe(`SUBSCRIPTION#${names[0]}`);

    // Each later run goes on where the last stopped: a namespace's turn is 2 resources per round.
    await runResourceTask(task, ctx(), { namespaces: source });
    expect(visited).toEqual(names.slice(0, 3));
    await runResourceTask(task, ctx(), { namespaces: source });
    expect(visited).toEqual(names);
    expect(await getNamespaceCursor(a.name, task.name)).toBeUndefined();
    expect((await getSweepCursor(task.name)).rounds).toBeGreaterThanOrEqual(1);
    for (const n of names) expect((await apiA.getSubscription(n)).message_count).toBe(0);
  });
});

describe('fair turns between namespaces', () => {
  it('visits a small namespace in every run while a namespace with many resources takes several', async () => {
    const many = await expiredSubscriptions(apiA, 'f', 3);
    const [one] = await expiredSubscriptions(apiB, 'g', 1);
    const visited: string[] = [];
    const task = recordingTask(visited, { perNamespace: 1 });
    const source = only(a.name, b.name);
    for (let run = 0; run < 3; run++) await runResourceTask(task, ctx(), { namespaces: source });
    expect(visited).toEqual([many[0], one, many[1], one, many[2], one]);
  });

  it('trims a small namespace in the first run while a backlog elsewhere takes several bounded visits', async () => {
    const [big] = await expiredSubscriptions(apiA, 'h', 1, 250);
    const [small] = await expiredSubscriptions(apiB, 'i', 1, 3);
    const visited: string[] = [];
    const task = recordingTask(visited, { walkLimit: 100 });
    const source = only(a.name, b.name);
    await runResourceTask(task, ctx(), { namespaces: source });
    expect((await apiB.getSubscription(small)).message_count).toBe(0);
    expect((await apiA.getSubscription(big)).message_count).toBe(150);
    await runResourceTask(task, ctx(), { namespaces: source });
    await runResourceTask(task, ctx(), { namespaces: source });
    expect((await apiA.getSubscription(big)).message_count).toBe(0);
  });
});

describe('purge jobs', () => {
  it('purges a deleted stream\'s log and records and closes the job; the recreated stream starts at 0', async () => {
    const { name, topic } = await apiA.stream({ partition_count: 3 });
    await apiA.publishBatch(topic, ['a', 'b', 'c', 'd'].map((p) => ({ payload: p, partition_key: p })));
    await apiA.read(name, { consumer_group: 'g1' });
    const old = (await getStream(a.name, name))!;
    const call = client(server.baseUrl, a.key);
    expect((await call('DELETE', `/streams/${name}`)).status).toBe(200);
    expect((await call('POST', '/streams', { name, topic_filter: topic, partition_count: 3 })).status).toBe(201);
    const fresh = await apiA.getStream(name);
    expect([fresh.earliest_offset, fresh.latest_offset, fresh.message_count, fresh.consumer_count]).toEqual([0, 0, 0, 0]);
    await apiA.publish(topic, { payload: 'new' });
    expect((await apiA.read(name)).messages.map((m) => [m.offset, m.payload])).toEqual([[0, 'new']]);

    // The old incarnation's purge, once publishes in flight at the delete are settled.
    let purged = 0;
    const task: ResourceTask = {
      ...streamsTask,
      name: uniq('test-streams'),
      visit: async () => ({}),
      purge: async (job, c) => (job.id === old.id ? (purged++, streamsTask.purge!(job, { ...c, now: Date.now() + PENDING_SETTLE_MS + 1000 })) : { done: false }),
    };
    const before = await Promise.all([0, 1, 2].map((p) => chunkCount('streamLog', streamLogKey(old.id, p))));
    expect(before.reduce((x, y) => x + y, 0)).toBeGreaterThan(0);
    await runResourceTask(task, ctx(), { namespaces: only() });
    expect(purged).toBe(1);
    expect(await Promise.all([0, 1, 2].map((p) => chunkCount('streamLog', streamLogKey(old.id, p))))).toEqual([0, 0, 0]);
    expect(await headOf(a.name, old.id)).toBeUndefined();
    await runResourceTask(task, ctx(), { namespaces: only() });
    expect(purged).toBe(1); // closed: not visited again
    expect((await apiA.read(name)).messages.map((m) => m.payload)).toEqual(['new']);
  });
});
