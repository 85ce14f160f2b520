/**
 * Exactly one POST per delivery after a 2xx, and no delivery lost, where AWS is harsher than the
 * local engines (docs/design/0017-webhook-delivery-once.md): transaction conflicts on the webhook's
 * status item, a job redriven from the DLQ (or deferred) arriving with receive count 1, a
 * StartExecution that stays throttled, and a retry execution that fails. Faults are injected into
 * the real DynamoDB Local calls (SDK middleware) and into the local retry workflow; receivers are
 * real HTTP servers.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { unique } from '../fixtures/queues';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { webhookTestbed } from '../fixtures/webhook-testbed';
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { readDelivery } from '../../lambda/webhooks/storage/webhook-deliveries';
import { deferJobs } from '../../lambda/webhooks/storage/delivery-queue';
import { setRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import { runAction } from '../../lambda/handlers/webhook-attempt';
import { LocalRetryWorkflow } from '../../local/stepfunctions';
import type { RetryState } from '../../lambda/webhooks/rules/delivery';
import { sqsJson } from '../../lambda/core/rules/queue-messages';
import type { PublishedMessage } from '../../lambda/core/rules/message';

jest.setTimeout(90_000);

// A job that throws is received again after 10 s (the stack's: 6 minutes). Long enough that a
// slow first run under test load is never received twice at once, short enough that a job
// reported failed comes back within a test.
const bed = webhookTestbed('whaws', { visibilitySeconds: 10 });
const faults: { stop(): void }[] = [];
afterEach(() => faults.splice(0).forEach((f) => f.stop()));

const status = async (name: string) => (await bed.call('GET', `/webhooks/${name}/status`)).body.data;
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fault(o: Parameters<typeof injectDynamoFault>[0]) {
  const f = injectDynamoFault(o);
  faults.push(f);
  return f;
}

/**
 * The writes that end a delivery: its record (a conditional PutItem) and this namespace's status
 * counters (an UpdateItem on a shard, summed per batch). They were once one
 * transaction, which AWS cancels with TransactionConflict when two overlap on the status item.
 */
const endsDelivery = (c: RecordedCall) => /TransactWrite/.test(c.command) && JSON.stringify(c.input).includes(`NS#${bed.ns.name}#WEBHOOK#`) && JSON.stringify(c.input).includes('#STATUS');
const countsDelivery = (c: RecordedCall) => /^(Update|TransactWrite)/.test(c.command) && JSON.stringify(c.input).includes(`NS#${bed.ns.name}#WEBHOOK#`) && JSON.stringify(c.input).includes('#STATUS');
const recordsDelivery = (c: RecordedCall) => /^(Put|TransactWrite)/.test(c.command) && JSON.stringify(c.input).includes(`NS#${bed.ns.name}#WEBHOOK#`) && JSON.stringify(c.input).includes('#DELIVERY');

/** What AWS answers a write to a partition over its throughput (DynamoDB's own throttle). */
const throttled = { name: 'ProvisionedThroughputExceededException', fields: {} };

/**
 * What AWS answers when two transactions touch one item at once
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
 */
const conflict = {
  name: 'TransactionCanceledException',
  fields: { CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }] },
};

/**
 * Runs `body` with the retry workflow's first `refusals` starts refused as Step Functions refuses
 * a start over its account rate (`onRefuse` sees each refused start first); `refused()` counts them.
 */
async function withThrottledStarts(refusals: number, body: (refused: () => number) => Promise<void>, onRefuse?: (n: number, input: RetryState) => Promise<void>) {
  const real = bed.local.workflow;
  let refused = 0;
  setRetryWorkflow({
    async start(name, input) {
      if (refused >= refusals) return real.start(name, input);
      refused++;
      await onRefuse?.(refused, input);
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    },
  });
  try {
    await body(() => refused);
  } finally {
    setRetryWorkflow(real);
  }
}

