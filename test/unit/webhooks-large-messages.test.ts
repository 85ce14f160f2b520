/**
 * Delivery jobs of large messages (the SQS extended client's pattern): the decision to send a
 * message by reference, the shape of such jobs, the stored item, and the local stand-ins
 * refusing what SQS and Step Functions refuse.
 */
import {
  FANOUT_INLINE_BUDGET_BYTES,
  INLINE_JOB_LIMIT_BYTES,
  jobBytes,
  jobMessageId,
  packJobs,
  STORED_MESSAGE_TTL_SECONDS,
  type InlineJob,
  type RetryState,
} from '../../lambda/webhooks/rules/delivery';
import { MAX_PAYLOAD_BYTES, type PublishedMessage } from '../../lambda/core/rules/message';
import { sqsJson } from '../../lambda/core/rules/queue-messages';
import { retryExecutionInput } from '../../lambda/webhooks/rules/retry-input';
import { MAX_MAX_RETRY_DELAY, MAX_RETRY_COUNT } from '../../lambda/webhooks/rules/webhooks';
import { buildStoreMessage } from '../../lambda/webhooks/storage/webhook-messages';
import { LocalRetryWorkflow, STATE_DATA_LIMIT_BYTES } from '../../local/stepfunctions';

process.env.MSG_META_TABLE ??= 'msg-meta';

const message = (id: string, payload: string, p: Partial<PublishedMessage> = {}): PublishedMessage => ({
  message_id: id, topic: 'orders/eu', payload, content_type: 'text/plain', properties: { region: 'eu' }, published_at: Date.UTC(2026, 0, 1), size: Buffer.byteLength(payload), ...p,
});
const job = (webhook: string, m: PublishedMessage): InlineJob => ({ namespace: 'acme', webhook_id: `id-${webhook}`, webhook_name: webhook, message: m });
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

