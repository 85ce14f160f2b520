/**
 * deleteCounted (lambda/storage/resource-limits.ts: applications and schedules) under deletes at
 * once that share one counter item: AWS cancels the overlapping transactions with
 * `TransactionConflict` (local/aws-harsh/dynamodb-transactions.ts does too), and each delete must
 * still happen and count out once.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/storage/client';
import { deleteCounted } from '../../lambda/storage/resource-limits';

jest.setTimeout(30_000);

it('deletes eight items of one counter at once, each counted out once', async () => {
  const pk = `DC#${randomBytes(4).toString('hex')}`;
  const count = { pk, sk: '#COUNT' };
  await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { ...count, n: 8 } }));
  for (let i = 0; i < 8; i++) await ddb().send(new PutCommand({ TableName: tableName('meta'), Item: { pk, sk: `item${i}` } }));
  const deleted = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => deleteCounted('meta', { pk, sk: `item${i}` }, count)));
  expect(deleted.map((d) => (d.status === 'fulfilled' ? d.value : (d.reason as Error).name))).toEqual(Array(8).fill(true));
  expect((await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: count, ConsistentRead: true }))).Item?.n).toBe(0);
});
