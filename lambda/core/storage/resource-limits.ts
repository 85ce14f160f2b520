/**
 * Per-namespace caps on resources and on bindings per topic filter (the rules
 * and defaults are in ../domain/resource-limits.ts). An operator's settings live on the namespace
 * item (`queues_limit`, ..., `bindings_per_topic_filter_limit`); the counts are counter items of
 * the namespace's partition, changed only inside the transaction that creates, re-binds or
 * deletes a resource (./resource-writes.ts), under a condition `n < limit`. So two concurrent creates
 * at the cap cannot both pass: DynamoDB serialises the transactions on the counter item, and
 * the second sees the first's count. A delete counts out in its own transaction and frees the
 * slot at once.
 *
 * Cost: one GetItem of the namespace item per create (or re-binding update), and two counter
 * updates in the create's transaction (two more write units each, as transactional writes cost
 * double): a management call, never on the publish path.
 */
import { isDeepStrictEqual } from 'node:util';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName, transactWrite } from './client';
import { metaKeys, type ResourceKind } from './keys';
import { effectiveLimit, LIMIT_NAMES, limitAttribute, limitNameOf, type LimitName } from '../rules/resource-limits';

export type NamespaceCaps = Record<LimitName, number>;

/** The namespace's caps, defaults where an operator set none. */
export async function namespaceCaps(ns: string): Promise<NamespaceCaps> {
  const attrs = LIMIT_NAMES.map(limitAttribute);
  const out = await ddb().send(
    new GetCommand({
      TableName: tableName('meta'),
      Key: metaKeys.namespace(ns),
      // Strongly consistent: a cap an operator just set guards the next create.
      ConsistentRead: true,
      ProjectionExpression: attrs.map((_, i) => `#a${i}`).join(', '),
      ExpressionAttributeNames: Object.fromEntries(attrs.map((a, i) => [`#a${i}`, a])),
    }),
  );
  return Object.fromEntries(LIMIT_NAMES.map((n) => [n, effectiveLimit(n, out.Item?.[limitAttribute(n)])])) as NamespaceCaps;
}

/** Sets one cap of a namespace (admin CLI); false when the namespace does not exist. */
export async function setNamespaceCap(ns: string, name: LimitName, limit: number): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.namespace(ns),
        UpdateExpression: 'SET #a = :l',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#a': limitAttribute(name) },
        ExpressionAttributeValues: { ':l': limit },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** How many resources of each kind the namespace has (the counter items, strongly consistent). */
export async function resourceCount(ns: string, kind: ResourceKind): Promise<number> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.resourceCount(ns, kind), ConsistentRead: true }));
  return Math.max(0, Number(out.Item?.n ?? 0));
}

/** How many resources bind a topic filter in the namespace. */
export async function filterBindingCount(ns: string, topicFilter: string): Promise<number> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.filterBindingCount(ns, topicFilter), ConsistentRead: true }));
  return Math.max(0, Number(out.Item?.n ?? 0));
}

/** Transaction item: one more on a counter item (`n`) of `table`, refused at `limit`. */
const countUp = (Key: Record<string, string>, limit: number, table: Parameters<typeof tableName>[0] = 'meta') => ({
  Update: {
    TableName: tableName(table),
    Key,
    UpdateExpression: 'ADD n :one',
    ConditionExpression: 'attribute_not_exists(n) OR n < :limit',
    ExpressionAttributeValues: { ':one': 1, ':limit': limit },
  },
});

/** Transaction item: one less on a counter item (`n`) of `table`. */
const countDown = (Key: Record<string, string>, table: Parameters<typeof tableName>[0] = 'meta') => ({
  Update: { TableName: tableName(table), Key, UpdateExpression: 'ADD n :minus', ExpressionAttributeValues: { ':minus': -1 } },
});

/**
 * Deletes an item that exists and counts it out of its counter in one transaction, so the count
 * never drifts from the items; false when the item did not exist (nothing counted). `also`, as
 * for `putCounted`: unconditioned items of the same transaction.
 */
