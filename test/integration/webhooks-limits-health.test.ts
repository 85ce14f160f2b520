/**
 * Per-webhook delivery limits, endpoint health and a truthful status (docs/webhooks.md),
 * against the local runtime with real HTTP receivers: the rate held, in-flight never above its
 * max, held-back deliveries not counted as attempts; a failing endpoint probed one request at a
 * time, disabled after its run of failures with an event on `webhooks/disabled`, deliveries while
 * disabled recorded failed, and re-enable plus bulk replay losing nothing.
 */
import { CIRCUIT_TRIP_ATTEMPTS } from '../../lambda/webhooks/rules/endpoint-health';
import { createServer, type Server } from 'node:http';
import { client } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { injectDynamoFault } from '../fixtures/dynamo-calls';
import { getQueue } from '../../lambda/queues/storage/queues';
import { setNamespaceHealthDefault } from '../../lambda/webhooks/storage/webhook-health';
import { sweepWebhooks } from '../../lambda/webhooks/sweep';

jest.setTimeout(120_000);

const bed = webhookTestbed('wlim');
const call: ReturnType<typeof client> = (...args) => bed.call(...args);

const status = async (name: string) => (await call('GET', `/webhooks/${name}/status`)).body.data;
const deliveries = async (name: string) => (await call('GET', `/webhooks/${name}/deliveries?limit=100`)).body.data.deliveries as { message_id: string; attempt: number; outcome: string; error: string | null; final: boolean }[];

