/**
 * Edges of endpoint health in the current delivery path, each against the local runtime with real
 * receivers: what re-enables a webhook health disabled, a success that ends the failing run, a
 * disable judged on a run a re-enable ended meanwhile, one
 * pending `webhooks/disabled` event per disable, and a replay copy of every failed delivery.
 */
import { createServer, type Server } from 'node:http';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { client } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { injectDynamoFault, slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { getQueue } from '../../lambda/queues/storage/queues';
import { sweepWebhooks } from '../../lambda/webhooks/sweep';
import { CIRCUIT_TRIP_ATTEMPTS } from '../../lambda/webhooks/rules/endpoint-health';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { openCircuit, probeEnded } from '../../lambda/webhooks/storage/webhook-health';
import { metaKeys } from '../../lambda/core/storage/keys';

jest.setTimeout(90_000);

const bed = webhookTestbed('wedge');

const view = async (name: string) => (await bed.call('GET', `/webhooks/${name}`)).body.data;
const status = async (name: string) => (await bed.call('GET', `/webhooks/${name}/status`)).body.data;

/** A webhook health disabled: its endpoint answers 500 and one failed delivery is its threshold. */
async function healthDisabled() {
  const recv = await bed.receivers.start({ status: 500 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0, failure_threshold: 1 });
  expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'fails' })).status).toBe(201);
  await until(async () => (await view(w.name)).disabled_reason === 'health', 30_000, 'disabled by health');
  return { w, recv, topic };
}

describe('re-enabling a webhook health disabled', () => {
  it('keeps it disabled when a PUT writes back the enabled: true that GET showed', async () => {
    const { w, recv, topic } = await healthDisabled();
    const shown = await view(w.name);
    expect(shown).toMatchObject({ enabled: true, status: 'disabled', disabled_reason: 'health' });
    // What a client that read the webhook writes back (fields that are null stay unset).
    const back = Object.fromEntries(['name', 'url', 'topic_filter', 'enabled', 'retry_count', 'failure_threshold', 'timeout'].map((k) => [k, shown[k]]));
    const put = await bed.call('PUT', `/webhooks/${w.name}`, { ...back, timeout: 5 });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ timeout: 5, status: 'disabled', disabled_reason: 'health' });
    expect(await view(w.name)).toMatchObject({ status: 'disabled', disabled_reason: 'health' });
    // Still disabled for deliveries: a new message is recorded failed without a request.
    const made = recv.requests.length;
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'while disabled' })).status).toBe(201);
    await until(async () => (await status(w.name)).failure_count === 2, 20_000, 'the second delivery recorded failed');
    expect(recv.requests.length).toBe(made);
  });

  it('re-enables on a PATCH that says enabled: true, and on a PUT that turns enabled from false to true', async () => {
    const a = (await healthDisabled()).w;
    expect((await bed.call('PATCH', `/webhooks/${a.name}`, { enabled: true })).body.data).toMatchObject({ status: 'active', disabled_reason: null });
    const b = (await healthDisabled()).w;
    const shown = await view(b.name);
    const back = Object.fromEntries(['name', 'url', 'topic_filter', 'retry_count', 'failure_threshold'].map((k) => [k, shown[k]]));
    expect((await bed.call('PUT', `/webhooks/${b.name}`, { ...back, enabled: false })).body.data).toMatchObject({ status: 'disabled', disabled_reason: 'health' });
    expect((await bed.call('PUT', `/webhooks/${b.name}`, { ...back, enabled: true })).body.data).toMatchObject({ status: 'active', disabled_reason: null });
  });
});

