/**
 * Identical event-type creates at once (same name, same body, one namespace) while every
 * TransactWriteItems answer that writes the type is lost after DynamoDB applied it: the counted
 * create's read-back (lambda/core/storage/resource-limits.ts `putCounted`) takes an item stored
 * exactly as its call wrote it for its own, so each create's item must be told from another
 * create's with the same content (the item's `revision`, lambda/catalog/storage/event-types.ts
 * `itemOf`). One create answers 201, every other 409 EVENT_TYPE_ALREADY_EXISTS, and the type is
 * counted once. An applied attempt whose answer was lost is retried by the SDK with the same
 * ClientRequestToken (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html),
 * which DynamoDB does not apply twice
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken).
 */
import { dynamoClient } from '../../lambda/core/storage/client';
import { eventTypeCount } from '../../lambda/catalog/storage/event-types';
import { client, startTestServer, type TestResponse, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';

jest.setTimeout(60_000);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

it('eight identical creates of one event type at once, every applied answer lost: one 201, seven 409, counted once', async () => {
  const ns = await createTestNamespace('catsame');
  const call = client(server.baseUrl, ns.key);
  const name = 'same/body';
  let lost = 0;
  const id = 'lose-identical-creates';
  dynamoClient().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName !== 'TransactWriteItemsCommand') return out;
      // This step sees the HTTP answer before it is read: only a 200 is a write applied.
      if ((out as { response?: { statusCode?: number } }).response?.statusCode !== 200) return out;
      if (!JSON.stringify(args.input).includes(`E#${name}`)) return out;
      lost++;
      throw Object.assign(new Error('injected: answer lost after the write'), { name: 'TimeoutError', $metadata: {} });
    },
    { step: 'deserialize', name: id },
  );
  let answers: TestResponse[];
  try {
    answers = await Promise.all(Array.from({ length: 8 }, () => call('POST', '/event-types', { name, description: 'the same body' })));
  } finally {
    dynamoClient().middlewareStack.remove(id);
  }
  const statuses = answers.map((a) => `${a.status} ${a.body.error?.code ?? ''}`.trim()).sort();
  expect({ lostAtLeastOne: lost >= 1, statuses, counted: await eventTypeCount(ns.name) }).toEqual({
    lostAtLeastOne: true,
    statuses: ['201', ...Array(7).fill('409 EVENT_TYPE_ALREADY_EXISTS')],
    counted: 1,
  });
});
