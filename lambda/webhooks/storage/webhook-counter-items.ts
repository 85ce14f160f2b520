/**
 * Reading and deleting the counter items of a webhook incarnation (./webhook-counters.ts writes
 * and folds them): the total's partition, the writer partitions (keys.ts
 * `webhookCounterPartitions`) and the shard items written before writers.
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from '../../core/storage/batch';
import { ddb, queryAll, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { num } from '../rules/webhook-counter-sums';

/** Counter items per webhook incarnation written before writer items (read, never written now). */
export const COUNTER_SHARDS = 8;

/** The eight shard items written before writer items (read and summed, so their counts survive). */
const shardKeys = (ns: string, webhookId: string) => Array.from({ length: COUNTER_SHARDS }, (_, i) => metaKeys.webhookStatusShard(ns, webhookId, i));

/**
 * Every counter item of one incarnation, as of one moment between folds: the total's partition (a
 * strongly consistent Query), then the writer partitions and the old shards (Queries and a
 * BatchGetItem, at once), then the total's `fold_version` again (a strongly consistent GetItem).
 * Only a fold writes the total, adding writers and deleting them in one transaction, and Queries
 * of several partitions are no snapshot (they read committed items, not isolated from a
 * transaction: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-isolation),
 * so a fold between the first and the last step would count its writers twice or not at all; a
 * changed version makes the read again (folds take writers idle for an hour: a second try holds).
 * One read unit more than the three Queries at once (the GetItem), and two round trips more.
 */
export async function counterItems(ns: string, webhookId: string): Promise<{ partition: Record<string, unknown>[]; shards: Record<string, unknown>[] }> {
  const query = (pk: string) =>
    queryAll<Record<string, unknown>>({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': metaKeys.webhookCounterPrefix },
      ConsistentRead: true,
    });
  const totalKey = metaKeys.webhookStatus(ns, webhookId);
  const versionOf = (items: Record<string, unknown>[]) => num(items.find((i) => i.pk === totalKey.pk && i.sk === totalKey.sk)?.fold_version) ?? 0;
  const [own, ...writerPks] = metaKeys.webhookCounterPartitions(ns, webhookId);
  let read = { partition: [] as Record<string, unknown>[], shards: [] as Record<string, unknown>[] };
  // At most 4 tries; a read whose total a fold changed at every try answers with the last.
  for (let t = 0; t < 4; t++) {
    const first = await query(own);
    const [shards, ...partitions] = await Promise.all([batchGet<Record<string, unknown>>(tableName('meta'), shardKeys(ns, webhookId), true), ...writerPks.map(query)]);
    read = { partition: [...first, ...partitions.flat()], shards };
    const now = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: totalKey, ProjectionExpression: 'fold_version', ConsistentRead: true }));
    if ((num(now.Item?.fold_version) ?? 0) === versionOf(first)) return read;
  }
  return read;
}

/** Removes the counters of a deleted webhook incarnation (the items of its counter partitions and the old shards). */
export async function deleteWebhookStatus(ns: string, webhookId: string) {
  const own = await Promise.all(
    metaKeys.webhookCounterPartitions(ns, webhookId).map((pk) =>
      queryAll<{ pk: string; sk: string }>({
        TableName: tableName('meta'),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': metaKeys.webhookCounterPrefix },
        ProjectionExpression: 'pk, sk',
        ConsistentRead: true,
      }),
    ),
  );
  const keys = [...own.flat().map((i) => ({ pk: i.pk, sk: i.sk })), ...shardKeys(ns, webhookId)];
  await Promise.all(keys.map((Key) => ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key }))));
}
