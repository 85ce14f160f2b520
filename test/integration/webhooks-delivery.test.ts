/**
 * Webhook delivery end to end on DynamoDB Local: the real gateway and handlers, the local SQS and
 * Step Functions stand-ins (the same ASL file, real waits), and receivers on 127.0.0.1.
 */
import { createHmac } from 'node:crypto';
import { until } from '../fixtures/receiver';
import { scaled } from '../fixtures/time-scale';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(60_000);

const bed = webhookTestbed('whd');
const receiver = bed.receivers.start;


const hook = (fields: Record<string, unknown>) => createWebhook(bed.call, fields);

async function publish(topic: string, body: Record<string, unknown>) {
  const res = await bed.call('POST', `/topics/${topic}/messages`, body);
  expect(res.status).toBe(201);
  return res.body.data as { message_id: string };
}

const status = async (name: string) => (await bed.call('GET', `/webhooks/${name}/status`)).body.data;

async function queueOn(topic: string) {
  const name = unique('q');
  expect((await bed.call('POST', '/queues', { name, topic_filter: topic })).status).toBe(201);
  return name;
}

const consumeOne = (queue: string) =>
  until(async () => (await bed.call('POST', `/queues/${queue}/messages/consume`, { timeout_seconds: 0 })).body.data.messages[0], 15000, `a message in ${queue}`);

describe('webhook deliveries', () => {
  it('retries with backoff (1 s, then 2 s) until success, counting one success and no failure', async () => {
    const recv = await receiver({ failFirst: 2 });
    const topic = unique('t');
    const w = await hook({ url: recv.url, topic_filter: topic, retry_count: 3, retry_delay: 1, backoff_multiplier: 2 });
    const pub = await publish(topic, { payload: 'retry me' });
    const reqs = await recv.waitFor(3, 20000);
    // Never before the backoff; after it, within 2 s of slack (at the suite's time scale:
    // test/fixtures/time-scale.ts).
    expect(reqs[1].at - reqs[0].at).toBeGreaterThanOrEqual(950);
    expect(reqs[1].at - reqs[0].at).toBeLessThan(1000 + scaled(2000));
    expect(reqs[2].at - reqs[1].at).toBeGreaterThanOrEqual(1950);
    expect(reqs[2].at - reqs[1].at).toBeLessThan(2000 + scaled(2000));
    expect(new Set(reqs.map((r) => JSON.parse(r.body.toString()).message_id))).toEqual(new Set([pub.message_id]));
    const s = await until(async () => { const x = await status(w.name); return x.success_count === 1 && x; }, 10000, 'one success');
    // The delivery ended in success: the errors of its earlier attempts no longer describe the webhook.
    expect(s).toMatchObject({ failure_count: 0, next_retry: null, last_error: null });
    await new Promise((r) => setTimeout(r, 1500));
    expect(recv.requests).toHaveLength(3);
  });

  it('gives up after 1 + retry_count attempts, dead-letters the original message with x-hop, and counts one failure', async () => {
    const recv = await receiver({ failFirst: 1000 });
    const topic = unique('t');
    const dlq = await queueOn(`${topic}/dlq`);
    const w = await hook({ url: recv.url, topic_filter: `${topic}/events`, retry_count: 2, retry_delay: 1, backoff_multiplier: 1, on_failure: 'send_to_dlq', dead_letter_topic: `${topic}/dlq` });
    await publish(`${topic}/events`, { payload: 'undeliverable', properties: { trace: 't-1' } });
    const m = await consumeOne(dlq);
    expect(m.payload).toBe('undeliverable');
    expect(m.properties).toMatchObject({ trace: 't-1', 'x-hop': '1', dlq_source_webhook: w.name, dlq_error: 'HTTP 500' });
    expect(recv.requests).toHaveLength(3);
    // The dead letter is the delivery's hook; its failure is counted once its log entry and kept
    // copy are written (docs/webhooks.md), which may come a moment after the dead letter.
    const s = await until(async () => { const x = await status(w.name); return x.failure_count > 0 && x; }, 10000, 'the failure counted');
    expect(s).toMatchObject({ success_count: 0, failure_count: 1, last_error: 'HTTP 500', next_retry: null });
    await new Promise((r) => setTimeout(r, 1000));
    expect(await status(w.name)).toMatchObject({ success_count: 0, failure_count: 1 });
    expect(recv.requests).toHaveLength(3);
  });

  it('shows next_retry while a retry waits', async () => {
    const recv = await receiver({ failFirst: 1000 });
    const topic = unique('t');
    const w = await hook({ url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 3 });
    await publish(topic, { payload: 'x' });
    await recv.waitFor(1);
    const s = await until(async () => { const x = await status(w.name); return x.next_retry && x; }, 2500, 'next_retry');
    expect(Date.parse(s.next_retry)).toBeGreaterThan(Date.now());
    await recv.waitFor(2, 10000);
    await until(async () => { const x = await status(w.name); return x.failure_count === 1 && x.next_retry === null; }, 10000, 'the failure counted');
  });

  it('publishes on_success with {{.response}} and on_failure with {{.error}}', async () => {
    const ok = await receiver({ responseBody: 'pong-123' });
    const bad = await receiver({ failFirst: 1000, failStatus: 503 });
    const topic = unique('t');
    const done = await queueOn(`${topic}/done`);
    const failed = await queueOn(`${topic}/failed`);
    await hook({ url: ok.url, topic_filter: `${topic}/ok`, on_success: { topic: `${topic}/done`, payload: 'ok {{.response}} {{.message_id}}' } });
    await hook({ url: bad.url, topic_filter: `${topic}/bad`, retry_count: 0, on_failure: { topic: `${topic}/failed`, payload: 'failed: {{.error}}' } });
    const pub = await publish(`${topic}/ok`, { payload: 'fine' });
    await publish(`${topic}/bad`, { payload: 'doomed' });
    expect((await consumeOne(done)).payload).toBe(`ok pong-123 ${pub.message_id}`);
    const f = await consumeOne(failed);
    expect(f.payload).toBe('failed: HTTP 503');
    expect(f.properties['x-hop']).toBe('1');
  });

  it('never republishes a message whose x-hop is already 5', async () => {
    const recv = await receiver();
    const topic = unique('t');
    const done = await queueOn(`${topic}/done`);
    await hook({ url: recv.url, topic_filter: `${topic}/in`, on_success: { topic: `${topic}/done`, payload: 'next' } });
    await publish(`${topic}/in`, { payload: 'a', properties: { 'x-hop': '5' } });
    await publish(`${topic}/in`, { payload: 'b', properties: { 'x-hop': '4' } });
    const m = await consumeOne(done);
    expect(m.properties['x-hop']).toBe('5');
    await recv.waitFor(2);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await bed.call('POST', `/queues/${done}/messages/consume`, { timeout_seconds: 0 })).body.data.messages).toHaveLength(0);
  });

  it('fails a receiver slower than timeout within about the timeout', async () => {
    const recv = await receiver({ delayMs: 5000 });
    const topic = unique('t');
    const w = await hook({ url: recv.url, topic_filter: topic, retry_count: 0, timeout: 1 });
    await publish(topic, { payload: 'slow' });
    await recv.waitFor(1);
    const t0 = Date.now();
    const s = await until(async () => { const x = await status(w.name); return x.failure_count === 1 && x; }, 4000, 'the timeout counted');
    expect(Date.now() - t0).toBeLessThan(scaled(2500));
    expect(s.last_error).toBe('timeout after 1 s');
  });

  it('makes no request for a body above max_payload_size and counts one failure without retries', async () => {
    const recv = await receiver();
    const topic = unique('t');
    const w = await hook({ url: recv.url, topic_filter: topic, retry_count: 3, retry_delay: 1, max_payload_size: 100 });
    await publish(topic, { payload: 'x'.repeat(200) });
    const s = await until(async () => { const x = await status(w.name); return x.failure_count === 1 && x; }, 5000, 'the failure counted');
    expect(s).toMatchObject({ last_error: 'payload too large', next_retry: null });
    await new Promise((r) => setTimeout(r, 1500));
    expect(recv.requests).toHaveLength(0);
  });

  it('signs each delivery so that a receiver can verify it', async () => {
    const recv = await receiver();
    const topic = unique('t');
    const w = await hook({ url: recv.url, topic_filter: topic, headers: { 'X-Signature': '{{.signature}}' }, compression: 'gzip' });
    await publish(topic, { payload: 'sign me' });
    const [req] = await recv.waitFor(1);
    const { gunzipSync } = await import('node:zlib');
    const body = gunzipSync(req.body);
    expect(req.headers['x-signature']).toBe(`v1=${createHmac('sha256', w.secret).update(body).digest('hex')}`);
    const key = Buffer.from(w.secret.slice('whsec_'.length), 'base64');
    const signed = `${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.${body.toString()}`;
    expect(req.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);
  });

  it('refuses CRLF in configured headers with 422 and creates nothing', async () => {
    const name = unique('wh');
    const res = await bed.call('POST', '/webhooks', { name, url: 'http://127.0.0.1:1/x', topic_filter: 'a', headers: { 'X-A': 'v\r\nX-Injected: 1' } });
    expect(res.status).toBe(422);
    expect((res.body.error?.details.fields as { field: string }[])[0].field).toBe('headers.X-A');
    expect((await bed.call('GET', `/webhooks/${name}`)).status).toBe(404);
  });

  it('delivers every message of a batch publish (SQS batches of 10)', async () => {
    const recv = await receiver();
    const topic = unique('t');
    await hook({ url: recv.url, topic_filter: topic });
    const res = await bed.call('POST', `/topics/${topic}/messages/batch`, { messages: Array.from({ length: 25 }, (_, i) => ({ payload: `m${i}` })) });
    expect(res.status).toBe(201);
    await recv.waitFor(25);
    expect(new Set(recv.requests.map((r) => JSON.parse(r.body.toString()).message_id))).toEqual(new Set(res.body.data.message_ids));
  });
});

