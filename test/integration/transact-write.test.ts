/**
 * lambda/core/storage/client.ts `transactWrite`'s ClientRequestToken, against DynamoDB Local: a
 * transaction cancelled on a conflict (nothing written) goes again with a new token while no try
 * may have been applied; once one may have (an error after DynamoDB applied it), every further
 * try, of this call or of the caller's next call with the same `OnceToken`, carries that token,
 * which DynamoDB does not apply twice ("subsequent TransactWriteItems calls with the same client
 * token return successfully without making any changes",
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html#DDB-TransactWriteItems-request-ClientRequestToken).
 */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, onceToken, tableName, transactWrite } from '../../lambda/core/storage/client';
import { injectDynamoFault, recordDynamoCalls, type RecordedCall } from '../fixtures/dynamo-calls';

jest.setTimeout(30_000);

const META = () => tableName('meta');
const fresh = () => ({ pk: `TXW#${randomBytes(4).toString('hex')}`, sk: 'X' });
const addOne = (Key: { pk: string; sk: string }) => ({ TransactItems: [{ Update: { TableName: META(), Key, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } } }] });
const n = async (Key: { pk: string; sk: string }) => ((await ddb().send(new GetCommand({ TableName: META(), Key, ConsistentRead: true }))).Item?.n as number | undefined) ?? 0;
/** The TransactWriteItems calls on this item. */
const onItem = (pk: string) => (c: RecordedCall) => /^TransactWrite(Items)?Command$/.test(c.command) && JSON.stringify(c.input).includes(pk);
/** What AWS answers a transaction that met another on its item (the harsh layer answers the same). */
const conflict = { name: 'TransactionCanceledException', fields: { CancellationReasons: [{ Code: 'TransactionConflict' }] } };

it('sends a transaction cancelled on a conflict again with a new token, and applies it once', async () => {
  const key = fresh();
  const rec = recordDynamoCalls();
  const fault = injectDynamoFault({ when: onItem(key.pk), mode: 'before', times: 2, ...conflict });
  fault.arm();
  try {
    await transactWrite(addOne(key));
  } finally {
    fault.stop();
    rec.stop();
  }
  const tokens = rec.calls.filter(onItem(key.pk)).map((c) => c.input.ClientRequestToken);
  expect(tokens).toHaveLength(3);
  expect(new Set(tokens).size).toBe(3);
  expect(await n(key)).toBe(1);
});

it("keeps the token of a try that may have been applied, across the caller's next call and its conflicts", async () => {
  const key = fresh();
  const once = onceToken();
  const rec = recordDynamoCalls();
  try {
    // Applied, and its answer lost: the call fails, its outcome unknown to the caller.
    const lost = injectDynamoFault({ when: onItem(key.pk), mode: 'after', name: 'InternalServerError' });
    lost.arm();
    await expect(transactWrite(addOne(key), { once })).rejects.toMatchObject({ name: 'InternalServerError' });
    lost.stop();
    expect(once.maybeApplied).toBe(true);
    // The caller sends it again; two tries meet a conflict first.
    const conflicts = injectDynamoFault({ when: onItem(key.pk), mode: 'before', times: 2, ...conflict });
    conflicts.arm();
    await transactWrite(addOne(key), { once });
    conflicts.stop();
  } finally {
    rec.stop();
  }
  expect(await n(key)).toBe(1);
  const tokens = rec.calls.filter(onItem(key.pk)).map((c) => c.input.ClientRequestToken);
  expect(tokens).toEqual([once.token, once.token, once.token, once.token]);
});

it('refuses a token sent again with other parameters, as AWS does (IdempotentParameterMismatchException)', async () => {
  // lambda/webhooks/storage/webhook-delivery-once.ts derives a take's token from its delivery and hand-off,
  // so a repeat must be the same request: one that is not must fail, not pass as applied.
  const key = fresh();
  const once = onceToken();
  once.maybeApplied = true;
  await transactWrite(addOne(key), { once });
  const other = { TransactItems: [{ Update: { TableName: META(), Key: key, UpdateExpression: 'ADD n :two', ExpressionAttributeValues: { ':two': 2 } } }] };
  await expect(transactWrite(other, { once })).rejects.toMatchObject({ name: 'IdempotentParameterMismatchException' });
  expect(await n(key)).toBe(1);
});
