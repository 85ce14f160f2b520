/**
 * Acks under single, placed faults (what the workload of ./faults.test.ts found at random): an
 * ack record write whose answer is lost, in a batch and alone, on the real DynamoDB client in
 * front of DynamoDB Local.
 */
import { unique } from '../fixtures/queues';
import { type LatencyRule, type OneShot } from './fault-kinds';
import { placedFaults } from './placed';

jest.setTimeout(30_000);

const t = placedFaults({ namespace: 'fault-ack', seed: 1, services: ['dynamodb', 'sqs'] });

/** A queue holding `n` messages, all received now with a visibility of `visibility` seconds. */
async function received(n: number, visibility = 30) {
  const name = unique('q');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  const pub = await t.api.call('POST', `/topics/${name}/t/messages/batch`, { messages: Array.from({ length: n }, (_, i) => ({ payload: `m${i}` })) });
  expect(pub.status).toBe(201);
  const got = await t.api.call('POST', `/queues/${name}/messages/consume`, { max_messages: n, timeout_seconds: 0, visibility_timeout_seconds: visibility });
  const messages = got.body?.data.messages as { message_id: string; receipt_handle: string }[];
  expect(messages).toHaveLength(n);
  return { name, entries: messages.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) };
}

/** The ack record write of one message fails: every attempt reaches DynamoDB, every answer is lost. */
const lostRecordWrite = (messageId: string, attempts: number): OneShot => ({
  service: 'dynamodb',
  command: 'PutItemCommand',
  kind: { code: 'ServiceUnavailable', status: 503 },
  timing: 'after',
  attempts,
  matches: (input) => JSON.stringify(input).includes(`#MSG#${messageId}`),
});

const messageCount = async (name: string) => (await t.api.call('GET', `/queues/${name}`)).body?.data.message_count as number;