export async function deleteCounted(table: Parameters<typeof tableName>[0], Key: Record<string, string>, countKey: Record<string, string>, also: object[] = []): Promise<boolean> {
  try {
    // Deletes at once share the counter item: one cancelled on a conflict is sent again.
    await transactWrite({ TransactItems: [{ Delete: { TableName: tableName(table), Key, ConditionExpression: 'attribute_exists(pk)' } }, countDown(countKey, table), ...also] as never });
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/**
 * Puts an item that does not exist yet and counts it into its counter in one transaction, refused
 * at `limit`, so the count never drifts from the items: 'exists' when the item was there, 'limit'
 * when the counter was full (nothing written either way). `also`: more items of the same
 * transaction that carry no condition (the catalog's bump of its namespace's version), written
 * with it or not at all.
 */
export async function putCounted(
  table: Parameters<typeof tableName>[0],
  Item: Record<string, unknown>,
  countKey: Record<string, string>,
  limit: number,
  also: object[] = [],
): Promise<'created' | 'exists' | 'limit'> {
  try {
    // Creates at once share the counter item: one cancelled on a conflict is sent again.
    await transactWrite({ TransactItems: [{ Put: { TableName: tableName(table), Item, ConditionExpression: 'attribute_not_exists(pk)' } }, countUp(countKey, limit, table), ...also] as never });
    return 'created';
  } catch (e) {
    // A try applied with its answer lost fails on (or after) its own effect: the SDK's retry finds
    // the item there ('exists'), or every answer was lost. The item stored as this call wrote it is
    // this create's (as resource-writes.ts `createdIt` reads back a resource's new id).
    if (await storedAsWritten(table, Item)) return 'created';
    if (!isConditionFailed(e)) throw e;
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    return reasons[0]?.Code === 'ConditionalCheckFailed' ? 'exists' : 'limit';
  }
}

/** Whether `Item` is stored exactly as given (a strongly consistent read; false when the read fails). */
async function storedAsWritten(table: Parameters<typeof tableName>[0], Item: Record<string, unknown>): Promise<boolean> {
  const Key = { pk: Item.pk, sk: Item.sk };
  const out = await ddb().send(new GetCommand({ TableName: tableName(table), Key, ConsistentRead: true })).catch(() => undefined);
  return out?.Item !== undefined && isDeepStrictEqual(out.Item, Item);
}

/** Transaction items: one more resource of `kind`, refused at the namespace's cap. */
export const countResourceIn = (ns: string, kind: ResourceKind, caps: NamespaceCaps) => countUp(metaKeys.resourceCount(ns, kind), caps[limitNameOf(kind)]);
export const countResourceOut = (ns: string, kind: ResourceKind) => countDown(metaKeys.resourceCount(ns, kind));
/** Transaction items: one more webhook of application `uid`, refused at the namespace's cap per application. */
export const countAppWebhookIn = (ns: string, uid: string, caps: NamespaceCaps) => countUp(metaKeys.applicationWebhookCount(ns, uid), caps['webhooks-per-application']);
export const countAppWebhookOut = (ns: string, uid: string) => countDown(metaKeys.applicationWebhookCount(ns, uid));
/** Transaction items of a webhook's delete: it leaves its application's count (none when it has no application). */
export const leavesApplication = (ns: string, w: { config?: { application?: string } }) => (w.config?.application === undefined ? [] : [countAppWebhookOut(ns, w.config.application)]);
/** Transaction items: one more binding of `topicFilter`, refused at the namespace's cap per filter. */
export const countBindingIn = (ns: string, topicFilter: string, caps: NamespaceCaps) => countUp(metaKeys.filterBindingCount(ns, topicFilter), caps['bindings-per-topic-filter']);
export const countBindingOut = (ns: string, topicFilter: string) => countDown(metaKeys.filterBindingCount(ns, topicFilter));

/**
 * The namespace's bindings per topic filter (its `#FILTERCOUNT#` items, strongly consistent), for
 * the fan-out budget (../domain/fanout-budget.ts). One Query of about 40 bytes an item: 1,000
 * filters are one page of 1 MB.
 */
export async function filterCounts(ns: string): Promise<Map<string, number>> {
  const prefix = metaKeys.filterBindingCount(ns, '').sk;
  const out = new Map<string, number>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb().send(
      new QueryCommand({
        TableName: tableName('meta'),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': metaKeys.filterBindingCount(ns, '').pk, ':p': prefix },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) out.set(String(item.sk).slice(prefix.length), Math.max(0, Number(item.n ?? 0)));
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}
