/**
 * An application create (lambda/core/storage/resource-limits.ts `putCounted`) whose transaction
 * DynamoDB applied but whose every answer was lost (a timeout after the write, on every attempt of
 * the call): the application and its count were written, so the create answers 201, as a
 * resource's create does (./resource-create-lost-answer.test.ts), not 503 with a retry that then
 * meets its own item (409). The SDK's retries carry the same ClientRequestToken, which DynamoDB
 * does not apply twice
 * (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken).
 */
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';

jest.setTimeout(60_000);

const t = placedFaults({ namespace: 'app-create-lost-answer', seed: 47, services: ['dynamodb'] });

afterEach(() => t.injector.clearOneShots());

it('an application create applied with every answer lost answers 201, and a client retry meets no 409 for its own create', async () => {
  const uid = unique('app');
  const matches = (input: Record<string, unknown>) => JSON.stringify(input).includes(`APP#${uid}`);
  t.injector.failNext({ service: 'dynamodb', command: 'TransactWriteItemsCommand', matches, kind: { code: 'TimeoutError', status: 0 }, timing: 'after', attempts: Number.POSITIVE_INFINITY });
  const created = await t.api.call('POST', '/applications', { uid });
  // A client told 503 retries: its create was applied, so the retry meets its own application.
  const retried = created.status === 503 ? (await t.api.call('POST', '/applications', { uid })).status : undefined;
  const stored = await t.api.call('GET', `/applications/${uid}`);
  expect({ status: created.status, code: created.body?.error?.code, retried, stored: stored.status }).toEqual({ status: 201, code: undefined, retried: undefined, stored: 200 });
});
