/**
 * A webhook attempt that succeeded is never POSTed again because the bookkeeping after it failed
 * (docs/design/0017-webhook-delivery-once.md): the outcome is recorded first, and an SQS redelivery
 * or a retry of the workflow's Task reads it instead of sending again; success_count counts the
 * delivery once. Faults are injected into the real DynamoDB Local calls after the receiver has
 * answered.
 */
import { until } from '../fixtures/receiver';
import { createWebhook } from '../fixtures/webhooks';
import { queueApi, unique } from '../fixtures/queues';
import { injectDynamoFault, type RecordedCall } from '../fixtures/dynamo-calls';
import { webhookTestbed } from '../fixtures/webhook-testbed';

jest.setTimeout(60_000);

// A failed job is received again after 1 s instead of the stack's visibility timeout.
// 2 s: a job seen again after its visibility ends shows a redelivery within the test's waits; not
// 1 s, which a cold first batch on a loaded machine outlasted before its record existed (two POSTs
// 83 ms apart). In AWS the queue's visibility is minutes, above the function's timeout.
const bed = webhookTestbed('who', { visibilitySeconds: 2 });
const faults: { stop(): void }[] = [];

afterEach(() => faults.splice(0).forEach((f) => f.stop()));

const status = async (name: string) => (await bed.call('GET', `/webhooks/${name}/status`)).body.data;
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A write that moves this namespace's webhook counters (the bookkeeping of a delivery's end). */
const countsDelivery = (c: RecordedCall) => /UpdateItem|TransactWriteItems/.test(c.command) && JSON.stringify(c.input).includes(`NS#${bed.ns.name}#WEBHOOK#`) && JSON.stringify(c.input).includes('#STATUS');

function fault(o: Parameters<typeof injectDynamoFault>[0]) {
  const f = injectDynamoFault(o);
  faults.push(f);
  return f;
}

describe('a successful attempt whose bookkeeping fails', () => {
  // 'after': the counters' write was applied and its answer lost, so SQS delivers the job again
  // and the record stops the second POST. 'before' with a throttle: not applied, after the SDK's
  // retries; the record is tried again before the job fails (before, SQS delivered it again and
  // the receiver got a second POST).
  it.each([
    ['SQS delivers its job again', { mode: 'after' as const }],
    ['recording its outcome is throttled: the record is tried again before the job fails', { mode: 'before' as const, name: 'ThrottlingException' }],
  ])('is not POSTed again when %s', async (_, o) => {
    const f = fault({ when: countsDelivery, ...o });
    const recv = await bed.receivers.start({ onRequest: () => f.arm() });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'once' })).status).toBe(201);
    await until(async () => (await status(w.name)).success_count >= 1, 10_000, 'the success counted');
    expect(f.hits).toHaveLength(1);
    // Several visibility timeouts: a redelivery would have come by now.
    await settle(2500);
    expect(recv.requests).toHaveLength(1);
    expect(await status(w.name)).toMatchObject({ success_count: 1, failure_count: 0 });
  });

  // The counters (docs/design/0018-webhook-delivery-writes.md) are a plain conditional UpdateItem
  // on the writer's own item (no transaction token). A write applied whose answer was lost is sent
  // again with the same sequence number: by the flush's own retry (a timeout is retried) or by the
  // writer's next flush (an error that is not); its condition then fails, which means applied, and
  // nothing is added twice.
  it.each([
    ['the flush sends it again (a timeout)', { name: 'TimeoutError', times: 2 }],
    ['the writer\'s next flush sends it again', { name: 'InjectedFault', times: 1 }],
  ])('counts a delivery once when its counter write was applied and the answer lost, and %s', async (_, o) => {
    const f = fault({ when: countsDelivery, mode: 'after', ...o });
    const recv = await bed.receivers.start({ onRequest: () => f.arm() });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 0 });
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'lost answer' })).status).toBe(201);
    await until(async () => f.hits.length >= 1 && (await status(w.name)).success_count >= 1, 10_000, 'the first success counted');
    // The next batch's flush (this writer's, which has an update waiting) sends the lost one first.
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'next' })).status).toBe(201);
    await until(async () => (await status(w.name)).success_count >= 2, 10_000, 'the second success counted');
    await settle(2500);
    expect(f.hits.length).toBeGreaterThanOrEqual(1);
    expect(recv.requests).toHaveLength(2);
    expect(await status(w.name)).toMatchObject({ success_count: 2, failure_count: 0 });
  });

  it('is not POSTed again when its retry, a delivery job the workflow queued, runs again after its bookkeeping failed', async () => {
    const f = fault({ when: countsDelivery, mode: 'after' });
    const recv = await bed.receivers.start({ failFirst: 1, onRequest: (_r, n) => n === 2 && f.arm() });
    const topic = unique('t');
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: topic, retry_count: 2, retry_delay: 1 });
    expect((await bed.call('POST', `/topics/${topic}/messages`, { payload: 'retried once' })).status).toBe(201);
    await recv.waitFor(2, 10_000);
    await until(async () => (await status(w.name)).success_count >= 1, 10_000, 'the success counted');
    // The workflow ended once it queued the retry job; the job's repeat finds the record ended.
    await until(async () => bed.local.workflow.running === 0, 15_000, 'the workflow execution ended');
    expect(f.hits).toHaveLength(1);
    expect(recv.requests).toHaveLength(2);
    expect(await status(w.name)).toMatchObject({ success_count: 1, failure_count: 0, last_error: null });
  });

  // The hook's publish reads the bindings version first; before it, it spends the namespace's
  // publish budget on the rate-limit counter. Fail either once: the hook runs again, once.
  const bindingsRead = (c: RecordedCall) => c.command === 'GetItemCommand' && c.input.Key?.pk === `NS#${bed.ns.name}` && c.input.Key?.sk === '#BINDINGS';
  const publishCounter = (c: RecordedCall) => c.command === 'UpdateItemCommand' && JSON.stringify(c.input.Key ?? {}).includes(`NS#${bed.ns.name}#RATE#publish#`);
  it.each([
    ['the bindings read fails', { when: bindingsRead, mode: 'before' as const }],
    ['the publish rate-limit counter is throttled', { when: (c: RecordedCall) => publishCounter(c), mode: 'before' as const, name: 'ThrottlingException' }],
  ])('runs its on_success hook once and is not POSTed again when %s first', async (_, o) => {
    const q = queueApi(bed.call);
    const topic = unique('t');
    const done = unique('q');
    await q.create({ name: done, topic_filter: `${topic}/done` });
    const f = fault(o);
    const recv = await bed.receivers.start({ responseBody: 'pong', onRequest: () => f.arm() });
    const w = await createWebhook(bed.call, { url: recv.url, topic_filter: `${topic}/in`, retry_count: 0, on_success: { topic: `${topic}/done`, payload: 'ok {{.response}}' } });
    expect((await bed.call('POST', `/topics/${topic}/in/messages`, { payload: 'x' })).status).toBe(201);
    const first = await until(async () => (await q.consume(done, { max_messages: 10, timeout_seconds: 0 }))[0], 10_000, 'the hook message');
    expect(first.payload).toBe('ok pong');
    await settle(2500);
    expect(f.hits).toHaveLength(1);
    expect(recv.requests).toHaveLength(1);
    expect(await q.consume(done, { max_messages: 10, timeout_seconds: 0 })).toHaveLength(0);
    expect(await status(w.name)).toMatchObject({ success_count: 1, failure_count: 0 });
  });
});
