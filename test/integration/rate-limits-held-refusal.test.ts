/**
 * A publish the held-message quota refuses (docs/schedules.md "Quotas") after its count-and-charge
 * write (docs/rate-limits.md "The fan-out budget"): it stays counted as a request, and the writes
 * it never made are given back to the fan-out budget. On the local engines (DynamoDB Local, fauxqs).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { sleep } from '../../lambda/core/rules/clock';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { counterKey } from '../../lambda/limits/storage/rate-limits';
import { windowOf } from '../../lambda/core/rules/rate-limits';
import { run } from '../../bin/admin';

jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

it('a publish the held quota refuses stays counted and gives its fan-out writes back', async () => {
  const ns = await createTestNamespace('rlhr', { publish: 100, consume: 1000, management: 1000 });
  const io = { out: () => undefined, err: () => undefined, env: process.env };
  expect(await run(['resource-limit', 'set', ns.name, 'held-messages', '1', '--json'], io as never)).toBe(0);
  const call = client(server.baseUrl, ns.key);
  const { topic } = await queueApi(call).createOnOwnTopic();
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await sleep(left + 50);
  const window = windowOf(Date.now());
  const held = { payload: 'h', delay_seconds: 7200 };
  expect((await call('POST', `/topics/${topic}/messages`, held)).status).toBe(201);
  const refused = await call('POST', `/topics/${topic}/messages`, held);
  expect([refused.status, refused.body.error?.code]).toEqual([409, 'LIMIT_EXCEEDED']);
  const item = (await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: counterKey({ namespace: ns.name, category: 'publish', window }), ConsistentRead: true }))).Item;
  // Two requests counted; one write made (1 message x 1 queue), the refused one's given back.
  expect({ count: item?.count, fanout: item?.fanout }).toEqual({ count: 2, fanout: 1 });
});
