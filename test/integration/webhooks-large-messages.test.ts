/**
 * Webhook deliveries of messages at the 256 KiB payload limit, end to end on DynamoDB Local: the
 * job goes by reference (the message stored once in the metadata table); the delivery queue is
 * on fauxqs, which refuses bodies above SQS's 1 MiB, and the local Step Functions runner refuses
 * execution inputs above 256 KiB, so the retries here prove that no job or workflow state carries
 * the message.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { receiverPool, until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { startLocalWebhooks, type LocalWebhooks } from '../../local/webhooks';
import { sendBatches, sqsClient } from '../../lambda/core/adapters/sqs';
import { MAX_PAYLOAD_BYTES } from '../../lambda/core/rules/message';
import { STORED_MESSAGE_TTL_SECONDS } from '../../lambda/webhooks/rules/delivery';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { metaKeys } from '../../lambda/core/storage/keys';

jest.setTimeout(60_000);

let server: TestServer;
let local: LocalWebhooks;
let ns: TestNamespace;
let call: ReturnType<typeof client>;
const receivers = receiverPool();
const receiver = receivers.start;
/** Every body put on the delivery queue. */
const queued: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  local = await startLocalWebhooks({ queueName: `deliveries-${randomUUID()}` });
  // Every body this process sends to its delivery queue, as SQS receives it.
  sqsClient().middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { QueueUrl?: string; Entries?: { MessageBody?: string }[] };
      if (input.QueueUrl === local.queueUrl && input.Entries) queued.push(...input.Entries.map((e) => e.MessageBody ?? ''));
      return next(args);
    },
    { step: 'initialize', name: 'captureDeliveryJobs' },
  );
  ns = await createTestNamespace('whl');
  call = client(server.baseUrl, ns.key);
});
afterAll(async () => {
  await receivers.closeAll();
  await local.stop();
  await server.close();
});

/** A webhook that accepts bodies up to 1 MiB (the default max_payload_size is 256 KiB). */
const hook = (fields: Record<string, unknown>) => createWebhook(call, { max_payload_size: 1024 * 1024, ...fields });

/** Exactly 256 KiB of UTF-8 with quotes, backslashes, newlines and multi-byte characters to escape. */
function payloadAtLimit(): string {
  const unit = 'a"b\\c\n€ü😀 ';
  let p = unit.repeat(Math.floor(MAX_PAYLOAD_BYTES / Buffer.byteLength(unit)));
  p += 'x'.repeat(MAX_PAYLOAD_BYTES - Buffer.byteLength(p));
  expect(Buffer.byteLength(p)).toBe(MAX_PAYLOAD_BYTES);
  return p;
}