describe('ack records under lost answers', () => {
  it('acknowledges the other entries of a batch whose record write failed for one, and its retry acknowledges that one', async () => {
    const { name, entries } = await received(5);
    t.injector.failNext(lostRecordWrite(entries[2].message_id, Number.POSITIVE_INFINITY));
    const first = await t.api.call('POST', `/queues/${name}/messages/ack`, { entries });
    expect(t.injector.unused).toBe(0);
    expect(first.status).toBe(200);
    expect(first.body?.data.acknowledged_count).toBe(4);
    expect(first.body?.data.results[2]).toMatchObject({ acknowledged: false, error: { code: 'INTERNAL_ERROR' } });
    // The client retries what failed: the record its failed try may have written is gone again.
    const retry = await t.api.call('POST', `/queues/${name}/messages/ack`, { entries: [entries[2]] });
    expect(retry.body?.data).toMatchObject({ acknowledged_count: 1 });
    expect(await messageCount(name)).toBe(0);
    const again = await t.api.call('POST', `/queues/${name}/messages/consume`, { max_messages: 10, timeout_seconds: 0 });
    expect(again.body?.data.messages).toEqual([]);
  });

  it('answers 200, not 404, to an ack whose record write the SDK retried after a lost answer, and counts it once', async () => {
    const { name, entries } = await received(1);
    t.injector.failNext(lostRecordWrite(entries[0].message_id, 1));
    const ack = await t.api.call('POST', `/queues/${name}/messages/${entries[0].message_id}/ack`, { receipt_handle: entries[0].receipt_handle });
    expect(t.injector.unused).toBe(0);
    expect(ack.status).toBe(200);
    expect(await messageCount(name)).toBe(0);
    // A repeated ack of the same delivery is still 404 (DESIGN.md section 6).
    const repeat = await t.api.call('POST', `/queues/${name}/messages/${entries[0].message_id}/ack`, { receipt_handle: entries[0].receipt_handle });
    expect(repeat.status).toBe(404);
  });

  it('answers a single ack whose record write keeps failing as unavailable with 503 and Retry-After, and its retry succeeds', async () => {
    const { name, entries } = await received(1);
    t.injector.failNext({ ...lostRecordWrite(entries[0].message_id, Number.POSITIVE_INFINITY), timing: 'before' });
    const path = `/queues/${name}/messages/${entries[0].message_id}/ack`;
    const first = await t.api.call('POST', path, { receipt_handle: entries[0].receipt_handle });
    expect({ status: first.status, code: first.code, retryAfter: first.headers['retry-after'] }).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: '1' });
    expect((await t.api.call('POST', path, { receipt_handle: entries[0].receipt_handle })).status).toBe(200);
    expect(await messageCount(name)).toBe(0);
    expect(t.api.violations).toEqual([]);
  });

  it('answers 409, not acknowledged, to an ack whose SQS delete went out after the visibility ended, and the next delivery acks once', async () => {
    const { name, entries } = await received(1, 5);
    const [m] = entries;
    // The ack is judged in time, well inside the sure visibility (so sent without a check), but
    // its delete reaches SQS after another consumer received the message.
    t.injector.failNext({ service: 'sqs', command: 'DeleteMessageBatchCommand', timing: 'before', attempts: 0, delayMs: 6500 });
    const slowAck = t.api.call('POST', `/queues/${name}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle });
    await new Promise((r) => setTimeout(r, 5300));
    const again = await t.api.call('POST', `/queues/${name}/messages/consume`, { max_messages: 1, timeout_seconds: 2, visibility_timeout_seconds: 30 });
    const redelivered = again.body?.data.messages[0] as { message_id: string; receipt_handle: string };
    expect(redelivered?.message_id).toBe(m.message_id);
    const slow = await slowAck;
    expect(t.injector.unused).toBe(0);
    expect({ status: slow.status, code: slow.code }).toEqual({ status: 409, code: 'INVALID_RECEIPT_HANDLE' });
    // The message was not deleted: its current delivery acks it, and the counters move once.
    const ack = await t.api.call('POST', `/queues/${name}/messages/${m.message_id}/ack`, { receipt_handle: redelivered.receipt_handle });
    expect(ack.status).toBe(200);
    expect(await messageCount(name)).toBe(0);
  });
  it('answers 409, not acknowledged, to an ack inside the handle\'s estimated visibility when a slow receive answer let SQS hand the message to another consumer', async () => {
    const name = unique('q');
    expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
    expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'm' })).status).toBe(201);
    // SQS delivers with a visibility of 3 s; the answer comes back 4 s later (a loaded function),
    // so the handle's visibility, estimated from the answer, ends about 2 s after SQS's.
    const slowAnswer: LatencyRule = { service: 'sqs', command: 'ReceiveMessageCommand', ms: 4000, phase: 'after' };
    t.injector.addLatency(slowAnswer);
    const first = await t.api.call('POST', `/queues/${name}/messages/consume`, { max_messages: 1, timeout_seconds: 0, visibility_timeout_seconds: 3 });
    t.injector.removeLatency(slowAnswer);
    const [m] = first.body?.data.messages as { message_id: string; receipt_handle: string }[];
    // Visible again in SQS: another consumer has it now.
    const again = await t.api.call('POST', `/queues/${name}/messages/consume`, { max_messages: 1, timeout_seconds: 5, visibility_timeout_seconds: 30 });
    const other = again.body?.data.messages[0] as { message_id: string; receipt_handle: string };
    expect(other?.message_id).toBe(m.message_id);
    // The first handle is still inside its estimated visibility, but SQS would ignore its delete.
    const stale = await t.api.call('POST', `/queues/${name}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle });
    expect({ status: stale.status, code: stale.code }).toEqual({ status: 409, code: 'INVALID_RECEIPT_HANDLE' });
    // The current delivery acks it, the counters move once, and it is never delivered again.
    expect((await t.api.call('POST', `/queues/${name}/messages/${m.message_id}/ack`, { receipt_handle: other.receipt_handle })).status).toBe(200);
    expect(await messageCount(name)).toBe(0);
    const after = await t.api.call('POST', `/queues/${name}/messages/consume`, { max_messages: 1, timeout_seconds: 0, visibility_timeout_seconds: 1 });
    expect(after.body?.data.messages).toEqual([]);
  });
});
