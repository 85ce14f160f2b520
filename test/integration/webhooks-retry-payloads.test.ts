/**
 * The Wait + SQS-send retry workflow (docs/design/0017-webhook-delivery-once.md): payloads of every shape
 * survive the workflow.
 *
 * Promise (docs/webhooks.md, DESIGN.md webhooks and retries): a retry carries the same message as
 * the first attempt, whatever its payload, and every retry attempt is made by the delivery
 * function.
 *
 * Scenario: a payload holding a character outside the Basic Multilingual Plane (an emoji, U+1F600,
 * which SQS accepts: #x10000 to #x10FFFF are valid message characters,
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html).
 * The first attempt's job goes on the queue as ASCII-only JSON (`sqsJson`, which exists because
 * fauxqs refuses such characters), but the workflow's SendMessage body is
 * `States.JsonToString($.job)`, plain JSON with the raw character.
 *
 * Observed (every run): the local runner's SendMessage to fauxqs fails with
 * InvalidMessageContents on every try of the Queue state's Retry, the execution fails and the
 * failed-execution handler ends the delivery as failed ("retry workflow failed") after about
 * 4 minutes of ASL backoff, with no retry POSTed. Expected: the retry job reaches the queue and the
 * delivery is retried (AWS accepts the body; the local runtime rejects a delivery AWS would make).
 */
import { randomUUID } from 'node:crypto';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import type { RetryState } from '../../lambda/webhooks/rules/delivery';
import type { ExecutionStatusEvent } from '../../lambda/handlers/webhook-attempt';
import { ensureDeliveryQueues } from '../../local/webhooks';
import { LocalRetryWorkflow } from '../../local/stepfunctions';
import { packJobs } from '../../lambda/webhooks/rules/delivery-jobs';

jest.setTimeout(90_000);

const bed = webhookTestbed('r15pay');

/** A chat message: an emoji outside the BMP, beside BMP non-ASCII. */
const EMOJI_PAYLOAD = '{"text":"shipped \u{1F600} caf\u00e9"}';

/**
 * Also a payload holding U+FFFF (a valid JSON string; publish accepts any string): SQS refuses it
 * on AWS too (valid: #x20 to #xD7FF, #xE000 to #xFFFD, #x10000 to #x10FFFF), and JSON text need
 * not escape it (RFC 8259 escapes only quotes, backslashes and controls), so States.JsonToString's
 * body is refused there as here, while the first attempt's ASCII JSON (`\\uffff`) is accepted.
 */
it.each([
  ['an emoji', EMOJI_PAYLOAD],
  ['U+FFFF', '{"text":"before\uffffafter"}'],
])('the retry workflow puts a retry job whose payload holds %s on the delivery queue', async (_what, payload) => {
  const q = await ensureDeliveryQueues(`r15-emoji-${randomUUID()}`);
  const failed: ExecutionStatusEvent[] = [];
  const workflow = new LocalRetryWorkflow(async (e) => (failed.push(e), undefined), () => undefined, { queueUrl: q.url, retryIntervalMs: 10 });
  const job = {
    namespace: 'ns-a', webhook_id: 'w1', webhook_name: 'w',
    message: { message_id: 'M1', topic: 't', payload, content_type: 'application/json', properties: {}, published_at: 1, size: Buffer.byteLength(payload) },
    retry: { attempts: 1, last_error: 'HTTP 500' },
  };
  const state: RetryState = { job, attempts: 1, wait_seconds: 0, last_error: 'HTTP 500', outcome: 'retry' };
  try {
    expect(await workflow.start(`payload-${randomUUID()}`, state)).toBe('started');
    await until(async () => workflow.running === 0, 20_000, 'the execution ended');
    // Observed: one failed execution, "ExecutionError: ... Invalid characters found ...", nothing on the queue.
    expect(failed.map((e) => `${e.detail.error}: ${e.detail.cause}`)).toEqual([]);
    const out = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: q.url, WaitTimeSeconds: 1 }));
    expect(out.Messages?.map((m) => JSON.parse(m.Body!))).toEqual([job]);
  } finally {
    await workflow.stop();
  }
});

