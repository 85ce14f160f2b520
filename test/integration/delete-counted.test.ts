/**
 * The counted writes of applications and schedules (lambda/core/storage/resource-limits.ts
 * deleteCounted, lambda/applications/storage/applications.ts createApplication) at once on one counter item: AWS cancels the overlapping transactions with
 * `TransactionConflict` (local/aws-harsh/dynamodb-transactions.ts does too), and each write must
 * still happen and count once.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../../lambda/core/storage/client';
import { deleteCounted } from '../../lambda/core/storage/resource-limits';
import { applicationCount, createApplication } from '../../lambda/applications/storage/applications';

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

it('creates eight applications of one namespace at once, each counted once', async () => {
  const ns = `dc${randomBytes(4).toString('hex')}`;
  const created = await Promise.allSettled(
    Array.from({ length: 8 }, (_, i) => createApplication({ namespace: ns, uid: `app${i}`, created_at: 1, updated_at: 1, version: 1, portal_generation: 0 } as never, 100)),
  );
  expect(created.map((d) => (d.status === 'fulfilled' ? d.value : (d.reason as Error).name))).toEqual(Array(8).fill('created'));
  expect(await applicationCount(ns)).toBe(8);
});
