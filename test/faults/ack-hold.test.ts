/**
 * Acks near the end of a delivery's sure visibility (lambda/queues/ack.ts: the extension an ack
 * sends before deleting, and the deletes it does not check), under placed faults on the real SQS
 * client in front of fauxqs and the harsh layer. "An ack answered 200 is never followed by a
 * delivery of that message" and exact counters are what each case attacks.
 */
import { unique } from '../fixtures/queues';
import { type LatencyRule } from './fault-kinds';
import { placedFaults } from './placed';

jest.setTimeout(45_000);

const t = placedFaults({ namespace: 'fault-ack-hold', seed: 3, services: ['dynamodb', 'sqs'] });

type Got = { message_id: string; receipt_handle: string };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newQueue() {
  const name = unique('q');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  return name;
}
const publish = async (name: string, payload: string) => expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload })).status).toBe(201);
const consume = async (name: string, body: Record<string, unknown>) =>
  ((await t.api.call('POST', `/queues/${name}/messages/consume`, { max_messages: 1, ...body })).body?.data.messages ?? []) as Got[];
const messageCount = async (name: string) => (await t.api.call('GET', `/queues/${name}`)).body?.data.message_count as number;

/** A consume whose SQS answer comes back `slowMs` late (a loaded function): its handle's `u` is late by about `slowMs` - 1 s. */
async function slowConsume(name: string, visibility: number, slowMs: number): Promise<Got> {
  const slow: LatencyRule = { service: 'sqs', command: 'ReceiveMessageCommand', ms: slowMs, phase: 'after' };
  t.injector.addLatency(slow);
  try {
    const [m] = await consume(name, { timeout_seconds: 0, visibility_timeout_seconds: visibility });
    expect(m).toBeDefined();
    return m;
  } finally {
    t.injector.removeLatency(slow);
  }
}

afterEach(() => {
  t.injector.clearLatency();
  t.injector.clearOneShots();
});

describe('acks near the end of the sure visibility', () => {
  it('does not answer 200 for a batch entry sent without the check whose delete waited behind the slow answer of the check of another entry', async () => {
    const name = await newQueue();
    // m1: a normal receive, visibility 6 s: unsure (within 2 s of its `e`) by the time of the ack.
    await publish(name, 'one');
    const [m1] = await consume(name, { timeout_seconds: 0, visibility_timeout_seconds: 6 });
    expect(m1).toBeDefined();
    // m2: visibility 9 s, answer 4 s late: SQS's visibility ends ~9 s after the request, `u` ~3 s later.
    await publish(name, 'two');
    const m2 = await slowConsume(name, 9, 4000);
    // The check of m1 (ChangeMessageVisibilityBatch) is applied at once, its answer comes back 6 s later.
    t.injector.addLatency({ service: 'sqs', command: 'ChangeMessageVisibilityBatchCommand', ms: 6000, phase: 'after' });
    const ack = t.api.call('POST', `/queues/${name}/messages/ack`, { entries: [m1, m2] });
    await sleep(200);
    // Another consumer long-polls: m2 is visible again in SQS (~9 s after its receive's request).
    const [other] = await consume(name, { timeout_seconds: 8, visibility_timeout_seconds: 30 });
    const res = await ack;
    expect(other?.message_id).toBe(m2.message_id);
    const r2 = (res.body?.data.results as { message_id: string; acknowledged: boolean }[]).find((r) => r.message_id === m2.message_id);
    // m2's delete reached SQS after the other consumer had it (superseded handle: ignored): not acknowledged.
    expect(r2?.acknowledged).toBe(false);
  });

  it('does not answer 200 for an ack sent more than 2 s before its sure visibility end whose delete reached SQS after it', async () => {
    const name = await newQueue();
    await publish(name, 'm');
    // Visibility 9 s, answer 4 s late: `e` ~5 s ahead when the consume answers (no check), `u` ~3 s after SQS's end.
    const m = await slowConsume(name, 9, 4000);
    // The delete's request is slow to reach SQS (5.5 s: a loaded function, a retried attempt).
    t.injector.failNext({ service: 'sqs', command: 'DeleteMessageBatchCommand', timing: 'before', attempts: 0, delayMs: 5500 });
    const ack = t.api.call('POST', `/queues/${name}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle });
    await sleep(200);
    const [other] = await consume(name, { timeout_seconds: 8, visibility_timeout_seconds: 30 });
    const res = await ack;
    expect(t.injector.unused).toBe(0);
    expect(other?.message_id).toBe(m.message_id);
    // The delete met a superseded handle (SQS ignored it): the message is the other consumer's.
    expect({ status: res.status, code: res.code }).toEqual({ status: 409, code: 'INVALID_RECEIPT_HANDLE' });
  });

  it('keeps message_count exact when a batch acks a superseded handle and then the current one of the same message', async () => {
    const name = await newQueue();
    await publish(name, 'm');
    // As in faults/ack: visibility 3 s, answer 4 s late, another consumer has the message now.
    const stale = await slowConsume(name, 3, 4000);
    const [current] = await consume(name, { timeout_seconds: 5, visibility_timeout_seconds: 30 });
    expect(current?.message_id).toBe(stale.message_id);
    // A client acks both deliveries it holds, the old one first: the old one wins the message's
    // record and its check is refused, so the call deletes the message with neither handle.
    const res = await t.api.call('POST', `/queues/${name}/messages/ack`, { entries: [stale, current] });
    expect(res.status).toBe(200);
    expect({ count: await messageCount(name), acknowledged: res.body?.data.acknowledged_count }).toEqual({ count: 1, acknowledged: 0 });
    // The current delivery is still the message's: its ack deletes and counts it once.
    const again = await t.api.call('POST', `/queues/${name}/messages/${current.message_id}/ack`, { receipt_handle: current.receipt_handle });
    expect(again.status).toBe(200);
    expect(await messageCount(name)).toBe(0);
  });

  it('answers an unavailable SQS check as unavailable, not as a superseded handle, when the handle is current', async () => {
    const name = await newQueue();
    await publish(name, 'm');
    // Visibility 2 s: the ack is within 2 s of `e`, so it is checked.
    const [m] = await consume(name, { timeout_seconds: 0, visibility_timeout_seconds: 2 });
    t.injector.failNext({ service: 'sqs', command: 'ChangeMessageVisibilityBatchCommand', kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before', attempts: Number.POSITIVE_INFINITY });
    const res = await t.api.call('POST', `/queues/${name}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle });
    expect(t.injector.unused).toBe(0);
    // Nothing says the handle is not current: 409 "consume it again" is not what happened.
    expect(res.code).not.toBe('INVALID_RECEIPT_HANDLE');
  });
});

