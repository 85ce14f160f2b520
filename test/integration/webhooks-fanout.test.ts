/**
 * Hook fan-out and fair delivery (docs/design/0019-fair-delivery-between-namespaces.md): hook
 * publishes count against the namespace's publish rate limit (refused ones are recorded as hook
 * failures), and one namespace's delivery backlog holds at most its share of the delivery capacity,
 * so others' deliveries go on.
 *
 * Workload: the hook loop is 10 webhooks that all match every hook message, under a publish limit
 * of 10 a minute: the first publish's 10 deliveries spend the other 9 publishes and are refused
 * once, the next 90 deliveries are all refused, so at most 100 deliveries show both sides of the
 * budget (a loop without it would be 10 + 100 + ... deliveries, past the cap at once); its settle
 * reads the ten statuses once a second. The backlog is 12 jobs to an 800 ms receiver at a share
 * of 3: four rounds of the share, enough to see the rest put back and delivered later.
 */
import { randomUUID } from 'node:crypto';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { receiverPool, until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { startLocalWebhooks, type LocalWebhooks } from '../../local/webhooks';
import { resetConfig } from '../../lambda/core/config';
import { peekCount } from '../../lambda/limits/storage/rate-limits';
import { windowOf } from '../../lambda/core/rules/rate-limits';
import { sleep } from '../../lambda/core/rules/clock';

jest.setTimeout(90_000);

/** The share of the backlog test: 3 deliveries of one namespace in flight at once. */
const SHARE = 3;

let server: TestServer;
let local: LocalWebhooks;
const receivers = receiverPool();

beforeAll(async () => {
  server = await startTestServer();
  local = await startLocalWebhooks({ queueName: `deliveries-${randomUUID()}` });
});
afterAll(async () => {
  await receivers.closeAll();
  await local.stop();
  await server.close();
});
afterEach(() => {
  delete process.env.MSG_WEBHOOK_NAMESPACE_SHARE;
  resetConfig();
});

/** Waits for the next minute when this one is nearly over, so the test runs in one window. */
async function roomInWindow(seconds: number) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await sleep(left + 50);
}

/** Resolves once `count()` has not changed for `quietMs`, or as soon as it passes `cap`. */
async function settled(count: () => Promise<number>, quietMs: number, cap: number, timeoutMs = 60_000) {
  let last = -1;
  let since = Date.now();
  await until(async () => {
    const n = await count();
    if (n > cap) return true;
    if (n !== last) {
      last = n;
      since = Date.now();
    }
    return Date.now() - since >= quietMs;
  }, timeoutMs, 'the deliveries to settle');
}

describe('hook publishes', () => {
  it('keep a hook loop of 10 webhooks within the namespace publish limit, recording the refused hooks', async () => {
    const LIMIT = 10;
    const ns = await createTestNamespace('wfo', { publish: LIMIT, consume: 1000, management: 1000 });
    const call = client(server.baseUrl, ns.key);
    await roomInWindow(30);
    const firstWindow = windowOf(Date.now()).start;
    const P = unique('loop');
    const recv = await receivers.start();
    // Every webhook matches every hook message: W + W^2 + ... + W^5 deliveries without a budget.
    const hooks: { name: string }[] = [];
    for (let i = 0; i < 10; i++) hooks.push(await createWebhook(call, { url: recv.url, topic_filter: `${P}/#`, retry_count: 0, on_success: { topic: `${P}/next`, payload: 'again' } }));
    expect((await call('POST', `/topics/${P}/start/messages`, { payload: 'go' })).status).toBe(201);

    const statusesNow = () => Promise.all(hooks.map(async (w) => (await call('GET', `/webhooks/${w.name}/status`)).body.data));
    // Settled: every request the receiver got is counted (its hook ran), and nothing new for 6 s:
    // longer than a job put back over its namespace's share waits (2 to 5 s, docs/webhooks.md), so
    // a quiet spell is not a pause of the loop (a loaded CI run saw 8 more requests after 3 s).
    // The ten statuses are read at most once a second (not at every 50 ms poll: ten calls each, a
    // quarter of the case's CPU): a change is seen up to a second late, so the quiet is never shorter.
    let read = { at: 0, delivered: 0 };
    await settled(async () => {
      if (Date.now() - read.at >= 1000) read = { at: Date.now(), delivered: (await statusesNow()).reduce((n, s) => n + s.success_count, 0) };
      // Not yet all counted: a value that keeps changing, so this never counts as quiet.
      return read.delivered === recv.requests.length ? read.delivered : -Date.now();
    }, 6000, 3 * 10 * LIMIT);
    // One publish through the API and the hooks' publishes share each window's budget. A loaded
    // machine may carry the loop into the next minute, which has a budget of its own.
    const windows: number[] = [];
    for (let w = firstWindow; w <= windowOf(Date.now()).start; w += 60) windows.push(w);
    const counted = await Promise.all(windows.map((start) => peekCount({ namespace: ns.name, category: 'publish', window: { start, reset: start + 60 } })));
    for (const n of counted) expect(n).toBeLessThanOrEqual(LIMIT);
    const publishes = counted.reduce((a, b) => a + b, 0);
    // Each publish reaches the 10 webhooks once.
    expect(recv.requests.length).toBeLessThanOrEqual(10 * publishes);
    const statuses = await statusesNow();
    const delivered = statuses.reduce((n, s) => n + s.success_count, 0);
    const refused = statuses.reduce((n, s) => n + s.hook_failure_count, 0);
    expect(delivered).toBe(recv.requests.length);
    // Every delivery below the hop limit ran its hook: published within the budget, or refused.
    expect(refused).toBeGreaterThan(0);
    expect(delivered - refused).toBeLessThanOrEqual(publishes - 1);
    expect(statuses.find((s) => s.hook_failure_count > 0)?.last_hook_error).toMatch(/publish rate limit/);
  });
});

describe('a namespace with a delivery backlog', () => {
  it('has at most its share of deliveries in flight, and another namespace is delivered meanwhile', async () => {
    process.env.MSG_WEBHOOK_NAMESPACE_SHARE = String(SHARE);
    resetConfig();
    const busy = client(server.baseUrl, (await createTestNamespace('wfa')).key);
    const other = client(server.baseUrl, (await createTestNamespace('wfb')).key);
    const slow = await receivers.start({ delayMs: 800 });
    const fast = await receivers.start();
    const t1 = unique('t');
    const t2 = unique('t');
    await createWebhook(busy, { url: slow.url, topic_filter: t1 });
    await createWebhook(other, { url: fast.url, topic_filter: t2 });

    const res = await busy('POST', `/topics/${t1}/messages/batch`, { messages: Array.from({ length: 12 }, (_, i) => ({ payload: `m${i}` })) });
    expect(res.status).toBe(201);
    await slow.waitFor(1, 10_000);
    const t0 = Date.now();
    expect((await other('POST', `/topics/${t2}/messages`, { payload: 'not starved' })).status).toBe(201);
    await fast.waitFor(1, 5_000);
    expect(Date.now() - t0).toBeLessThan(3_000);

    // The deferred jobs come back later: every message is delivered, never more than SHARE at once.
    await slow.waitFor(12, 60_000);
    expect(slow.maxConcurrent()).toBeLessThanOrEqual(SHARE);
    expect(new Set(slow.requests.map((r) => JSON.parse(r.body.toString()).message_id))).toEqual(new Set(res.body.data.message_ids));
  });
});
