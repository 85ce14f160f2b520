/**
 * A create whose transaction DynamoDB applied but whose answer was lost (a timeout, a 500 after
 * the write) answers as the create it was: 201 with the resource written, not 409 for its own
 * item. Each lost attempt is sent again with the same ClientRequestToken, which DynamoDB does not
 * apply twice and answers as a success
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken).
 */
import { getWebhook } from '../../lambda/webhooks/storage/webhooks';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';
import type { FaultKind } from './fault-kinds';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'create-lost-answer', seed: 43, services: ['dynamodb'] });

afterEach(() => t.injector.clearOneShots());

const lost: FaultKind[] = [
  { code: 'InternalServerError', status: 500 },
  { code: 'TimeoutError', status: 0 },
];

describe.each(lost.map((k) => [k.code, k] as const))('a webhook create applied with its answer lost (%s)', (_, kind) => {
  it.each([
    ['once, absorbed by the SDK retry', 1],
    ['on every attempt of the call', Number.POSITIVE_INFINITY],
  ])('%s: answers 201 with the webhook it wrote', async (_w, attempts) => {
    const name = unique('lost');
    const matches = (input: Record<string, unknown>) => JSON.stringify(input).includes(`WEBHOOK#${name}`);
    t.injector.failNext({ service: 'dynamodb', command: 'TransactWriteItemsCommand', matches, kind, timing: 'after', attempts });
    const created = await t.api.call('POST', '/webhooks', { name, url: 'http://127.0.0.1:9/hook', topic_filter: `${name}/#`, enabled: false });
    const stored = await getWebhook(t.namespace, name);
    expect({ status: created.status, code: created.body?.error?.code, stored: stored?.name === name }).toEqual({ status: 201, code: undefined, stored: true });
  });
});

it('a queue create applied with every answer lost answers 201 and keeps its SQS queue', async () => {
  const name = unique('lostq');
  const matches = (input: Record<string, unknown>) => JSON.stringify(input).includes(`QUEUE#${name}`);
  t.injector.failNext({ service: 'dynamodb', command: 'TransactWriteItemsCommand', matches, kind: lost[1], timing: 'after', attempts: Number.POSITIVE_INFINITY });
  const created = await t.api.call('POST', '/queues', { name, topic_filter: `${name}/#` });
  expect(created.status).toBe(201);
  expect((await t.api.call('POST', `/topics/${name}/a/messages`, { payload: 'x' })).status).toBe(201);
  const got = await t.api.call('POST', `/queues/${name}/messages/consume`, { timeout_seconds: 2 });
  expect({ status: got.status, n: got.body?.data?.messages?.length }).toEqual({ status: 200, n: 1 });
});