it('retries a delivery whose payload holds an emoji (end to end, retry_delay 1)', async () => {
  const recv = await bed.receivers.start({ failFirst: 1 });
  const topic = unique('t');
  const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1, failure_threshold: 1000, disable_after: 86400 });
  const id = (await getWebhook(bed.ns.name, w.name))!.id;
  const published = await bed.call('POST', `/topics/${topic}/messages`, { payload: EMOJI_PAYLOAD, content_type: 'application/json' });
  expect(published.status).toBe(201);
  const key = { namespace: bed.ns.name, webhookId: id, messageId: published.body.data.message_id };
  // Observed: one request; the record stays `retrying` while the Queue state retries its refused
  // send (about 4 minutes), then ends `failed` with "retry workflow failed (...)" and attempts 1.
  await until(async () => recv.requests.length >= 2, 30_000, 'the retry POSTed').catch(async (e) => {
    throw new Error(`${(e as Error).message}: ${recv.requests.length} request(s), record ${JSON.stringify(await readDelivery(key))}`);
  });
  const rec = await until(async () => { const r = await readDelivery(key); return r && r.outcome !== 'retrying' && r; }, 20_000, 'the delivery ended');
  expect(rec).toMatchObject({ outcome: 'success', attempts: 2 });
  expect(recv.requests[1].body.toString('utf8')).toBe(recv.requests[0].body.toString('utf8'));
});

/**
 * Scenario: a JSON payload of 117 KiB, two thirds of it quotes (an array of 40,000 empty strings;
 * any JSON of short strings and keys is near that): its job is inline (ASCII JSON under INLINE_JOB_LIMIT_BYTES) and the execution input is under
 * Step Functions' 256 KiB, but the Queue state's input is the SendMessage parameters, whose
 * MessageBody is the job's JSON text as a string: every quote escaped twice (4 bytes), about
 * 360 KB, above "Maximum input or output size for a task ... 256 KiB of data as a UTF-8 encoded
 * string" (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html).
 *
 * Observed (every run): the execution fails ("task input of 360424 bytes exceeds 262144 bytes",
 * the runner's States.DataLimitExceeded) on every try of the Queue state, the retry job never reaches the queue, so the delivery
 * would end failed without its retries ("retry workflow failed"). Expected: a job stored inline is
 * one the retry workflow can send (or the job goes by reference).
 */
/**
 * Since: the inline limit is measured on the job as the execution input carries it (its ASCII
 * JSON inside a JSON string, every quote escaped again; jobBytes), so that payload goes by
 * reference, and the largest quote-heavy payload kept inline is one the workflow sends.
 */
it.each([
  ['40,000 empty strings (117 KiB): by reference', 40_000, 1],
  ['22,730 empty strings (67 KiB): inline, the largest such kept inline', 22_730, 0],
])('the retry workflow puts a retry job whose payload is full of quotes on the queue: %s', async (_what, n, stored) => {
  // A JSON document, two thirds of it quotes: `["","",...]`.
  const payload = JSON.stringify(Array.from({ length: n }, () => ''));
  const m = { message_id: 'M2', topic: 't', payload, content_type: 'application/json', properties: {}, published_at: 1, size: Buffer.byteLength(payload) };
  const packed = packJobs([{ namespace: 'ns-a', webhook_id: 'w1', webhook_name: 'w', message: m }]);
  expect(packed.stored).toHaveLength(stored); // as publish sends it
  if (!stored) expect(packJobs([{ namespace: 'ns-a', webhook_id: 'w1', webhook_name: 'w', message: { ...m, payload: payload.replace('[', '["",') } }]).stored).toHaveLength(1);
  const job = { ...packed.jobs[0], retry: { attempts: 1, last_error: 'HTTP 500' } };
  const q = await ensureDeliveryQueues(`r15-quotes-${randomUUID()}`);
  const failed: ExecutionStatusEvent[] = [];
  const workflow = new LocalRetryWorkflow(async (e) => (failed.push(e), undefined), () => undefined, { queueUrl: q.url, retryIntervalMs: 10 });
  const state: RetryState = { job, attempts: 1, wait_seconds: 0, last_error: 'HTTP 500', outcome: 'retry' };
  try {
    expect(await workflow.start(`quotes-${randomUUID()}`, state)).toBe('started');
    await until(async () => workflow.running === 0, 30_000, 'the execution ended');
    expect(failed.map((e) => `${e.detail.error}: ${e.detail.cause}`)).toEqual([]);
    const out = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: q.url, WaitTimeSeconds: 1 }));
    expect(out.Messages?.map((x) => JSON.parse(x.Body!))).toEqual([job]);
  } finally {
    await workflow.stop();
  }
});
