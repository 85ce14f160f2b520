/**
 * The deferred publish count (docs/rate-limits.md "The fan-out budget", DESIGN.md
 * section 10): the middleware leaves an API publish's count to the publish path, which counts it
 * with its fan-out writes in one conditional UpdateItem after the bindings are matched, the
 * payloads checked and the held quota reserved. What the request does before that write is done
 * by requests the limit then refuses, and a failed count is counted again by the middleware.
 * On the local engines (DynamoDB Local, fauxqs); races are placed with the shared document
 * client's gates (fixtures/held-sends.ts) and faults (fixtures/dynamo-calls.ts).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { holdSends, sendGate } from '../fixtures/held-sends';
import { injectDynamoFault } from '../fixtures/dynamo-calls';
import { until } from '../fixtures/receiver';
import { sleep } from '../../lambda/core/rules/clock';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, dynamoClient, tableName } from '../../lambda/core/storage/client';
import { counterKey } from '../../lambda/limits/storage/rate-limits';
import { windowOf } from '../../lambda/core/rules/rate-limits';
import { heldUsage } from '../../lambda/limits/storage/held-quota';
import { run } from '../../bin/admin';

jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());
afterEach(() => jest.restoreAllMocks());

/** Waits for the next minute when fewer than `seconds` are left in this one (fixed windows). */
async function roomInWindow(seconds = 20) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await sleep(left + 50);
}

/** The API publish's one write: its request count and its fan-out charge (storage/rate-limits.ts countAndChargeParams). */
const isCountAndCharge = (input: Record<string, unknown> | undefined, ns: string) =>
  input !== undefined && String(input.UpdateExpression).startsWith('ADD #c :one, #f :n SET #ttl = :ttl') && JSON.stringify(input.Key ?? {}).includes(`NS#${ns}#RATE#publish#`);

const publishCount = async (ns: string, window = windowOf(Date.now())) =>
  (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: counterKey({ namespace: ns, category: 'publish', window }), ConsistentRead: true }))).Item?.count;

const HOUR = 3600;

it('a publish the limit refuses reserves no held room that another publish is then refused for', async () => {
  const ns = await createTestNamespace('rlrv', { publish: 1, consume: 1000, management: 1000 });
  const io = { out: () => undefined, err: () => undefined, env: process.env };
  expect(await run(['resource-limit', 'set', ns.name, 'held-messages', '1', '--json'], io as never)).toBe(0);
  const call = client(server.baseUrl, ns.key);
  const q = queueApi(call);
  const { topic } = await q.createOnOwnTopic();
  await roomInWindow();
  // A's count reaches DynamoDB late (a slow write, as under load); B comes meanwhile.
  const gate = sendGate();
  holdSends((cmd) => (isCountAndCharge((cmd as { input?: Record<string, unknown> }).input, ns.name) ? gate : undefined));
  const a = call('POST', `/topics/${topic}/messages`, { payload: 'a', delay_seconds: 2 * HOUR });
  await until(async () => gate.held, 20_000, "A's count held");
  const b = await call('POST', `/topics/${topic}/messages`, { payload: 'b', delay_seconds: 2 * HOUR });
  gate.release();
  const answers = [(await a).status, b.status];
  // One request of the minute: one of the two is published, the other refused 429 (nothing
  // refused for a held room that only a refused request took).
  expect({ answers: [...answers].sort(), held: (await heldUsage(ns.name)).messages }).toEqual({ answers: [201, 429], held: 1 });
});

it('a publish whose counter is throttled answers 503 without a second write counting it', async () => {
  const ns = await createTestNamespace('rlrv', { publish: 5, consume: 1000, management: 1000 });
  const call = client(server.baseUrl, ns.key);
  const { topic } = await queueApi(call).createOnOwnTopic();
  await roomInWindow();
  const window = windowOf(Date.now());
  // The writes to the namespace's publish counter, each call once (outside the SDK's retries).
  let counterWrites = 0;
  const watch = `counter-writes-${ns.name}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (/^Update(Item)?Command$/.test(String(context.commandName)) && JSON.stringify(input.Key ?? {}).includes(`NS#${ns.name}#RATE#publish#`)) counterWrites++;
      return next(args);
    },
    { step: 'initialize', name: watch, priority: 'high' },
  );
  const count = injectDynamoFault({
    when: (c) => isCountAndCharge(c.input, ns.name),
    mode: 'before',
    times: 1,
    name: 'ThrottlingException',
    fields: { $fault: 'client', $metadata: { httpStatusCode: 400 } },
  });
  count.arm();
  let res;
  try {
    res = await call('POST', `/topics/${topic}/messages`, { payload: 'throttled' });
  } finally {
    count.stop();
    ddb().middlewareStack.remove(watch);
  }
  expect(count.hits).toHaveLength(1);
  expect(res.status).toBe(503);
  // docs/rate-limits.md "Failures": a throttled counter answers 503 and the limiter fails closed;
  // "an API publish call costs one counter write, not two".
  expect({ counterWrites, counted: (await publishCount(ns.name, window)) ?? 0 }).toEqual({ counterWrites: 1, counted: 0 });
});

