/**
 * The harsh DynamoDB switch's transaction conflicts (local/aws-harsh/dynamodb-transactions.ts),
 * against DynamoDB Local: a write that meets a transaction on its item is refused as AWS refuses
 * it (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling)
 * and writes nothing; writes to other items go through. A client of its own carries the plugin with
 * a hold of 400 ms after each transaction's answer, so the overlap is certain whatever the load.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient, TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../lambda/core/config';
import { dynamoClient, tableName } from '../../lambda/core/storage/client';
import { transactionConflictPlugin } from '../../local/aws-harsh/dynamodb-transactions';

jest.setTimeout(30_000);

const raw = new DynamoDBClient({ region: 'us-east-1', endpoint: config().dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
raw.middlewareStack.use(transactionConflictPlugin({ ...process.env, MSG_AWS_HARSH_TX_HOLD_MS: '400' }));
// A slow answer to every PutItem (400 ms after DynamoDB Local applied it), so a put stays in flight.
raw.middlewareStack.addRelativeTo(
  (next: any) => async (args: any) => {
    const out = await next(args);
    if (String(args.request?.headers?.['x-amz-target']).endsWith('.PutItem')) await new Promise((r) => setTimeout(r, 400));
    return out;
  },
  { relation: 'after', toMiddleware: 'awsHarshTransactionConflicts', name: 'slowPuts' },
);
const doc = DynamoDBDocumentClient.from(raw);
afterAll(() => raw.destroy());

const META = () => tableName('meta');
const fresh = () => `TXC#${randomBytes(4).toString('hex')}`;
const add = (pk: string) => ({ TableName: META(), Key: { pk, sk: 'X' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } });
const tx = (...pks: string[]) => doc.send(new TransactWriteCommand({ TransactItems: pks.map((pk) => ({ Update: add(pk) })) }));
const n = async (pk: string) => ((await doc.send(new GetCommand({ TableName: META(), Key: { pk, sk: 'X' }, ConsistentRead: true }))).Item?.n as number | undefined) ?? 0;

it('is on the service client in the integration tests', () => {
  expect(dynamoClient().middlewareStack.identify().some((m) => m.startsWith('awsHarshTransactionConflicts'))).toBe(true);
});

it('refuses a single write on an item a transaction holds with TransactionConflictException, and writes nothing', async () => {
  const a = fresh();
  await tx(a);
  const update = doc.send(new UpdateCommand(add(a)));
  await expect(update).rejects.toBeInstanceOf(TransactionConflictException);
  await expect(doc.send(new PutCommand({ TableName: META(), Item: { pk: a, sk: 'X', n: 100 } }))).rejects.toMatchObject({ name: 'TransactionConflictException', $metadata: { httpStatusCode: 400 } });
  expect(await n(a)).toBe(1);
});

it('cancels a transaction that includes an item another transaction holds, one reason per item', async () => {
  const [a, b] = [fresh(), fresh()];
  await tx(a);
  const e = await tx(b, a).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(TransactionCanceledException);
  expect((e as TransactionCanceledException).CancellationReasons).toEqual([{ Code: 'None' }, { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }]);
  expect([await n(a), await n(b)]).toEqual([1, 0]);
});

it('of two concurrent transactions on one item, one is cancelled; on disjoint items neither is', async () => {
  const [a, b, c] = [fresh(), fresh(), fresh()];
  const same = await Promise.allSettled([tx(a), tx(a)]);
  expect(same.map((s) => s.status).sort()).toEqual(['fulfilled', 'rejected']);
  expect((same.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ name: 'TransactionCanceledException' });
  expect(await n(a)).toBe(1);
  const disjoint = await Promise.allSettled([tx(b), tx(c), doc.send(new UpdateCommand(add(fresh())))]);
  expect(disjoint.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
  expect([await n(b), await n(c)]).toEqual([1, 1]);
});

it('cancels a transaction that meets a single write in flight on one of its items', async () => {
  const a = fresh();
  const put = doc.send(new PutCommand({ TableName: META(), Item: { pk: a, sk: 'X', n: 10 } }));
  await new Promise((r) => setTimeout(r, 100));
  await expect(tx(a)).rejects.toMatchObject({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'TransactionConflict' }] });
  await put;
  expect(await n(a)).toBe(10);
});

it('releases the items after the hold', async () => {
  const a = fresh();
  await tx(a);
  await new Promise((r) => setTimeout(r, 600));
  await doc.send(new UpdateCommand(add(a)));
  await tx(a);
  expect(await n(a)).toBe(3);
});