/** A receiver that answers by payload: `slow-ok…` after 3 s with 200, anything else 500 at once. */
async function byPayload() {
  const seen: string[] = [];
  const srv: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const payload = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).payload);
      seen.push(payload);
      if (payload.startsWith('slow-ok')) setTimeout(() => res.writeHead(200).end('ok'), 3000);
      else res.writeHead(500).end('down');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(srv.address() as { port: number }).port}/hook`, seen, close: () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }) };
}

describe('the failing run', () => {
  it('is ended by a success whose batch read the webhook before the run began', async () => {
    const recv = await byPayload();
    try {
      const topic = unique('t');
      const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0, failure_threshold: 2 });
      // One publish, one batch: both jobs read the webhook before the run begins. fail-1 starts the
      // run at once; slow-ok succeeds 3 s later, on the read that showed no run.
      const both = await bed.call('POST', `/topics/${topic}/messages/batch`, { messages: [{ payload: 'slow-ok' }, { payload: 'fail-1' }] });
      expect(both.status).toBe(201);
      await until(async () => { const s = await status(w.name); return s.success_count === 1 && s.failure_count === 1; }, 30_000, 'the success and the failure counted');
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'fail-2' })).status).toBe(201);
      await until(async () => (await status(w.name)).failure_count === 2, 30_000, 'fail-2 counted');
      // fail-1 and fail-2 are not in a row: the success came between them.
      expect(await view(w.name)).not.toMatchObject({ disabled_reason: 'health' });
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'fail-3' })).status).toBe(201);
      await until(async () => (await view(w.name)).disabled_reason === 'health', 30_000, 'disabled after fail-2 and fail-3, in a row');
    } finally {
      await recv.close();
    }
  });

  it('is not disabled by a gate that judged it before a re-enable ended it, when a new run has begun since', async () => {
    const recv = await bed.receivers.start({ status: 500 });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0, timeout: 5, failure_threshold: 10_000, disable_after: 60 });
    const stored = (await getWebhook(bed.ns.name, w.name))!;
    // A run that began 2 minutes ago with its circuit open: due at the gate (disable_after 60 s).
    const now = Date.now();
    expect(await openCircuit(stored, now - 120_000, 'HTTP 500')).toBe(true);
    for (let i = 0; i < CIRCUIT_TRIP_ATTEMPTS - 1; i++) await probeEnded(stored, now - 1000);
    // The gate's read of the counters' last success answers 4 s late (slow storage, or throttled retries).
    const slow = slowDynamoAnswers({
      when: (c) => c.command === 'QueryCommand' && c.input.ExpressionAttributeValues?.[':prefix'] === metaKeys.webhookCounterPrefix && String(c.input.ExpressionAttributeValues?.[':pk'] ?? '').includes(stored.id),
      ms: (i) => (i === 0 ? 4000 : 0),
    });
    slow.arm();
    try {
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'judged on the old run' })).status).toBe(201);
      await until(async () => slow.hits.length > 0, 20_000, 'the gate reading the last success');
      const stalledAt = Date.now();
      // Meanwhile the owner re-enables (the run is cleared), and one delivery fails: a new run of 1 failure.
      expect((await bed.call('PATCH', `/webhooks/${w.name}`, { enabled: true })).body.data).toMatchObject({ status: 'active', disabled_reason: null });
      const made = recv.requests.length;
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'after re-enable' })).status).toBe(201);
      await until(async () => recv.requests.length > made, 20_000, 'the new delivery attempted');
      await until(async () => (await getWebhook(bed.ns.name, w.name))?.health !== undefined, 10_000, 'the new run tracked');
      // The stalled gate goes on with its judgement of the old run.
      await new Promise((r) => setTimeout(r, Math.max(0, stalledAt + 5000 - Date.now())));
      expect(await view(w.name)).toMatchObject({ status: 'failing', disabled_reason: null });
    } finally {
      slow.stop();
    }
  });
});

describe('the webhooks/disabled event', () => {
  it('keeps one pending event per disable: a second disable before the first event went leaves both to publish', async () => {
    // A namespace of its own: its alert queue hears only this webhook.
    const ns = await createTestNamespace('wedgd');
    const own = client(bed.server.baseUrl, ns.key);
    const recv = await bed.receivers.start({ status: 500 });
    const q = queueApi(own);
    const alerts = unique('alerts');
    await q.create({ name: alerts, topic_filter: 'webhooks/disabled' });
    const alertsId = (await getQueue(ns.name, alerts))!.id;
    // Every publish to the alert queue fails while armed: both events stay pending.
    const f = injectDynamoFault({ when: (c) => /Update/.test(c.command) && JSON.stringify(c.input).includes(alertsId), mode: 'before', times: Number.POSITIVE_INFINITY, name: 'ServiceUnavailable' });
    f.arm();
    try {
      const topic = unique('t');
      const w = await createWebhook(own, { url: recv.url, topic_filter: topic, retry_count: 0, timeout: 2, failure_threshold: 1 });
      const disabledAt: string[] = [];
      for (const round of [1, 2]) {
        await q.publish(topic, { payload: `dead-${round}` });
        const v = await until(async () => { const x = (await own('GET', `/webhooks/${w.name}`)).body.data; return x.disabled_reason === 'health' && x; }, 30_000, `disable ${round}`);
        disabledAt.push(v.disabled_at);
        // The delivery path tries the publish 4 times (endpoint-limits.ts DISABLED_EVENT_RETRIES); all fail.
        await until(async () => f.hits.length >= 4 * round, 10_000, `the publishes of event ${round} failed`);
        if (round === 1) expect((await own('PATCH', `/webhooks/${w.name}`, { enabled: true })).body.data.status).toBe('active');
      }
      f.stop();
      await sweepWebhooks(Date.now() + 60_000);
      const events = await until(async () => { const m = await q.consume(alerts, { max_messages: 10, visibility_timeout_seconds: 60 }); return m.length >= 2 && m; }, 10_000, 'both disabled events');
      expect(events.map((e: { payload: string }) => JSON.parse(e.payload).disabled_at).sort()).toEqual(disabledAt.sort());
      // Published once each: nothing is left pending.
      await sweepWebhooks(Date.now() + 120_000);
      expect(await q.consume(alerts, { max_messages: 10, visibility_timeout_seconds: 30 })).toEqual([]);
    } finally {
      f.stop();
    }
  });
});

describe('the circuit probe', () => {
  it('retries a transaction conflict on taking the probe instead of putting the job back for the queue visibility (6 min)', async () => {
    const recv = await bed.receivers.start({ failFirst: CIRCUIT_TRIP_ATTEMPTS });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    for (let i = 0; i < CIRCUIT_TRIP_ATTEMPTS; i++) expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: `fail-${i}` })).status).toBe(201);
    await until(async () => (await status(w.name)).failure_count === CIRCUIT_TRIP_ATTEMPTS, 30_000, 'the circuit opened');
    // A plain write to an item a transaction holds (a disable's) fails with TransactionConflictException
    // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
    const takesProbe = (c: { command: string; input: Record<string, unknown> }) => /Update/.test(c.command) && String(c.input.ConditionExpression ?? '').includes('health.probe_until <= :now');
    const f = injectDynamoFault({ when: takesProbe, mode: 'before', times: 1, name: 'TransactionConflictException' });
    f.arm();
    try {
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'ok' })).status).toBe(201);
      await until(async () => (await status(w.name)).success_count === 1, 30_000, 'the probe delivered');
      expect(f.hits).toHaveLength(1);
    } finally {
      f.stop();
    }
  });
});