it('300 concurrent publishes (single, batch and 404) accept exactly the limit, each counted answer one distinct Remaining', async () => {
  const limit = 60;
  const ns = await createTestNamespace('rlrv', { publish: limit, consume: 1000, management: 1000 });
  const call = client(server.baseUrl, ns.key);
  const q = queueApi(call);
  const { name, topic } = await q.createOnOwnTopic();
  await roomInWindow(40);
  const window = windowOf(Date.now());
  const kinds = Array.from({ length: 300 }, (_, i) => (['single', 'batch', 'missing'] as const)[i % 3]);
  const answers = await Promise.all(
    kinds.map((k, i) =>
      k === 'single'
        ? call('POST', `/topics/${topic}/messages`, { payload: `s${i}` })
        : k === 'batch'
          ? call('POST', `/topics/${topic}/messages/batch`, { messages: [1, 2, 3].map((j) => ({ payload: `b${i}.${j}` })) })
          : call('POST', `/topics/nobody/${i}/messages`, { payload: 'x' }),
    ),
  );
  const counted = answers.filter((r) => r.status !== 429);
  const remaining = counted.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y);
  expect(remaining).toEqual(Array.from({ length: limit }, (_, i) => i));
  expect(answers.filter((r) => r.status === 429).every((r) => r.headers['x-ratelimit-remaining'] === '0' && r.body.error?.details?.category === 'publish')).toBe(true);
  const messages = answers.reduce((n, r, i) => n + (r.status === 201 ? (kinds[i] === 'batch' ? 3 : 1) : 0), 0);
  const item = (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: counterKey({ namespace: ns.name, category: 'publish', window }), ConsistentRead: true }))).Item;
  expect({ count: item?.count, fanout: item?.fanout ?? 0, stored: (await q.get(name)).message_count }).toEqual({ count: limit, fanout: messages, stored: messages });
});

it('a publish refused 429 with an Idempotency-Key leaves no record: the same key publishes once the limit allows', async () => {
  const ns = await createTestNamespace('rlrv', { publish: 1, consume: 1000, management: 1000 });
  const io = { out: () => undefined, err: () => undefined, env: process.env };
  const call = client(server.baseUrl, ns.key);
  const q = queueApi(call);
  const { name, topic } = await q.createOnOwnTopic();
  await roomInWindow(40);
  expect((await call('POST', `/topics/${topic}/messages`, { payload: 'first' })).status).toBe(201);
  const send = () => call('POST', `/topics/${topic}/messages`, { payload: 'keyed' }, { 'Idempotency-Key': `k-${name}` });
  const refused = await send();
  expect([refused.status, refused.body.error?.details?.category]).toEqual([429, 'publish']);
  expect(await run(['limits', 'set', ns.name, '--publish', '5', '--json'], io as never)).toBe(0);
  await sleep(10_500); // LIMITS_CACHE_MS
  const again = await send();
  expect([again.status, again.headers['idempotent-replayed']]).toEqual([201, undefined]);
  expect((await q.get(name)).message_count).toBe(2);
});

it('a publish refused 429 writes its counter, its key claim and its deletion, nothing else (docs/rate-limits.md: nothing stored, consumed or changed)', async () => {
  const ns = await createTestNamespace('rlrv', { publish: 1, consume: 1000, management: 1000 });
  const call = client(server.baseUrl, ns.key);
  const { topic } = await queueApi(call).createOnOwnTopic();
  await roomInWindow();
  expect((await call('POST', `/topics/${topic}/messages`, { payload: 'first' })).status).toBe(201);
  const writes: string[] = [];
  const watch = `refused-writes-${ns.name}`;
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      const command = String(context.commandName);
      const ours = JSON.stringify(input).includes(ns.name) || String(input.TableName ?? '').includes('idempotency');
      if (ours && /^(Put|Update|Delete|BatchWrite|TransactWrite)/.test(command)) writes.push(`${command} ${String(input.TableName)}`);
      return next(args);
    },
    { step: 'initialize', name: watch },
  );
  let res;
  try {
    res = await call('POST', `/topics/${topic}/messages`, { payload: 'over', delay_seconds: 2 * HOUR }, { 'Idempotency-Key': `k-${ns.name}` });
  } finally {
    dynamoClient().middlewareStack.remove(watch);
  }
  expect([res.status, res.body.error?.details?.category]).toEqual([429, 'publish']);
  // The count comes before the held reservation (none made), after the key's claim: a refused
  // keyed publish costs the claim and its deletion (docs/rate-limits.md "The fan-out budget").
  expect(writes).toEqual([`PutItemCommand ${tableName('idempotency')}`, `UpdateItemCommand ${tableName('meta')}`, `DeleteItemCommand ${tableName('idempotency')}`]);
});
