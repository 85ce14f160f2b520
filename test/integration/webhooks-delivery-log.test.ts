/**
 * The webhook delivery log and replay (extensions) end to end: the real gateway and handlers,
 * the local delivery queue on fauxqs and the retry workflow on aws-local-stepfunctions, receivers
 * on 127.0.0.1. One log entry per attempt with its reason; pages, filters, cursors; replay of a
 * failed delivery (one, by reference, with retries, and every failure since a time) reaching a
 * receiver that now answers 200, verified with the standardwebhooks package.
 */
import { Webhook } from 'standardwebhooks';
import { until, type ReceivedRequest } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(60_000);

const bed = webhookTestbed('whl');


interface Entry {
  message_id: string;
  attempt: number;
  attempted_at: string;
  duration_ms: number;
  status_code: number | null;
  outcome: 'succeeded' | 'failed';
  error: string | null;
  final: boolean;
  replay: boolean;
}

async function publish(topic: string, body: Record<string, unknown>) {
  const res = await bed.call('POST', `/topics/${topic}/messages`, body);
  expect(res.status).toBe(201);
  return res.body.data.message_id as string;
}

const page = async (name: string, query = '') => {
  const res = await bed.call('GET', `/webhooks/${name}/deliveries${query}`);
  expect(res.status).toBe(200);
  return res.body.data as { deliveries: Entry[]; next_cursor: string | null; limit: number };
};

/** Polls the log (its index shows an entry a moment after the attempt) until `n` entries match. */
const entries = (name: string, query: string, n: number) =>
  until(async () => {
    const got = (await page(name, query)).deliveries;
    return got.length >= n ? got : undefined;
  }, 15_000, `${n} log entries of ${name}${query}`);

const status = async (name: string) => (await bed.call('GET', `/webhooks/${name}/status`)).body.data;

const verifies = (secret: string, r: ReceivedRequest) => {
  const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
  new Webhook(secret).verify(r.body.toString('utf8'), headers);
  return true;
};

