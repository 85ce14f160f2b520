/**
 * Queue consumes under single, placed faults on the real SQS and DynamoDB clients (fauxqs and
 * DynamoDB Local behind them): what a consume that has messages in hand does when a later call
 * fails, and whether a write nothing depends on can fail it.
 */
import { unique } from '../fixtures/queues';
import { CONSUME_ANSWER_MS } from '../../lambda/queues/rules/queues';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { slowRequests } from './latency';
import { placedFaults } from './placed';

jest.setTimeout(90_000);

const t = placedFaults({ namespace: 'fault-consume', seed: 2, services: ['dynamodb', 'sqs'] });

async function queueWith(n: number) {
  const name = unique('q');
  expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
  expect((await t.api.call('POST', `/topics/${name}/t/messages/batch`, { messages: Array.from({ length: n }, (_, i) => ({ payload: `m${i}` })) })).status).toBe(201);
  return name;
}

type Consumed = { message_id: string; receive_count: number };
const consume = (name: string, body: Record<string, unknown>) => t.api.call('POST', `/queues/${name}/messages/consume`, { timeout_seconds: 0, visibility_timeout_seconds: 30, ...body });

describe('queue consume under faults', () => {
  it('answers with the messages it has when a later receive fails, and leaves the others visible with no receive used up', async () => {
    const name = await queueWith(15);
    // SQS gives at most 10 per ReceiveMessage: the second call of this consume fails, every attempt.
    let receives = 0;
    t.injector.failNext({
      service: 'sqs',
      command: 'ReceiveMessageCommand',
      kind: { code: 'ServiceUnavailable', status: 503 },
      timing: 'before',
      attempts: Number.POSITIVE_INFINITY,
      matches: () => ++receives === 2,
    });
    const first = await consume(name, { max_messages: 15 });
    expect(t.injector.unused).toBe(0);
    expect(first.status).toBe(200);
    const got = first.body?.data.messages as Consumed[];
    expect(got.length).toBeGreaterThan(0);
    // The rest were never received: visible now, on their first delivery.
    const rest = (await consume(name, { max_messages: 15 })).body?.data.messages as Consumed[];
    expect(rest).toHaveLength(15 - got.length);
    expect(rest.every((m) => m.receive_count === 1)).toBe(true);
    expect(t.api.violations).toEqual([]);
  });

  it('consumes while the consumer record cannot be written (it only feeds consumer_count)', async () => {
    const name = await queueWith(1);
    t.injector.failNext({
      service: 'dynamodb',
      command: 'PutItemCommand',
      kind: { code: 'InternalServerError', status: 500 },
      timing: 'before',
      attempts: Number.POSITIVE_INFINITY,
      matches: (input) => JSON.stringify(input).includes('CONSUMER#'),
    });
    const res = await consume(name, { max_messages: 1, consumer_id: 'c-recorded-later' });
    expect(t.injector.unused).toBe(0);
    expect(res.status).toBe(200);
    expect(res.body?.data.messages).toHaveLength(1);
  });

  it("answers within its deadline when a long poll's answer is lost late and the SDK retries it", async () => {
    const name = unique('q');
    expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 1500)); // SQS knows a new queue after about a second
    // The first long poll waits its 20 s on the empty queue, then its answer is lost (a
    // connection reset): the SDK's retry would wait 20 s more, past API Gateway's 29 s.
    t.injector.failNext({ service: 'sqs', command: 'ReceiveMessageCommand', kind: { code: 'TimeoutError', status: 0 }, timing: 'after', attempts: 1 });
    const started = Date.now();
    const res = await consume(name, { timeout_seconds: 30 });
    const took = Date.now() - started;
    expect(t.injector.unused).toBe(0);
    expect([res.status, res.body?.data.messages]).toEqual([200, []]);
    expect(took).toBeLessThan(CONSUME_ANSWER_MS + 1000);
    expect(t.api.violations).toEqual([]);
  });

  it("keeps a handle's validity at least a second inside SQS's visibility, which began before the answer was read", async () => {
    const name = unique('q');
    expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 1500));
    // A long poll that a message ends 3 s in (its receive waited more than a second: the first,
    // unslotted second of the wait is a receive of its own): SQS starts the visibility when it
    // delivers, before the answer travels and is parsed (up to 10 x 1 MiB).
    const polled = consume(name, { timeout_seconds: 10, visibility_timeout_seconds: 30 });
    await new Promise((r) => setTimeout(r, 3000));
    expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'p' })).status).toBe(201);
    const res = await polled;
    const answeredAt = Date.now();
    const [m] = res.body?.data.messages as { receipt_handle: string }[];
    const { u } = JSON.parse(Buffer.from(m.receipt_handle.split('.')[1], 'base64url').toString()) as { u: number };
    expect(u).toBeLessThanOrEqual(answeredAt + 30_000 - 1000);
    expect(u).toBeGreaterThan(answeredAt + 30_000 - 5000);
  });

  it('answers within its deadline when deleting what it settles hangs', async () => {
    const name = unique('q');
    expect((await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#`, message_ttl_seconds: 1 })).status).toBe(201);
    expect((await t.api.call('POST', `/topics/${name}/t/messages`, { payload: 'expires' })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 1500)); // past its TTL: the consume removes it
    // SQS's answer to the delete takes 35 s (the network, where an abort can cut it off).
    const restore = slowRequests(sqsClient(), 'DeleteMessageBatch', 35_000);
    const started = Date.now();
    const res = await consume(name, { timeout_seconds: 0 }).finally(restore);
    const took = Date.now() - started;
    expect([res.status, res.body?.data.messages]).toEqual([200, []]);
    expect(took).toBeLessThan(CONSUME_ANSWER_MS + 1000);
  });
});