describe('what the check costs in the common case', () => {
  it('sends no extension for an ack early in a 30 s visibility, and one for an ack right after a long poll that waited, in a 3 s visibility', async () => {
    // Latency rules of 0 ms count the calls (./injector.ts `delayed`).
    t.injector.addLatency({ service: 'sqs', command: 'ChangeMessageVisibilityBatchCommand', ms: 0 });
    t.injector.addLatency({ service: 'sqs', command: 'DeleteMessageBatchCommand', ms: 0 });
    const calls = (c: string) => t.injector.delayed[`sqs ${c}`]?.calls ?? 0;
    const name = await newQueue();
    await publish(name, 'a');
    const [a] = await consume(name, { timeout_seconds: 0, visibility_timeout_seconds: 30 });
    const before = { hold: calls('ChangeMessageVisibilityBatchCommand'), del: calls('DeleteMessageBatchCommand') };
    expect((await t.api.call('POST', `/queues/${name}/messages/${a.message_id}/ack`, { receipt_handle: a.receipt_handle })).status).toBe(200);
    expect({ hold: calls('ChangeMessageVisibilityBatchCommand') - before.hold, del: calls('DeleteMessageBatchCommand') - before.del }).toEqual({ hold: 0, del: 1 });
    // A long poll that waited: `e` counts from its request, so an ack right away is checked (with a
    // 30 s visibility and a 20 s wait, every ack 8 s or more after the message arrived is).
    const polled = consume(name, { timeout_seconds: 10, visibility_timeout_seconds: 3 });
    await sleep(3000);
    await publish(name, 'b');
    const [b] = await polled;
    const held = calls('ChangeMessageVisibilityBatchCommand');
    expect((await t.api.call('POST', `/queues/${name}/messages/${b.message_id}/ack`, { receipt_handle: b.receipt_handle })).status).toBe(200);
    expect(calls('ChangeMessageVisibilityBatchCommand') - held).toBe(1);
  });
});
