/**
 * The harsh DynamoDB switch (local/aws-harsh/dynamodb.ts, on in the integration tests): global
 * secondary indexes lag behind puts, as in AWS
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Reads), while
 * the base table stays read-your-write.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { gsiLagMs } from '../../local/aws-harsh/dynamodb';
import { awsHarshEnabled } from '../../local/aws-harsh';

jest.setTimeout(30_000);

const LAG = gsiLagMs(process.env);
const kindOf = () => `HARSH#${randomBytes(4).toString('hex')}`;
const put = (kind: string, pk: string) => ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { pk, sk: 'X', kind, name: pk } }));
const byKind = (kind: string, extra: Record<string, unknown> = {}) =>
  ddb().send(new QueryCommand({ TableName: tableName('meta'), IndexName: 'resourcesByKind', KeyConditionExpression: 'kind = :k', ExpressionAttributeValues: { ':k': kind }, ...extra }));

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('is on in the integration tests, with a lag of about a second', () => {
  expect(awsHarshEnabled()).toBe(true);
  expect(LAG).toBe(1000);
});

it('hides a put from index queries for the lag, never from a consistent read of the base table', async () => {
  const kind = kindOf();
  const pk = `NS#h-${randomBytes(4).toString('hex')}`;
  const started = Date.now();
  await put(kind, pk);
  expect((await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: { pk, sk: 'X' }, ConsistentRead: true }))).Item).toMatchObject({ kind });
  const early = await byKind(kind);
  if (Date.now() - started < LAG) expect(early.Items).toEqual([]);
  const later = await until(() => byKind(kind), (o) => (o.Items ?? []).length === 1);
  expect(later.Items).toEqual([expect.objectContaining({ pk, kind })]);
  expect(Date.now() - started).toBeGreaterThanOrEqual(LAG - 50);
});

it('hides the puts of a transaction too, and keeps a page full from older items (Limit counts what the index holds)', async () => {
  const kind = kindOf();
  await put(kind, 'NS#a-old');
  await put(kind, 'NS#c-old');
  await until(() => byKind(kind), (o) => (o.Items ?? []).length === 2);
  await ddb().send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: tableName('meta'), Item: { pk: 'NS#b-new', sk: 'X', kind } } }] }));
  const page = await byKind(kind, { Limit: 1, ProjectionExpression: 'pk' });
  expect(page.Items).toEqual([{ pk: 'NS#a-old' }]);
  const next = await byKind(kind, { Limit: 1, ProjectionExpression: 'pk', ExclusiveStartKey: page.LastEvaluatedKey });
  // The new item is still behind: the next page is the other old one, not it.
  expect(next.Items).toEqual([{ pk: 'NS#c-old' }]);
  expect((await until(() => byKind(kind), (o) => (o.Items ?? []).length === 3)).Items?.map((i) => i.pk)).toEqual(['NS#a-old', 'NS#b-new', 'NS#c-old']);
});

it('refuses a consistent read of a global secondary index, as AWS does', async () => {
  await expect(byKind(kindOf(), { ConsistentRead: true })).rejects.toMatchObject({ name: 'ValidationException' });
});
