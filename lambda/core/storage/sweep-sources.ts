/**
 * The sweeper's view of the metadata table (lambda/sweeper/tasks.ts): the namespaces that have
 * resources of a kind, found one at a time through the sparse `resourcesByKind` index; a
 * namespace's resources of a kind a page at a time; and the purge jobs of deleted resources with
 * their progress. Every read is a page: nothing here grows with the number of resources.
 */
import { DeleteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from './client';
import { metaKeys, type ResourceKind } from './keys';
import { purgeJobKey, type PurgeJob, type ResourceItem } from './resources';

/**
 * The first namespace after `afterNs` (in name order; from the start without it) that has a
 * resource of `kind`: one index Query of one entry, however many resources each namespace holds.
 */
export async function nextNamespaceWith(kind: ResourceKind, afterNs?: string): Promise<string | undefined> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      IndexName: 'resourcesByKind',
      KeyConditionExpression: afterNs === undefined ? 'kind = :k AND begins_with(pk, :ns)' : 'kind = :k AND pk > :after',
      ExpressionAttributeValues: { ':k': kind, ...(afterNs === undefined ? { ':ns': 'NS#' } : { ':after': metaKeys.namespacePk(afterNs) }) },
      ProjectionExpression: 'pk',
      Limit: 1,
    }),
  );
  const pk = (out.Items?.[0] as { pk?: string } | undefined)?.pk;
  return pk?.startsWith('NS#') ? pk.slice(3) : undefined;
}

/**
 * Up to `limit` resources of a kind in one namespace, by name, after the resource key `afterSk`;
 * `more` when the namespace holds further ones.
 */
export async function resourcesPage<T extends ResourceItem>(ns: string, kind: ResourceKind, afterSk: string | undefined, limit: number): Promise<{ items: (T & { sk: string })[]; more: boolean }> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': metaKeys.namespacePk(ns), ':p': metaKeys.resourcePrefix(kind) },
      ...(afterSk ? { ExclusiveStartKey: { pk: metaKeys.namespacePk(ns), sk: afterSk } } : {}),
      // One more than wanted: a Query that stops at its Limit returns a LastEvaluatedKey even when
      // nothing follows, so only an extra item tells that more are left.
      Limit: limit + 1,
    }),
  );
  const items = (out.Items ?? []) as (T & { sk: string })[];
  // Fewer items than asked and a LastEvaluatedKey: the page hit DynamoDB's 1 MB cap first.
  return { items: items.slice(0, limit), more: items.length > limit || out.LastEvaluatedKey !== undefined };
}

/** Up to `limit` purge jobs of a kind after the job key `afterSk` (the sweeper's round over them). */
export async function purgeJobsPage(kind: ResourceKind, afterSk: string | undefined, limit: number): Promise<{ jobs: (PurgeJob & { sk: string })[]; more: boolean }> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': 'PURGE', ':p': `${kind}#` },
      ...(afterSk ? { ExclusiveStartKey: { pk: 'PURGE', sk: afterSk } } : {}),
      Limit: limit,
      // Strongly consistent, as storage/resources.ts `purgeJobs`: a round right after a delete
      // finds its job (one small partition, read once a round).
      ConsistentRead: true,
    }),
  );
  // A full page may be the last one (DynamoDB still returns a LastEvaluatedKey): the next call
  // then finds none and ends the round.
  return { jobs: (out.Items ?? []) as (PurgeJob & { sk: string })[], more: out.LastEvaluatedKey !== undefined };
}

/** Removes a finished purge job. */
export async function closePurgeJob(kind: ResourceKind, id: string): Promise<void> {
  await ddb().send(new DeleteCommand({ TableName: tableName('meta'), Key: purgeJobKey(kind, id) }));
}

/** Stores a purge job's progress (kind-specific fields) for the next run. */
export async function savePurgeProgress(kind: ResourceKind, id: string, progress: Record<string, number | string>): Promise<void> {
  const names = Object.keys(progress);
  await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: purgeJobKey(kind, id),
      UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#f${i}`, n])),
      ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:v${i}`, progress[n]])),
    }),
  ).catch((e) => {
    if (!isConditionFailed(e)) throw e;
  });
}