describe('one POST after a 2xx, nothing lost', () => {
  it('a transaction conflict on the status item does not make SQS deliver the job again (one POST, counted once)', async () => {
    // No transaction ends a delivery any more; should one come back, its conflict is what AWS does to it.
    const f = fault({ when: endsDelivery, mode: 'before', times: 3, ...conflict });
    const t = fault({ when: countsDelivery, mode: 'before', times: 3, ...throttled });
    const recv = await bed.receivers.start({ onRequest: () => (f.arm(), t.arm()) });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'conflicted' })).status).toBe(201);
    await until(async () => (await status(w.name)).success_count >= 1, 25_000, 'the success counted');
    expect(f.hits.length + t.hits.length).toBeGreaterThanOrEqual(1);
    await settle(1000);
    expect(recv.requests).toHaveLength(1);
    expect(await status(w.name)).toMatchObject({ success_count: 1, failure_count: 0 });
  });

  it('a throttled write of the delivery record or of the counters does not make SQS deliver the job again (one POST, counted once)', async () => {
    const f = fault({ when: recordsDelivery, mode: 'before', times: 3, ...throttled });
    const recv = await bed.receivers.start({ onRequest: () => f.arm() });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'conflicted' })).status).toBe(201);
    await until(async () => (await status(w.name)).success_count >= 1, 25_000, 'the success counted');
    expect(f.hits.length).toBeGreaterThanOrEqual(1);
    await settle(1000);
    expect(recv.requests).toHaveLength(1);
    expect(await status(w.name)).toMatchObject({ success_count: 1, failure_count: 0 });
  });

  it('a job that comes back with receive count 1 (DLQ redrive, deferral) after its 2xx is not POSTed again', async () => {
    const recv = await bed.receivers.start();
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'redriven' })).status).toBe(201);
    await until(async () => (await status(w.name)).success_count >= 1, 15_000, 'the success counted');
    const sent = JSON.parse(recv.requests[0].body.toString('utf8'));
    const item = await getWebhook(bed.ns.name, w.name);
    const message: PublishedMessage = {
      message_id: sent.message_id, topic: sent.topic, payload: sent.payload, content_type: 'text/plain', properties: sent.properties ?? {},
      published_at: Date.parse(sent.timestamp), size: Buffer.byteLength(sent.payload),
    };
    // The same job as a new SQS message: what a DLQ redrive (or a deferral) hands the function.
    await deferJobs([sqsJson({ namespace: bed.ns.name, webhook_id: item!.id, webhook_name: w.name, message })], 0);
    await settle(3000);
    expect(recv.requests).toHaveLength(1);
    expect(await status(w.name)).toMatchObject({ success_count: 1, failure_count: 0 });
  });

  it('a StartExecution still throttled after its retries waits on the queue and starts later: the delivery is retried, not lost', async () => {
    await withThrottledStarts(3, async (refused) => {
      const recv = await bed.receivers.start({ failFirst: 1 });
      const topic = unique('t');
      const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1 });
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'throttled start' })).status).toBe(201);
      await until(async () => (await status(w.name)).success_count >= 1, 60_000, 'the retried delivery counted');
      expect(refused()).toBe(3);
      // Attempt 1 (failed) and attempt 2 (the retry); the waiting start never POSTed again.
      expect(recv.requests).toHaveLength(2);
      expect(await status(w.name)).toMatchObject({ success_count: 1, failure_count: 0 });
    });
  });

  it('a job received again while its throttled StartExecution waits on the queue is not POSTed again', async () => {
    // The original job comes back as well, 2 s after the first refusal: its delete failed, or its
    // visibility ended while the start was being retried.
    const comeBack = async (n: number, input: RetryState) => {
      if (n === 1) await deferJobs([sqsJson(input.job)], 2);
    };
    await withThrottledStarts(
      2,
      async () => {
        // A receiver that always fails: every request is an attempt the delivery counts.
        const recv = await bed.receivers.start({ failFirst: 1000 });
        const topic = unique('t');
        const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1 });
        expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'copy while waiting' })).status).toBe(201);
        await until(async () => (await status(w.name)).failure_count >= 1, 60_000, 'the retried delivery counted');
        await settle(3000);
        // Attempt 1 and the workflow's attempt 2; the copy read `retrying` and sent nothing (without
        // the record it POSTed attempt 1 again: 3 requests).
        expect(recv.requests).toHaveLength(2);
        expect(await status(w.name)).toMatchObject({ success_count: 0, failure_count: 1, next_retry: null });
      },
      comeBack,
    );
  });

  it('a delivery waiting to start its workflow ends dropped, its pending retry given back, when its webhook is disabled meanwhile', async () => {
    await withThrottledStarts(Number.POSITIVE_INFINITY, async (refused) => {
      const recv = await bed.receivers.start({ failFirst: 1000 });
      const topic = unique('t');
      const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 1, retry_delay: 1 });
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'disabled while waiting' })).status).toBe(201);
      // Attempt 1 failed and the start was refused: the delivery waits (5 s) with a retry pending.
      await until(async () => refused() >= 1 && (await status(w.name)).next_retry !== null, 30_000, 'the delivery waiting for its workflow');
      expect((await bed.call('PATCH', `/webhooks/${w.name}`, { enabled: false })).status).toBe(200);
      await until(async () => (await status(w.name)).next_retry === null, 30_000, 'the pending retry given back');
      await settle(2000);
      expect(recv.requests).toHaveLength(1);
      expect(refused()).toBe(1);
      expect(await status(w.name)).toMatchObject({ success_count: 0, failure_count: 0, next_retry: null });
    });
  });

  it('a retry execution that fails (its SendMessage failing past its retries) ends the delivery as failed by the failed-execution rule, also when the rule\'s first runs fail, and keeps its message for replay', async () => {
    const topic = unique('t');
    const recv = await bed.receivers.start({ failFirst: 100 });
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 3, retry_delay: 1 });
    const item = await getWebhook(bed.ns.name, w.name);
    // The rule's first two runs fail reading this webhook's delivery records (EventBridge retries
    // a failed target: the local runner runs it 4 times, 2 s apart); the third ends the delivery.
    const readsRecord = (c: RecordedCall) => /^Get(Item)?Command$/.test(c.command) && JSON.stringify(c.input.Key ?? {}).includes(`${item!.id}#DLV#`);
    const f = fault({ when: readsRecord, mode: 'before', times: 2, name: 'ValidationException' });
    // The same ASL on a queue that does not exist: each SendMessage fails (fauxqs answers as SQS
    // does), the Queue state's retries run out (10 ms apart here) and the execution fails.
    const broken = new LocalRetryWorkflow(async (event) => (f.arm(), runAction(event)), () => undefined, { queueUrl: `${bed.local.queueUrl}-missing`, retryIntervalMs: 10 });
    setRetryWorkflow(broken);
    try {
      expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'doomed' })).status).toBe(201);
      await until(async () => (await status(w.name)).failure_count >= 1, 60_000, 'the delivery counted failed');
      expect(f.hits.length).toBe(2);
      expect(recv.requests).toHaveLength(1);
      const st = await status(w.name);
      expect(st).toMatchObject({ failure_count: 1, success_count: 0, next_retry: null });
      const sent = JSON.parse(recv.requests[0].body.toString('utf8'));
      const rec = await readDelivery({ namespace: bed.ns.name, webhookId: item!.id, messageId: sent.message_id });
      expect(rec).toMatchObject({ outcome: 'failed', ended: true });
      // Like any failed delivery: a final failed entry in the log (bulk replay finds it) and a copy
      // kept for replay (one-by-one replay sends it).
      const since = new Date(Date.now() - 120_000).toISOString();
      await until(async () => (await bed.call('POST', `/webhooks/${w.name}/replay`, { since })).body.data?.queued === 1, 20_000, 'the bulk replay queued the given-up delivery');
      const one = await bed.call('POST', `/webhooks/${w.name}/deliveries/${sent.message_id}/replay`);
      expect(one.status).toBe(200);
    } finally {
      await broken.stop();
      setRetryWorkflow(bed.local.workflow);
    }
  });
});