describe('delivery log', () => {
  it('writes one entry per attempt with its reason, newest first, and marks the last one final', async () => {
    const recv = await bed.receivers.start({ failFirst: 2, failStatus: 503 });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 3, retry_delay: 1, backoff_multiplier: 1 });
    const id = await publish(topic, { payload: 'three tries' });
    await recv.waitFor(3, 20_000);
    const got = await entries(w.name, `?message_id=${id}`, 3);
    expect(got.map((e) => [e.attempt, e.outcome, e.status_code, e.error, e.final, e.replay])).toEqual([
      [3, 'succeeded', 200, null, true, false],
      [2, 'failed', 503, 'HTTP 503', false, false],
      [1, 'failed', 503, 'HTTP 503', false, false],
    ]);
    expect(got.every((e) => e.message_id === id && e.duration_ms >= 0 && /Z$/.test(e.attempted_at))).toBe(true);
    expect(Date.parse(got[0].attempted_at) - Date.parse(got[1].attempted_at)).toBeGreaterThanOrEqual(900); // the 1 s backoff
  });

  it('says why an attempt failed without an answer, and ends a delivery out of retries with a final failure', async () => {
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: 'http://127.0.0.1:1/hook', topic_filter: topic, retry_count: 0 });
    const id = await publish(topic, { payload: 'nobody home' });
    const [e] = await entries(w.name, '', 1);
    expect(e).toMatchObject({ message_id: id, attempt: 1, outcome: 'failed', status_code: null, error: 'connection refused', final: true, replay: false });
  });

  it('filters by status and pages with a cursor, newest first, each entry once', async () => {
    const recv = await bed.receivers.start({ failFirst: 2 });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    for (let i = 0; i < 5; i++) await publish(topic, { payload: `m${i}` });
    await recv.waitFor(5);
    await entries(w.name, '', 5);
    expect((await entries(w.name, '?status=failed', 2)).every((e) => e.outcome === 'failed' && e.error === 'HTTP 500' && e.final)).toBe(true);
    expect((await page(w.name, '?status=failed')).deliveries).toHaveLength(2);
    expect((await page(w.name, '?status=succeeded')).deliveries).toHaveLength(3);

    const seen: Entry[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const p: Awaited<ReturnType<typeof page>> = await page(w.name, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      sizes.push(p.deliveries.length);
      seen.push(...p.deliveries);
      cursor = p.next_cursor;
    } while (cursor);
    expect(sizes).toEqual([2, 2, 1]);
    expect(new Set(seen.map((e) => e.message_id)).size).toBe(5);
    const times = seen.map((e) => Date.parse(e.attempted_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('refuses bad queries (400 for wrong types and unknown values, 422 out of range) and unknown webhooks (404)', async () => {
    const w = await createWebhook(bed.call, { url: 'http://127.0.0.1:1/hook', topic_filter: unique('t') });
    expect((await bed.call('GET', `/webhooks/${w.name}/deliveries?status=bogus`)).status).toBe(400);
    expect((await bed.call('GET', `/webhooks/${w.name}/deliveries?limit=x`)).status).toBe(400);
    expect((await bed.call('GET', `/webhooks/${w.name}/deliveries?cursor=not-a-cursor`)).status).toBe(400);
    const over = await bed.call('GET', `/webhooks/${w.name}/deliveries?limit=101`);
    expect(over.status).toBe(422);
    expect(over.body.error?.details.fields).toEqual([expect.objectContaining({ field: 'limit' })]);
    expect((await bed.call('GET', '/webhooks/nope/deliveries')).body.error?.code).toBe('WEBHOOK_NOT_FOUND');
    expect(await page(w.name)).toEqual({ deliveries: [], next_cursor: null, limit: 50 });
  });
});

describe('replay', () => {
  it('delivers a failed message again to a receiver that now answers 200: same webhook-id and body, verified, counted', async () => {
    const recv = await bed.receivers.start({ failFirst: 1 });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    const id = await publish(topic, { payload: 'try me again' });
    await entries(w.name, '?status=failed', 1);
    expect(await status(w.name)).toMatchObject({ success_count: 0, failure_count: 1 });

    const res = await bed.call('POST', `/webhooks/${w.name}/deliveries/${id}/replay`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ message_id: id, replay_id: expect.any(String) });
    const [first, again] = await recv.waitFor(2);
    expect(again.headers['webhook-id']).toBe(id);
    expect(again.body.equals(first.body)).toBe(true);
    expect(verifies(w.secret, again)).toBe(true);
    await until(async () => (await status(w.name)).success_count === 1, 10_000, 'the replay counted');
    expect(await status(w.name)).toMatchObject({ success_count: 1, failure_count: 1 });
    const [replayed] = await entries(w.name, `?message_id=${id}&status=succeeded`, 1);
    expect(replayed).toMatchObject({ attempt: 1, outcome: 'succeeded', status_code: 200, final: true, replay: true });
  });

  it('answers 404 for a message with no failed delivery retained (delivered fine, or unknown)', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic });
    const id = await publish(topic, { payload: 'fine' });
    await recv.waitFor(1);
    for (const m of [id, 'NOPE']) {
      const res = await bed.call('POST', `/webhooks/${w.name}/deliveries/${m}/replay`);
      expect(res.status).toBe(404);
      expect(res.body.error?.code).toBe('MESSAGE_NOT_FOUND');
    }
    expect((await bed.call('POST', `/webhooks/nope/deliveries/${id}/replay`)).body.error?.code).toBe('WEBHOOK_NOT_FOUND');
  });

  it('retries a replay with the webhook\'s policy, under a workflow execution of its own', async () => {
    // The first delivery fails twice (an execution of the retry workflow ran for it); the replay
    // fails once, then its own retry succeeds.
    const recv = await bed.receivers.start({ failFirst: 3 });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1 });
    const id = await publish(topic, { payload: 'stubborn' });
    await until(async () => (await status(w.name)).failure_count === 1, 15_000, 'the first delivery failed');
    expect((await bed.call('POST', `/webhooks/${w.name}/deliveries/${id}/replay`)).status).toBe(200);
    await recv.waitFor(4, 15_000);
    const log = await entries(w.name, `?message_id=${id}`, 4);
    expect(log.map((e) => [e.replay, e.attempt, e.outcome, e.final])).toEqual([
      [true, 2, 'succeeded', true],
      [true, 1, 'failed', false],
      [false, 2, 'failed', true],
      [false, 1, 'failed', false],
    ]);
    await until(async () => (await status(w.name)).success_count === 1, 10_000, 'the replay counted');
  });

  it('replays a message too large for a job by reference to its retained copy', async () => {
    const recv = await bed.receivers.start({ failFirst: 1 });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0, max_payload_size: 1048576 });
    const payload = 'x'.repeat(250 * 1024);
    const id = await publish(topic, { payload });
    await entries(w.name, '?status=failed', 1);
    expect((await bed.call('POST', `/webhooks/${w.name}/deliveries/${id}/replay`)).status).toBe(200);
    const [, again] = await recv.waitFor(2);
    expect(JSON.parse(again.body.toString('utf8')).payload).toBe(payload);
    expect(verifies(w.secret, again)).toBe(true);
  });

  it('replays every delivery that failed since a time, once, and nothing delivered fine', async () => {
    const recv = await bed.receivers.start({ failFirst: 3 });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    const since = new Date(Date.now() - 1000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await publish(topic, { payload: `n${i}` }));
    await entries(w.name, '', 4);
    await entries(w.name, '?status=failed', 3);
    const res = await bed.call('POST', `/webhooks/${w.name}/replay`, { since, status: 'failed' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ queued: 3, next_since: null });
    const reqs = await recv.waitFor(7);
    const replayedIds = reqs.slice(4).map((r) => r.headers['webhook-id']);
    const failedIds = reqs.slice(0, 3).map((r) => r.headers['webhook-id']);
    expect(new Set(replayedIds)).toEqual(new Set(failedIds));
    await until(async () => (await status(w.name)).success_count === 4, 10_000, 'the replays counted');
    // Delivered by the replays now: a second call finds nothing left to replay.
    await until(async () => (await bed.call('POST', `/webhooks/${w.name}/replay`, { since })).body.data.queued === 0, 10_000, 'nothing left to replay');
    expect((await bed.call('POST', `/webhooks/${w.name}/replay`, { since: new Date(Date.now() + 60_000).toISOString() })).body.data).toEqual({ queued: 0, next_since: null });
  });

  it('refuses a bulk replay without since (422), with a bad since (422) or status (422), or of the wrong type (400)', async () => {
    const w = await createWebhook(bed.call, { url: 'http://127.0.0.1:1/hook', topic_filter: unique('t') });
    const replay = (body: unknown) => bed.call('POST', `/webhooks/${w.name}/replay`, body);
    expect((await replay({})).body.error?.details.fields).toEqual([{ field: 'since', message: 'is required' }]);
    expect((await replay({ since: 'yesterday' })).status).toBe(422);
    expect((await replay({ since: new Date().toISOString(), status: 'succeeded' })).status).toBe(422);
    expect((await replay({ since: 1767225600 })).status).toBe(400);
  });
});
