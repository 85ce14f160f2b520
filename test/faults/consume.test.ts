/**
 * Queue consumes under single, placed faults on the real SQS and DynamoDB clients (fauxqs and
 * DynamoDB Local behind them): what a consume that has messages in hand does when a later call
 * fails, and whether a write nothing depends on can fail it.
 */
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';

jest.setTimeout(30_000);

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
});
