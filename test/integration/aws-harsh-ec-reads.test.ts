/**
 * The eventually consistent reads of local/aws-harsh/dynamodb-reads.ts against DynamoDB Local:
 * a read without ConsistentRead may miss the writes of the lag, as in AWS
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
 * The plugin is put on a client of this test with a clock of its own, whatever the default is.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { tableName } from '../../lambda/core/storage/client';
import { ecReadLagMs, ecReadLagPlugin, project } from '../../local/aws-harsh/dynamodb-reads';

jest.setTimeout(30_000);

const LAG = 1000;
let clock = 1_000_000;
const raw = new DynamoDBClient({ endpoint: process.env.MSG_DYNAMODB_ENDPOINT, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
raw.middlewareStack.use(ecReadLagPlugin({ ...process.env, MSG_AWS_HARSH_EC_READS: String(LAG) }, () => clock));
const doc = DynamoDBDocumentClient.from(raw);
afterAll(() => raw.destroy());

const T = () => tableName('meta');
const pkOf = () => `EC#${randomBytes(4).toString('hex')}`;
const get = async (pk: string, sk = 'A', extra: Record<string, unknown> = {}) => (await doc.send(new GetCommand({ TableName: T(), Key: { pk, sk }, ...extra }))).Item;
const put = (item: Record<string, unknown>) => doc.send(new PutCommand({ TableName: T(), Item: item }));
const setV = (pk: string, v: number, extra: Record<string, unknown> = {}) =>
  doc.send(new UpdateCommand({ TableName: T(), Key: { pk, sk: 'A' }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': v }, ...extra }));

it('reads the lag from MSG_AWS_HARSH_EC_READS (a second by default)', () => {
  expect(ecReadLagMs({})).toBe(1000);
  expect(ecReadLagMs({ MSG_AWS_HARSH_EC_READS: '0' })).toBe(0);
  expect(ecReadLagMs({ MSG_AWS_HARSH_EC_READS: 'off' })).toBe(0);
  expect(ecReadLagMs({ MSG_AWS_HARSH_EC_READS: 'on' })).toBe(1000);
  expect(ecReadLagMs({ MSG_AWS_HARSH_EC_READS: '250' })).toBe(250);
});

it('hides a new item from eventually consistent gets for the lag, never from consistent ones', async () => {
  const pk = pkOf();
  await put({ pk, sk: 'A', v: 1 });
  expect(await get(pk)).toBeUndefined();
  expect(await get(pk, 'A', { ConsistentRead: true })).toEqual({ pk, sk: 'A', v: 1 });
  clock += LAG - 1;
  expect(await get(pk)).toBeUndefined();
  clock += 1;
  expect(await get(pk)).toEqual({ pk, sk: 'A', v: 1 });
});

it('answers an update and a delete with the image before them, the first write of the window counting', async () => {
  const pk = pkOf();
  await put({ pk, sk: 'A', v: 1 });
  clock += LAG;
  const asked = await setV(pk, 2);
  expect(asked.Attributes).toBeUndefined(); // ALL_OLD asked for the emulation is not handed on
  expect(await get(pk)).toEqual({ pk, sk: 'A', v: 1 });
  clock += LAG / 2;
  const newer = await setV(pk, 3, { ReturnValues: 'ALL_NEW' }); // read before, not ALL_OLD
  expect(newer.Attributes).toEqual({ pk, sk: 'A', v: 3 });
  expect(await get(pk)).toEqual({ pk, sk: 'A', v: 1 });
  clock += LAG / 2;
  expect(await get(pk)).toEqual({ pk, sk: 'A', v: 2 }); // the first update is past the lag
  clock += LAG / 2;
  const old = await doc.send(new DeleteCommand({ TableName: T(), Key: { pk, sk: 'A' }, ReturnValues: 'ALL_OLD' }));
  expect(old.Attributes).toEqual({ pk, sk: 'A', v: 3 });
  expect(await get(pk, 'A', { ConsistentRead: true })).toBeUndefined();
  expect(await get(pk, 'A', { ProjectionExpression: '#v', ExpressionAttributeNames: { '#v': 'v' } })).toEqual({ v: 3 });
  clock += LAG;
  expect(await get(pk)).toBeUndefined();
});

it('records nothing for a write that fails its condition', async () => {
  const pk = pkOf();
  await put({ pk, sk: 'A', v: 1 });
  clock += LAG;
  await expect(setV(pk, 2, { ConditionExpression: 'v = :w', ExpressionAttributeValues: { ':v': 2, ':w': 9 } })).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
  expect(await get(pk)).toEqual({ pk, sk: 'A', v: 1 });
});

it('lags the items of transactions and batch writes, and BatchGetItem sees them as they were', async () => {
  const pk = pkOf();
  await put({ pk, sk: 'A', v: 1, w: 'x' });
  await put({ pk, sk: 'D', v: 4 });
  clock += LAG;
  await doc.send(
    new TransactWriteCommand({
      TransactItems: [
        { Update: { TableName: T(), Key: { pk, sk: 'A' }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': 2 } } },
        { Put: { TableName: T(), Item: { pk, sk: 'B', v: 1 } } },
      ],
    }),
  );
  await doc.send(new BatchWriteCommand({ RequestItems: { [T()]: [{ PutRequest: { Item: { pk, sk: 'C', v: 1 } } }, { DeleteRequest: { Key: { pk, sk: 'D' } } }] } }));
  expect(await get(pk, 'B')).toBeUndefined();
  expect(await get(pk, 'C')).toBeUndefined();
  const keys = ['A', 'B', 'C', 'D'].map((sk) => ({ pk, sk }));
  const batch = await doc.send(new BatchGetCommand({ RequestItems: { [T()]: { Keys: keys, ProjectionExpression: 'v' } } }));
  expect(batch.Responses?.[T()]?.sort((a, b) => a.v - b.v)).toEqual([{ v: 1 }, { v: 4 }]); // A as it was, D not yet deleted
  const consistent = await doc.send(new BatchGetCommand({ RequestItems: { [T()]: { Keys: keys, ConsistentRead: true, ProjectionExpression: 'sk' } } }));
  expect(consistent.Responses?.[T()]?.map((i) => i.sk).sort()).toEqual(['A', 'B', 'C']);
  clock += LAG;
  const later = await doc.send(new BatchGetCommand({ RequestItems: { [T()]: { Keys: keys } } }));
  expect(later.Responses?.[T()]?.map((i) => `${i.sk}${i.v}`).sort()).toEqual(['A2', 'B1', 'C1']);
});

it('queries show an updated item at its old image and hide a new one, pages and counts as the table was', async () => {
  const pk = pkOf();
  for (const sk of ['A', 'C', 'E']) await put({ pk, sk, v: 1 });
  clock += LAG;
  await put({ pk, sk: 'B', v: 1 });
  await put({ pk, sk: 'D', v: 1 });
  await setV(pk, 2);
  const q = (extra: Record<string, unknown> = {}) =>
    doc.send(new QueryCommand({ TableName: T(), KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': pk }, ...extra }));
  expect((await q()).Items?.map((i) => `${i.sk}${i.v}`)).toEqual(['A1', 'C1', 'E1']);
  expect((await q({ ConsistentRead: true })).Items?.map((i) => `${i.sk}${i.v}`)).toEqual(['A2', 'B1', 'C1', 'D1', 'E1']);
  expect((await q({ Select: 'COUNT' })).Count).toBe(3);
  // A page with a Limit is full from the older items, and the next starts after its last one.
  const first = await q({ Limit: 2, ProjectionExpression: 'v' });
  expect(first.Items).toEqual([{ v: 1 }, { v: 1 }]);
  expect(first.LastEvaluatedKey).toEqual({ pk, sk: 'C' });
  const second = await q({ Limit: 2, ExclusiveStartKey: first.LastEvaluatedKey });
  expect(second.Items?.map((i) => i.sk)).toEqual(['E']);
  clock += LAG;
  expect((await q()).Items?.map((i) => `${i.sk}${i.v}`)).toEqual(['A2', 'B1', 'C1', 'D1', 'E1']);
});

it('answers the low-level client in its own (marshalled) form', async () => {
  const pk = pkOf();
  await put({ pk, sk: 'A', v: 1, m: { a: 1, b: 2 } });
  clock += LAG;
  await setV(pk, 2);
  const out = await raw.send(new GetItemCommand({ TableName: T(), Key: { pk: { S: pk }, sk: { S: 'A' } }, ProjectionExpression: 'v, m.a' }));
  expect(out.Item).toEqual({ v: { N: '1' }, m: { M: { a: { N: '1' } } } });
});

it('projects map paths exactly and keeps a list path whole', () => {
  const item = { a: { b: 1, c: 2 }, l: [1, 2], x: 3 };
  expect(project(item, 'a.b, #x', { '#x': 'x' }, false)).toEqual({ a: { b: 1 }, x: 3 });
  expect(project(item, 'l[1], missing.y', undefined, false)).toEqual({ l: [1, 2] });
});