/** A receiver whose answer the test switches: counts requests and the message ids it accepted. */
async function switchableReceiver() {
  let answer = 500;
  const requests: { id: string; at: number; status: number }[] = [];
  let open = 0;
  let maxOpen = 0;
  const srv: Server = createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    req.resume();
    req.on('end', () => {
      const status = answer;
      requests.push({ id: String(req.headers['webhook-id']), at: Date.now(), status });
      setTimeout(() => {
        open--;
        res.writeHead(status).end(status < 300 ? 'ok' : 'down');
      }, 100);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(srv.address() as { port: number }).port}/hook`,
    requests,
    maxConcurrent: () => maxOpen,
    set: (s: number) => (answer = s),
    close: () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }),
  };
}

describe('webhook limit fields', () => {
  it('validates rate_limit and max_in_flight on create, PUT and PATCH, and shows them on get and list', async () => {
    const base = { url: 'https://hooks.example.com/in', topic_filter: unique('t') };
    for (const [field, value] of [['rate_limit', 0], ['rate_limit', 10_001], ['max_in_flight', 0], ['max_in_flight', 1001], ['failure_threshold', 0], ['disable_after', 59]] as const) {
      const r = await call('POST', '/webhooks', { ...base, name: unique('w'), [field]: value });
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.body.error)).toContain(field);
    }
    const typed = await call('POST', '/webhooks', { ...base, name: unique('w'), rate_limit: 'fast' });
    expect(typed.status).toBe(400);
    expect(JSON.stringify(typed.body.error)).toContain('rate_limit');

    const w = await createWebhook(call, { ...base, rate_limit: 10_000, max_in_flight: 1000 });
    const got = (await call('GET', `/webhooks/${w.name}`)).body.data;
    expect(got).toMatchObject({ rate_limit: 10_000, max_in_flight: 1000, status: 'active', disabled_reason: null, disabled_at: null, failure_threshold: 100, disable_after: 432000 });
    const listed = (await call('GET', '/webhooks?limit=100')).body.data.webhooks.find((x: { name: string }) => x.name === w.name);
    expect(listed).toMatchObject({ rate_limit: 10_000, max_in_flight: 1000 });
    const patched = await call('PATCH', `/webhooks/${w.name}`, { rate_limit: 3, max_in_flight: null });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ rate_limit: 3, max_in_flight: null });
    expect((await call('PATCH', `/webhooks/${w.name}`, { max_in_flight: 5000 })).status).toBe(422);
    const put = await call('PUT', `/webhooks/${w.name}`, { ...base, max_in_flight: 7 });
    expect(put.body.data).toMatchObject({ rate_limit: null, max_in_flight: 7 });
    const off = await call('PATCH', `/webhooks/${w.name}`, { enabled: false });
    expect(off.body.data).toMatchObject({ status: 'disabled', disabled_reason: 'user', disabled_at: null });
  });
});

describe('delivery limits', () => {
  it('holds rate_limit (5/s: never above 1.1 in any 10 s), each message POSTed once and counted one attempt', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(call, { url: recv.url, topic_filter: topic, rate_limit: 5 });
    const q = queueApi(call);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(...(await q.publishBatch(topic, Array.from({ length: 25 }, (_, j) => ({ payload: `m${i * 25 + j}` })))).message_ids);
    await recv.waitFor(ids.length, 90_000);
    const at = recv.requests.map((r) => r.at).sort((a, b) => a - b);
    // From the fifth request on: the first second's start depends on when the poller came by.
    const t0 = at[4];
    const inWindow = at.filter((t) => t >= t0 && t < t0 + 10_000).length;
    const measured = inWindow / 10;
    const hist = new Map<number, number>();
    for (const t of at) hist.set(Math.floor((t - t0) / 1000), (hist.get(Math.floor((t - t0) / 1000)) ?? 0) + 1);
    console.log(`rate_limit 5: ${measured}/s over 10 s; per second from the first: ${[...hist.values()].join(' ')}`);
    // Never above the limit, in any 10 s from the fifth request on. How close below it is the
    // machine's: a job that wakes after its slot never uses that slot (that would be a burst), so
    // where the cores are shared by a dozen processes slots go by (1.0 of the limit alone, 0.72 and
    // 0.78 in two CI runs, 0.22 in one whose load average was 22). The 0.9-1.1 promise is measured
    // by `npm run bench -- --only webhooks` over 30 s on a machine of its own (docs/performance.md).
    const busiest = Math.max(...at.slice(4).map((s0) => at.filter((t) => t >= s0 && t < s0 + 10_000).length)) / 10;
    expect(busiest / 5).toBeLessThanOrEqual(1.1);
    const got = recv.requests.map((r) => String(r.headers['webhook-id'])).sort();
    expect(got).toEqual([...ids].sort());
    const s = await until(async () => { const x = await status(w.name); return x.success_count === ids.length && x; }, 20_000, 'all counted');
    expect(s.failure_count).toBe(0);
    const log = await until(async () => { const d = await deliveries(w.name); return d.length >= ids.length && d; }, 20_000, 'the log');
    expect(log.every((d) => d.attempt === 1 && d.outcome === 'succeeded')).toBe(true);
    expect(log).toHaveLength(ids.length);
  });

  it('never has more than max_in_flight requests open, and holds back without attempts', async () => {
    const recv = await bed.receivers.start({ delayMs: 400 });
    const topic = unique('t');
    const w = await createWebhook(call, { url: recv.url, topic_filter: topic, max_in_flight: 2, timeout: 5 });
    const ids = (await queueApi(call).publishBatch(topic, Array.from({ length: 14 }, (_, j) => ({ payload: `m${j}` })))).message_ids;
    await recv.waitFor(ids.length, 60_000);
    expect(recv.maxConcurrent()).toBeLessThanOrEqual(2);
    expect(recv.maxConcurrent()).toBe(2);
    expect(recv.requests).toHaveLength(ids.length);
    const s = await until(async () => { const x = await status(w.name); return x.success_count === ids.length && x; }, 20_000, 'all counted');
    expect(s.failure_count).toBe(0);
    const log = await until(async () => { const d = await deliveries(w.name); return d.length >= ids.length && d; }, 20_000, 'the log');
    expect(log.every((d) => d.attempt === 1)).toBe(true);
  });
});

describe('endpoint health', () => {
  it('probes a failing endpoint one request at a time, then closes the circuit on success', async () => {
    const recv = await switchableReceiver();
    try {
      const topic = unique('t');
      const w = await createWebhook(call, { url: recv.url, topic_filter: topic, retry_count: 0, timeout: 2 });
      const q = queueApi(call);
      // A run of failed attempts opens the circuit (one transient failure holds nothing back).
      for (let i = 0; i < CIRCUIT_TRIP_ATTEMPTS; i++) {
        await q.publish(topic, { payload: `first-${i}` });
        await until(async () => (await status(w.name)).failure_count > i, 20_000, `failed delivery ${i + 1}`); // one at a time: the probe phase counts concurrency
      }
      await until(async () => (await status(w.name)).status === 'failing', 20_000, 'failing');
      expect((await call('GET', `/webhooks/${w.name}`)).body.data).toMatchObject({ status: 'failing', disabled_reason: null });
      const before = recv.requests.length;
      await q.publishBatch(topic, Array.from({ length: 8 }, (_, j) => ({ payload: `m${j}` })));
      // While failing, the 8 queued deliveries do not all hit the endpoint: probes at least ~1 s apart.
      await until(async () => recv.requests.length >= before + 2, 20_000, 'two probes');
      const probes = recv.requests.slice(before, before + 2);
      expect(probes[1].at - probes[0].at).toBeGreaterThanOrEqual(900);
      expect(recv.maxConcurrent()).toBe(1);
      recv.set(200);
      await until(async () => (await status(w.name)).status === 'active', 30_000, 'active again');
      const s = await until(async () => { const x = await status(w.name); return x.success_count + x.failure_count === CIRCUIT_TRIP_ATTEMPTS + 8 && x; }, 30_000, 'all ended');
      expect(s.success_count).toBeGreaterThan(0);
    } finally {
      await recv.close();
    }
  });

  it('disables after failure_threshold failed deliveries, announces it, records later deliveries failed, and re-enable plus replay loses nothing', async () => {
    const recv = await switchableReceiver();
    try {
      const topic = unique('t');
      const q = queueApi(call);
      const alerts = unique('alerts');
      await q.create({ name: alerts, topic_filter: 'webhooks/disabled' });
      const w = await createWebhook(call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1, timeout: 2, failure_threshold: 2 });
      const since = new Date(Date.now() - 1000).toISOString();
      const first = (await q.publishBatch(topic, Array.from({ length: 4 }, (_, j) => ({ payload: `m${j}` })))).message_ids;
      const view = await until(async () => { const v = (await call('GET', `/webhooks/${w.name}`)).body.data; return v.status === 'disabled' && v; }, 60_000, 'disabled by health');
      expect(view.disabled_reason).toBe('health');
      console.log(`dead endpoint (4 deliveries at once, retry_count 1, failure_threshold 2): ${recv.requests.length} requests until disabled`);
      expect(Date.parse(view.disabled_at)).toBeGreaterThan(Date.parse(since));
      expect((await status(w.name))).toMatchObject({ status: 'disabled', disabled_reason: 'health' });
      const [event] = await until(async () => { const m = await q.consume(alerts, { max_messages: 10 }); return m.length > 0 && m; }, 20_000, 'the disabled event');
      const disabled = JSON.parse(event.payload);
      expect(disabled).toMatchObject({ type: 'webhook.disabled', webhook: w.name, disabled_reason: 'health' });
      // The counts when it was disabled: 2 deliveries that ended in failure, or (judged at the open
      // circuit) the 2 × (1 + retry_count) failed attempts they would have made.
      expect(disabled.failures >= 2 || disabled.failed_attempts >= 4).toBe(true);
      expect(disabled.failed_attempts).toBeGreaterThanOrEqual(2);
      // Every delivery of the first four ends (failed), and no request is made while disabled.
      await until(async () => (await status(w.name)).failure_count === first.length, 30_000, 'the first deliveries ended');
      const madeBefore = recv.requests.length;
      // With retry_count 1 and a threshold of 2: the 4 first attempts, and probes one at a time after.
      expect(madeBefore).toBeLessThanOrEqual(first.length * 2);
      const later = (await q.publishBatch(topic, [{ payload: 'late-1' }, { payload: 'late-2' }])).message_ids;
      await until(async () => (await status(w.name)).failure_count === first.length + later.length, 30_000, 'later deliveries recorded failed');
      expect(recv.requests.length).toBe(madeBefore);
      const stopped = (await deliveries(w.name)).filter((d) => later.includes(d.message_id));
      expect(stopped.every((d) => d.final && d.error?.includes('disabled by endpoint health'))).toBe(true);

      recv.set(200);
      const on = await call('PATCH', `/webhooks/${w.name}`, { enabled: true });
      expect(on.body.data).toMatchObject({ status: 'active', disabled_reason: null, disabled_at: null });
      const all = [...first, ...later];
      const delivered = () => all.every((id) => recv.requests.some((r) => r.id === id && r.status === 200));
      // The delivery log's index is read eventually consistent (docs/aws-parity.md): replay again
      // until every message went (a message already queued is not queued twice).
      await until(async () => {
        let next: string | null = since;
        while (next) {
          const r: { status: number; body: { data: { next_since: string | null } } } = await call('POST', `/webhooks/${w.name}/replay`, { since: next, status: 'failed' });
          expect(r.status).toBe(200);
          next = r.body.data.next_since;
        }
        await until(async () => delivered(), 5_000, 'replayed').catch(() => undefined);
        return delivered();
      }, 60_000, 'every message delivered after replay');
      // Each delivered exactly once with a success.
      for (const id of all) expect(recv.requests.filter((r) => r.id === id && r.status === 200)).toHaveLength(1);
    } finally {
      await recv.close();
    }
  });
  it('publishes the disabled event in the delivery path when its first publish fails, once, without waiting for the sweeper', async () => {
    // A namespace of its own: its alert queue hears only this webhook (a webhook of an earlier test
    // whose receiver closed may still be disabled, and announced, in the file's namespace).
    const ns = await createTestNamespace('wlime');
    const own = client(bed.server.baseUrl, ns.key);
    const recv = await switchableReceiver();
    const q = queueApi(own);
    const alerts = unique('alerts');
    await q.create({ name: alerts, topic_filter: 'webhooks/disabled' });
    const alertsId = (await getQueue(ns.name, alerts))!.id;
    // The first publish to the alert queue fails (its first write, after the SDK's own retries).
    const f = injectDynamoFault({ when: (c) => /Update/.test(c.command) && JSON.stringify(c.input).includes(alertsId), mode: 'before', times: 1, name: 'ServiceUnavailable' });
    f.arm();
    try {
      const topic = unique('t');
      const w = await createWebhook(own, { url: recv.url, topic_filter: topic, retry_count: 0, timeout: 2, failure_threshold: 1 });
      await q.publish(topic, { payload: 'dead' });
      await until(async () => (await own('GET', `/webhooks/${w.name}`)).body.data.status === 'disabled', 30_000, 'disabled by health');
      // Arrives within seconds (the sweeper would publish it a minute or more later): no sweep runs here.
      const [event] = await until(async () => { const m = await q.consume(alerts, { max_messages: 10, visibility_timeout_seconds: 60 }); return m.length > 0 && m; }, 10_000, 'the disabled event');
      expect(f.hits).toHaveLength(1);
      expect(JSON.parse(event.payload)).toMatchObject({ type: 'webhook.disabled', webhook: w.name, disabled_reason: 'health', failures: 1 });
      // Once: nothing is left pending for the sweeper, and no second copy.
      await sweepWebhooks(Date.now() + 60_000);
      expect(await q.consume(alerts, { max_messages: 10, visibility_timeout_seconds: 30 })).toEqual([]);
    } finally {
      f.stop();
      await recv.close();
    }
  });
  it('does not lose the disabled event when its publishes in the delivery path all fail: the sweeper publishes it later, once', async () => {
    // A namespace of its own: its alert queue hears only this webhook (a webhook of an earlier test
    // whose receiver closed may still be disabled, and announced, in the file's namespace).
    const ns = await createTestNamespace('wlime');
    const own = client(bed.server.baseUrl, ns.key);
    const recv = await switchableReceiver();
    const q = queueApi(own);
    const alerts = unique('alerts');
    await q.create({ name: alerts, topic_filter: 'webhooks/disabled' });
    const alertsId = (await getQueue(ns.name, alerts))!.id;
    // The alert queue's room counter (the first write of a publish to it) fails while armed.
    const f = injectDynamoFault({ when: (c) => /Update/.test(c.command) && JSON.stringify(c.input).includes(alertsId), mode: 'before', times: Number.POSITIVE_INFINITY, name: 'ServiceUnavailable' });
    f.arm();
    try {
      const topic = unique('t');
      const w = await createWebhook(own, { url: recv.url, topic_filter: topic, retry_count: 0, timeout: 2, failure_threshold: 1 });
      await q.publish(topic, { payload: 'dead' });
      const view = await until(async () => { const v = (await own('GET', `/webhooks/${w.name}`)).body.data; return v.status === 'disabled' && v; }, 30_000, 'disabled by health');
      expect(view.disabled_reason).toBe('health');
      // The delivery path tries the publish 4 times (endpoint-limits.ts DISABLED_EVENT_RETRIES); all fail.
      await until(async () => f.hits.length >= 4, 10_000, 'the event publish tried 4 times and failed');
      await new Promise((r) => setTimeout(r, 200));
      expect(f.hits).toHaveLength(4);
      expect(await q.consume(alerts, { max_messages: 10 })).toEqual([]);
      f.stop();
      // The sweeper's next run (the local runtime and the stack run it every minute).
      await sweepWebhooks(Date.now() + 60_000);
      const [event] = await until(async () => { const m = await q.consume(alerts, { max_messages: 10, visibility_timeout_seconds: 60 }); return m.length > 0 && m; }, 10_000, 'the disabled event after the sweep');
      expect(JSON.parse(event.payload)).toMatchObject({ type: 'webhook.disabled', webhook: w.name, disabled_reason: 'health', failures: 1 });
      // Published once: a second sweep has nothing left to publish.
      await sweepWebhooks(Date.now() + 120_000);
      expect(await q.consume(alerts, { max_messages: 10, visibility_timeout_seconds: 30 })).toEqual([]);
    } finally {
      f.stop();
      await recv.close();
    }
  });
});

describe('namespace defaults of the health thresholds', () => {
  // Set in storage, as the admin CLI does (test/integration/webhooks-health-admin.test.ts runs the
  // CLI itself: it resets the process's AWS clients, which this file's local delivery uses).
  it('applies a namespace default to webhooks that set none, shows where each value comes from, and disables by it', async () => {
    const ns = await createTestNamespace('wlimd');
    const own = client(bed.server.baseUrl, ns.key);
    expect(await setNamespaceHealthDefault(ns.name, 'failure_threshold', 1)).toBe(true);
    const recv = await switchableReceiver();
    try {
      const topic = unique('t');
      const created = await own('POST', '/webhooks', { name: unique('w'), url: recv.url, topic_filter: topic, retry_count: 0, timeout: 2 });
      expect(created.status).toBe(201);
      const inherits = created.body.data as { name: string };
      const keeps = await createWebhook(own, { url: recv.url, topic_filter: unique('t'), retry_count: 0, failure_threshold: 7, disable_after: 600 });
      expect(inherits).toMatchObject({ failure_threshold: 1, failure_threshold_source: 'namespace', disable_after: 432000, disable_after_source: 'default' });
      expect((await own('GET', `/webhooks/${inherits.name}`)).body.data).toMatchObject({ failure_threshold: 1, failure_threshold_source: 'namespace', disable_after_source: 'default' });
      expect((await own('GET', `/webhooks/${keeps.name}`)).body.data).toMatchObject({ failure_threshold: 7, failure_threshold_source: 'webhook', disable_after: 600, disable_after_source: 'webhook' });
      const listed = (await own('GET', '/webhooks?limit=100')).body.data.webhooks as { name: string }[];
      expect(listed.find((x) => x.name === inherits.name)).toMatchObject({ failure_threshold: 1, failure_threshold_source: 'namespace' });
      expect(listed.find((x) => x.name === keeps.name)).toMatchObject({ failure_threshold: 7, failure_threshold_source: 'webhook' });
      // Another namespace is not affected.
      expect((await call('POST', '/webhooks', { name: unique('w'), url: 'https://hooks.example.com/in', topic_filter: unique('t') })).body.data).toMatchObject({ failure_threshold: 100, failure_threshold_source: 'default' });

      // One delivery ending in failure disables the webhook that inherits a threshold of 1.
      expect((await own('POST', `/topics/${topic}/messages`, { payload: 'dead' })).status).toBe(201);
      const view = await until(async () => { const v = (await own('GET', `/webhooks/${inherits.name}`)).body.data; return v.status === 'disabled' && v; }, 30_000, 'disabled by the namespace threshold');
      expect(view.disabled_reason).toBe('health');
      expect(recv.requests).toHaveLength(1);
      // Removed: back to the service's default.
      expect(await setNamespaceHealthDefault(ns.name, 'failure_threshold', null)).toBe(true);
      expect((await own('GET', `/webhooks/${keeps.name}`)).body.data).toMatchObject({ failure_threshold: 7, failure_threshold_source: 'webhook' });
      expect((await own('GET', `/webhooks/${inherits.name}`)).body.data).toMatchObject({ failure_threshold: 100, failure_threshold_source: 'default' });
    } finally {
      await recv.close();
    }
  });
});
