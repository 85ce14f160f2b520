/**
 * An event-type create (lambda/catalog/storage/event-types.ts, through the counted create of
 * lambda/core/storage/resource-limits.ts `putCounted`) whose TransactWriteItems DynamoDB applied but
 * whose answer was lost (a timeout after the write): the SDK's standard retry sends it again with
 * the same ClientRequestToken (a timeout is transient,
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html), and DynamoDB does
 * not apply a token twice
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken).
 * The create is the client's own: it answers 201, and the type is stored and counted once, never
 * 409 EVENT_TYPE_ALREADY_EXISTS nor 503 for a type it wrote.
 */
import { dynamoClient } from '../../lambda/core/storage/client';
import { eventTypeCount } from '../../lambda/catalog/storage/event-types';
import { publishVersions } from '../../lambda/core/storage/resources';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';

jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/**
 * Runs `run` while the TransactWriteItems attempts that write event type `name` are applied by
 * DynamoDB and their answers lost, the first `times` of them (a TimeoutError after the write, which
 * the SDK retries); answers how many were lost.
 */
async function answersLost<T>(name: string, times: number, run: () => Promise<T>): Promise<{ result: T; lost: number }> {
  let lost = 0;
  const id = `lose-${name.replace(/\W/g, '-')}`;
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName !== 'TransactWriteItemsCommand' || lost >= times) return out;
      // This step sees the HTTP answer before it is read: only a 200 is a write applied.
      if ((out as { response?: { statusCode?: number } }).response?.statusCode !== 200) return out;
      if (!JSON.stringify(args.input).includes(`E#${name}`)) return out;
      lost++;
      throw Object.assign(new Error('injected: answer lost after the write'), { name: 'TimeoutError', $metadata: {} });
    },
    { step: 'deserialize', name: id },
  );
  try {
    return { result: await run(), lost };
  } finally {
    dynamoClient().middlewareStack.remove(id);
  }
}

it.each([
  ['its first attempt', 1],
  ['every attempt', Number.POSITIVE_INFINITY],
])('an event-type create applied with the answer of %s lost answers 201, listed once and counted once', async (_, times) => {
  const ns = await createTestNamespace('catlost');
  const call = client(server.baseUrl, ns.key);
  const name = 'lost/answer';
  const { result, lost } = await answersLost(name, times, () => call('POST', '/event-types', { name }));
  const list = await call('GET', '/event-types?limit=100');
  expect({
    status: result.status,
    code: result.body.error?.code,
    lostAtLeastOne: lost >= 1,
    listed: (list.body.data.event_types as { name: string }[]).map((e) => e.name),
    total: list.body.data.total,
    counted: await eventTypeCount(ns.name),
    // The catalog's version moved with the create, once (publish reloads the catalog on it).
    catalogVersion: (await publishVersions(ns.name)).catalog,
  }).toEqual({ status: 201, code: undefined, lostAtLeastOne: true, listed: [name], total: 1, counted: 1, catalogVersion: 1 });
  // Another request for the same name is refused as a duplicate.
  const again = await call('POST', '/event-types', { name });
  expect({ status: again.status, code: again.body.error?.code }).toEqual({ status: 409, code: 'EVENT_TYPE_ALREADY_EXISTS' });
});