describe('webhook sweeper', () => {
  it('closes the purge job of a deleted webhook and drops its counters', async () => {
    const { sweepWebhooks } = await import('../../lambda/webhooks/sweep');
    const { purgeJobs } = await import('../../lambda/core/storage/resources');
    const { getWebhookStatus, recordOutcome } = await import('../../lambda/webhooks/storage/webhooks');
    const recv = await receiver();
    const w = await hook({ url: recv.url, topic_filter: unique('t'), enabled: false });
    const before = new Set((await purgeJobs('WEBHOOK')).map((j) => j.id));
    expect((await bed.call('DELETE', `/webhooks/${w.name}`)).status).toBe(200);
    const job = (await purgeJobs('WEBHOOK')).find((j) => !before.has(j.id));
    expect(job).toBeDefined();
    // A delivery that was in flight during the delete writes its count afterwards.
    await recordOutcome(job!.namespace, job!.id, { ok: true, wasPending: false, now: Date.now() });
    await sweepWebhooks(Date.now());
    expect((await purgeJobs('WEBHOOK')).some((j) => j.id === job!.id)).toBe(true);
    await sweepWebhooks(Date.now() + 3 * 60_000);
    expect((await purgeJobs('WEBHOOK')).find((j) => j.id === job!.id)).toBeUndefined();
    expect(await getWebhookStatus(job!.namespace, job!.id)).toEqual({});
  });
});