describe('packJobs', () => {
  it('keeps a small message inline and stores nothing', () => {
    const jobs = [job('a', message('M1', 'hello'))];
    expect(packJobs(jobs)).toEqual({ jobs, stored: [] });
  });

  it('sends a 256 KiB message by reference in every job, storing it once however many webhooks match', () => {
    const big = message('BIG', 'x'.repeat(MAX_PAYLOAD_BYTES));
    const small = message('SMALL', 'tiny');
    const { jobs, stored } = packJobs([job('a', big), job('b', big), job('c', big), job('a', small)]);
    expect(stored).toEqual([big]);
    expect(jobs.slice(0, 3)).toEqual(['a', 'b', 'c'].map((w) => ({ namespace: 'acme', webhook_id: `id-${w}`, webhook_name: w, message_ref: { message_id: 'BIG' } })));
    expect(jobs[3]).toEqual(job('a', small));
    expect(jobs.map(jobMessageId)).toEqual(['BIG', 'BIG', 'BIG', 'SMALL']);
    // A job by reference is a few hundred bytes, whatever the payload.
    for (const j of jobs.slice(0, 3)) expect(bytes(j)).toBeLessThan(512);
  });

  it('bounds what a publish serializes before its 201: past FANOUT_INLINE_BUDGET_BYTES of inline jobs, the messages with the most go by reference', () => {
    const m150 = message('M150', 'x'.repeat(150 * 1024));
    const small = message('SMALL', 'tiny');
    // 6 webhooks × 150 KiB: 900 KiB inline, within the 1 MiB budget.
    expect(packJobs(['a', 'b', 'c', 'd', 'e', 'f'].map((w) => job(w, m150))).stored).toHaveLength(0);
    // 1,000 webhooks × 150 KiB would be about 150 MB of job strings: stored once instead.
    const many = Array.from({ length: 1000 }, (_, i) => job(`w${i}`, m150));
    const packed = packJobs([...many, job('a', small)]);
    expect(packed.stored).toEqual([m150]);
    expect(packed.jobs.reduce((n, j) => n + bytes(j), 0)).toBeLessThan(FANOUT_INLINE_BUDGET_BYTES);
    expect(packed.jobs[1000]).toEqual(job('a', small));
  });

  it('decides on the exact size of the job as the retry execution input carries it: at the limit inline, one byte above by reference', () => {
    // `size` fixed, so the filler is the only thing that grows.
    const sized = (n: number) => {
      const base = job('w', message('M', '', { size: 1 }));
      return job('w', message('M', 'y'.repeat(n - jobBytes(base)), { size: 1 }));
    };
    const at = sized(1000);
    expect(jobBytes(at)).toBe(1000);
    // Its ASCII JSON inside a JSON string: one byte more per quote and backslash.
    expect(jobBytes(at)).toBe(JSON.stringify(sqsJson(at)).length - 2);
    expect(packJobs([at], 1000).stored).toHaveLength(0);
    const above = sized(1001);
    expect(packJobs([above], 1000).stored).toEqual([above.message]);
  });

  it('counts JSON escaping and multi-byte characters, not payload length', () => {
    // 120 KiB of quotes is 240 KiB of JSON; 70 Ki euro signs are 210 KiB of UTF-8.
    const quotes = message('Q', '"'.repeat(120 * 1024));
    const euros = message('E', '€'.repeat(70 * 1024));
    expect(quotes.payload.length).toBeLessThan(INLINE_JOB_LIMIT_BYTES);
    expect(packJobs([job('w', quotes), job('w', euros)]).stored.map((m) => m.message_id)).toEqual(['Q', 'E']);
  });

  it('sizes a job as SQS gets it (sqsJson): U+007F and above are 6 bytes each', () => {
    // 40 Ki of U+0080 is 80 KiB of UTF-8 JSON but 240 KiB as sent: by reference.
    const wide = message('W', '\u0080'.repeat(40 * 1024));
    expect(bytes(job('w', wide))).toBeLessThan(INLINE_JOB_LIMIT_BYTES);
    const { jobs, stored } = packJobs([job('w', wide)]);
    expect(stored.map((m) => m.message_id)).toEqual(['W']);
    for (const j of jobs) expect(sqsJson(j).length).toBeLessThanOrEqual(INLINE_JOB_LIMIT_BYTES);
  });

  it('leaves room for the retry state under the 256 KiB limits of SQS and Step Functions', () => {
    const m = message('M', 'z'.repeat(INLINE_JOB_LIMIT_BYTES - jobBytes(job('webhook', message('M', '', { size: 1 })))), { size: 1 });
    const [j] = packJobs([job('webhook', m)]).jobs;
    expect('message' in j).toBe(true);
    const retryJob = { ...j, retry: { attempts: 20, last_error: 'timeout after 30 s' } };
    const input = retryExecutionInput({ job: retryJob, attempts: 20, wait_seconds: 86400, last_error: 'timeout after 30 s', outcome: 'retry' });
    expect(bytes(input)).toBeLessThanOrEqual(STATE_DATA_LIMIT_BYTES);
    // The Queue state's input: its SendMessage parameters, the body as the starter made it.
    expect(bytes({ QueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries', MessageBody: input.body, MessageGroupId: j.namespace })).toBeLessThanOrEqual(STATE_DATA_LIMIT_BYTES);
  });

  it('sizes a job of quotes by its retry execution input, where each is escaped twice (4 bytes)', () => {
    // 40,000 empty JSON strings: 117 KiB of payload, 200 KB of SQS body, 360 KB of execution input.
    const quotes = message('Q', JSON.stringify(Array.from({ length: 40_000 }, () => '')));
    expect(sqsJson(job('w', quotes)).length).toBeLessThan(INLINE_JOB_LIMIT_BYTES);
    expect(packJobs([job('w', quotes)]).stored.map((m) => m.message_id)).toEqual(['Q']);
  });
});

describe('stored messages', () => {
  it('are one item per message in the metadata table, under its own key, counting its jobs, with a ttl past any retry schedule', () => {
    const m = message('M1', 'x'.repeat(MAX_PAYLOAD_BYTES));
    const now = Date.UTC(2026, 0, 1, 12);
    const put = buildStoreMessage('acme', { message: m, jobs: 3 }, now);
    expect(put.input.TableName).toBe('msg-meta');
    expect(put.input.Item).toEqual({ pk: 'NS#acme#WHMSG#M1', sk: '#MESSAGE', message: m, pending: 3, ttl: now / 1000 + STORED_MESSAGE_TTL_SECONDS });
    // 14 days in SQS at most, then the longest schedule any webhook configuration allows.
    expect(STORED_MESSAGE_TTL_SECONDS).toBeGreaterThan(14 * 86400 + MAX_RETRY_COUNT * MAX_MAX_RETRY_DELAY);
    expect(put.input.ConditionExpression).toBeUndefined();
  });
});

describe('the local Step Functions runner refuses what AWS refuses', () => {
  it('Step Functions: an execution input above 256 KiB fails to start', async () => {
    const wf = new LocalRetryWorkflow(async () => undefined, () => undefined, { queueUrl: 'http://127.0.0.1:1/000000000000/unused' });
    const huge: RetryState = { job: job('w', message('M', 'x'.repeat(MAX_PAYLOAD_BYTES))), attempts: 1, wait_seconds: 0, last_error: 'HTTP 500', outcome: 'retry' };
    await expect(wf.start('n', huge)).rejects.toMatchObject({ name: 'ValidationException' });
    expect(wf.running).toBe(0);
    await wf.stop();
  });
});