/** Standard Webhooks verification, as docs/webhooks.md shows it. */
function verifies(secret: string, headers: IncomingHttpHeaders, rawBody: Buffer): boolean {
  const id = headers['webhook-id'] as string;
  const ts = headers['webhook-timestamp'] as string;
  if (!id || !/^\d+$/.test(ts ?? '') || Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.`).update(rawBody).digest();
  return String(headers['webhook-signature'] ?? '').split(' ').some((s) => {
    const [version, sig] = s.split(',');
    const got = Buffer.from(sig ?? '', 'base64');
    return version === 'v1' && got.length === expected.length && timingSafeEqual(got, expected);
  });
}

const storedItem = async (messageId: string) =>
  (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.webhookMessage(ns.name, messageId), ConsistentRead: true }))).Item;

const jobsOf = (messageId: string) => queued.filter((b) => b.includes(messageId));

describe('webhook deliveries of 256 KiB messages', () => {
  it('retries twice and succeeds on the third attempt, each request with the exact body and a valid signature', async () => {
    const recv = await receiver({ failFirst: 2 });
    const topic = unique('t');
    const w = await hook({ url: recv.url, topic_filter: topic, retry_count: 3, retry_delay: 1, backoff_multiplier: 1 });
    const payload = payloadAtLimit();
    const t0 = Date.now();
    const pub = await call('POST', `/topics/${topic}/messages`, { payload, content_type: 'text/plain', properties: { kind: 'large' } });
    expect(pub.status).toBe(201);
    const { message_id, size, timestamp } = pub.body.data as { message_id: string; size: number; timestamp: string };
    expect(size).toBe(MAX_PAYLOAD_BYTES);

    // Durable before the 201: stored once, with a ttl past the longest retry schedule.
    const item = await storedItem(message_id);
    expect(item?.message).toMatchObject({ message_id, topic, payload, properties: { kind: 'large' } });
    expect(item?.ttl).toBeGreaterThanOrEqual(Math.floor(t0 / 1000) + STORED_MESSAGE_TTL_SECONDS);

    // The queued job is a reference, not the message.
    const jobs = jobsOf(message_id);
    expect(jobs).toHaveLength(1);
    expect(JSON.parse(jobs[0])).toEqual({ namespace: ns.name, webhook_id: expect.any(String), webhook_name: w.name, message_ref: { message_id } });
    expect(Buffer.byteLength(jobs[0])).toBeLessThan(1024);

    const reqs = await recv.waitFor(3, 20000);
    await until(async () => {
      const s = (await call('GET', `/webhooks/${w.name}/status`)).body.data;
      return s.success_count === 1 && s;
    }, 10000, 'one success');
    const s = (await call('GET', `/webhooks/${w.name}/status`)).body.data;
    expect(s).toMatchObject({ success_count: 1, failure_count: 0, next_retry: null, last_error: null });
    expect(recv.requests).toHaveLength(3);
    const expected = Buffer.from(JSON.stringify({ topic, payload, timestamp, message_id, properties: { kind: 'large' } }));
    for (const r of reqs) {
      expect(r.body.equals(expected)).toBe(true);
      expect(JSON.parse(r.body.toString()).payload).toBe(payload);
      expect(r.headers['webhook-id']).toBe(message_id);
      expect(verifies(w.secret, r.headers, r.body)).toBe(true);
    }
    const dlq = await sqsClient().send(new GetQueueAttributesCommand({ QueueUrl: local.deadLetterQueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
    expect(dlq.Attributes?.ApproximateNumberOfMessages).toBe('0');
  });

  it('stores the message once for several webhooks; each renders it in its own body', async () => {
    const plain = await receiver();
    const templated = await receiver({ failFirst: 1 });
    const topic = unique('t');
    await hook({ url: plain.url, topic_filter: topic });
    const t = await hook({ url: templated.url, topic_filter: `${topic}/#`, retry_count: 1, retry_delay: 0, compression: 'gzip', body_template: { data: '{{.payload}}', id: '{{.message_id}}' }, headers: { 'X-Signature': '{{.signature}}' } });
    const payload = payloadAtLimit();
    const pub = await call('POST', `/topics/${topic}/messages`, { payload });
    expect(pub.status).toBe(201);
    const { message_id } = pub.body.data as { message_id: string };

    const jobs = jobsOf(message_id).map((b) => JSON.parse(b));
    expect(jobs).toHaveLength(2);
    expect(jobs.every((j) => j.message_ref?.message_id === message_id && !('message' in j))).toBe(true);

    const [p] = await plain.waitFor(1);
    expect(JSON.parse(p.body.toString()).payload).toBe(payload);
    const reqs = await templated.waitFor(2);
    for (const r of reqs) {
      const body = gunzipSync(r.body);
      expect(body.equals(Buffer.from(JSON.stringify({ data: payload, id: message_id })))).toBe(true);
      expect(verifies(t.secret, r.headers, body)).toBe(true);
      expect(r.headers['x-signature']).toBe(`v1=${createHmac('sha256', t.secret).update(body).digest('hex')}`);
    }
  });

  it('dead-letters a 256 KiB message after its retries with the original payload', async () => {
    const recv = await receiver({ failFirst: 1000 });
    const topic = unique('t');
    const dlq = unique('q');
    expect((await call('POST', '/queues', { name: dlq, topic_filter: `${topic}/dlq` })).status).toBe(201);
    await hook({ url: recv.url, topic_filter: `${topic}/in`, retry_count: 1, retry_delay: 0, on_failure: 'send_to_dlq', dead_letter_topic: `${topic}/dlq` });
    const payload = payloadAtLimit();
    expect((await call('POST', `/topics/${topic}/in/messages`, { payload })).status).toBe(201);
    const m = await until(async () => (await call('POST', `/queues/${dlq}/messages/consume`, { timeout_seconds: 0 })).body.data.messages[0], 15000, 'the dead-lettered message');
    expect(m.payload).toBe(payload);
    expect(recv.requests).toHaveLength(2);
  });

  it('deletes the stored message once every delivery of it has ended, not at its 35-day TTL', async () => {
    const ok = await receiver();
    const failing = await receiver({ failFirst: 1000 });
    const slow = await receiver({ failFirst: 1000 });
    const topic = unique('t');
    const dlq = unique('q');
    expect((await call('POST', '/queues', { name: dlq, topic_filter: `${topic}/dlq` })).status).toBe(201);
    const a = await hook({ url: ok.url, topic_filter: `${topic}/in` });
    // Ends after one retry with a hook that needs the message (send_to_dlq republishes it).
    await hook({ url: failing.url, topic_filter: `${topic}/in`, retry_count: 1, retry_delay: 1, on_failure: 'send_to_dlq', dead_letter_topic: `${topic}/dlq` });
    // Waits 3 s for its retry and is disabled meanwhile: it ends as dropped.
    const c = await hook({ url: slow.url, topic_filter: `${topic}/in`, retry_count: 1, retry_delay: 3 });
    const payload = payloadAtLimit();
    const pub = await call('POST', `/topics/${topic}/in/messages`, { payload });
    expect(pub.status).toBe(201);
    const { message_id } = pub.body.data as { message_id: string };
    expect(jobsOf(message_id)).toHaveLength(3);

    await until(async () => (await call('GET', `/webhooks/${a.name}/status`)).body.data.success_count === 1, 10000, 'the first delivery');
    await slow.waitFor(1);
    expect((await call('PATCH', `/webhooks/${c.name}`, { enabled: false })).status).toBe(200);
    expect(await storedItem(message_id)).toBeDefined();

    const m = await until(async () => (await call('POST', `/queues/${dlq}/messages/consume`, { timeout_seconds: 0 })).body.data.messages[0], 15000, 'the dead-lettered message');
    expect(m.payload).toBe(payload);
    await until(async () => (await storedItem(message_id)) === undefined, 15000, 'the stored message deleted');
    expect(slow.requests).toHaveLength(1);
  });
});

describe('the delivery queue on fauxqs', () => {
  it('refuses a body above 1 MiB, as SQS does, so an oversized job can never be queued', async () => {
    await expect(sendBatches(local.queueUrl, ['x'.repeat(1024 * 1024 + 1)])).rejects.toThrow();
    await expect(sendBatches(local.queueUrl, ['x'.repeat(1024 * 1024 - 100)])).resolves.toBeUndefined();
  });
});
