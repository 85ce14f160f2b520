/**
 * Filtered resources (queues, streams, subscriptions, webhooks) and their topic bindings, in the
 * metadata table: the items, their reads, the bindings a publish loads and the purge jobs the
 * sweeper reads. Every write of a resource and its binding is in ./resource-writes.ts.
 *
 * Each resource has an internal `id` (new for every incarnation), and every data key uses the id,
 * never the name: a recreated resource never sees the data of the deleted one, whose data the
 * sweeper purges in the background from the purge job written in the delete transaction.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from './batch';
import { ddb, queryAll, tableName } from './client';
import { metaKeys, type ResourceKind } from './keys';
import { newId } from '../rules/clock';
import { isoTime } from '../rules/envelope';

/** Fields every resource item has; each kind adds its own. */
export interface ResourceItem {
  kind: ResourceKind;
  id: string;
  name: string;
  namespace: string;
  topic_filter: string;
  status: 'active';
  created_at: number;
}

/** The fields every new resource starts with: a fresh internal id for this incarnation. */
export function newResourceFields<K extends ResourceKind>(kind: K, ns: string, name: string, topicFilter: string, now: number) {
  return { kind, id: newId(now), name, namespace: ns, topic_filter: topicFilter, status: 'active' as const, created_at: now };
}

/**
 * The fields queues, streams and subscriptions share in create responses and list items
 * (SPEC.md); each kind adds its consumer or subscriber count.
 */
export const resourceSummary = (r: ResourceItem & { message_count?: number }) => ({
  name: r.name,
  topic_filter: r.topic_filter,
  status: r.status,
  created_at: isoTime(r.created_at),
  message_count: Math.max(0, r.message_count ?? 0),
});

/** What a publish needs to know about a bound resource, kept beside the binding. */
export interface Binding {
  kind: ResourceKind;
  name: string;
  id: string;
  topic_filter: string;
  /** Kind-specific settings the sink needs at publish time (e.g. a queue's TTL). */
  settings: Record<string, unknown>;
}

const BINDINGS_VERSION = metaKeys.publishVersions;
/** Purge jobs of deleted resources, for the sweeper. */
export const purgeJobKey = (kind: ResourceKind, id: string) => ({ pk: 'PURGE', sk: `${kind}#${id}` });

/**
 * One resource item. `consistent` reads it strongly consistently: every read that decides on a
 * resource just written (a delivery right after a create, an update, a delete) needs it, or it
 * may see the item as it was before the write.
 */
export async function getResource<T extends ResourceItem>(ns: string, kind: ResourceKind, name: string, opts: { consistent?: boolean } = {}): Promise<T | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.resource(ns, kind, name), ...(opts.consistent ? { ConsistentRead: true } : {}) }));
  return out.Item as T | undefined;
}

/**
 * Some attributes of a resource (`paths`: attribute names, or `map.key` paths one level deep),
 * read eventually consistently unless `consistent`: for readers whose promise leaves a second's lag.
 */
export async function getResourceProjected<T>(ns: string, kind: ResourceKind, name: string, paths: string[], opts: { consistent?: boolean } = {}): Promise<Partial<T> | undefined> {
  const names: Record<string, string> = {};
  const expr = paths
    .map((p) =>
      p
        .split('.')
        .map((part) => {
          const n = `#${part.replace(/\W/g, '_')}`;
          names[n] = part;
          return n;
        })
        .join('.'),
    )
    .join(', ');
  const out = await ddb().send(
    new GetCommand({ TableName: tableName('meta'), Key: metaKeys.resource(ns, kind, name), ProjectionExpression: expr, ExpressionAttributeNames: names, ...(opts.consistent ? { ConsistentRead: true } : {}) }),
  );
  return out.Item as Partial<T> | undefined;
}

/**
 * One page of a namespace's resources of a kind, ordered by name (the sort key order), with the
 * total. Reads every item of the kind: lists are management calls over at most a few thousand
 * resources per namespace, and `total` needs them all anyway. `consistent` for a sweep that must
 * see every write completed before it (an eventually consistent Query "may not reflect the results
 * of a recently completed write operation":
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html);
 * it reads the base table, so it can be, at twice the read units.
 */
export async function listResources<T extends ResourceItem>(ns: string, kind: ResourceKind, limit: number, offset: number, keep?: (item: T) => boolean, opts: { consistent?: boolean } = {}): Promise<{ items: T[]; total: number }> {
  const read = await queryAll<T>({
    TableName: tableName('meta'),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
    ExpressionAttributeValues: { ':pk': metaKeys.namespacePk(ns), ':p': metaKeys.resourcePrefix(kind) },
    ...(opts.consistent ? { ConsistentRead: true } : {}),
  });
  const all = keep ? read.filter(keep) : read;
  return { items: all.slice(offset, offset + limit), total: all.length };
}

/** The namespace's bindings version (strongly consistent). */
export async function bindingsVersion(ns: string): Promise<number> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: BINDINGS_VERSION(ns), ConsistentRead: true }));
  return (out.Item?.version as number | undefined) ?? 0;
}

/** The bindings and catalog versions of the namespace, from one strongly consistent GetItem. */
export async function publishVersions(ns: string): Promise<{ bindings: number; catalog: number }> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: BINDINGS_VERSION(ns), ConsistentRead: true }));
  return { bindings: (out.Item?.version as number | undefined) ?? 0, catalog: (out.Item?.catalog_version as number | undefined) ?? 0 };
}

/** Every binding of the namespace (strongly consistent). */
export async function loadBindings(ns: string): Promise<Binding[]> {
  const items = await queryAll<{ binding: Binding }>({
    TableName: tableName('meta'),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
    ExpressionAttributeValues: { ':pk': metaKeys.namespacePk(ns), ':p': 'BIND#' },
    ConsistentRead: true,
  });
  return items.map((i) => i.binding);
}

/**
 * Every resource of a kind in every namespace, through the sparse `resourcesByKind` index, then
 * the items themselves (the index projects only attributes that never change). Reads them all at
 * once: the sweeper framework (lambda/sweeper/tasks.ts) walks them page by page instead.
 */
export async function allOfKind<T extends ResourceItem>(kind: ResourceKind): Promise<T[]> {
  const keys = await queryAll<{ pk: string; sk: string }>({
    TableName: tableName('meta'),
    IndexName: 'resourcesByKind',
    KeyConditionExpression: 'kind = :k',
    ExpressionAttributeValues: { ':k': kind },
    ProjectionExpression: 'pk, sk',
  });
  // Purge jobs written before they lost their `kind` attribute (pk PURGE) are not resources.
  const resources = keys.filter((k) => k.pk.startsWith('NS#')).map(({ pk, sk }) => ({ pk, sk }));
  return batchGet<T>(tableName('meta'), resources, false);
}

export interface PurgeJob {
  namespace: string;
  resource_kind: ResourceKind;
  id: string;
  deleted_at: number;
  /** Kind-specific progress (e.g. a stream's offset range still to purge). */
  [progress: string]: unknown;
}

/** Purge jobs of deleted resources of a kind, written by deleteResource (./resource-writes.ts; first page). */
export async function purgeJobs(kind: ResourceKind): Promise<PurgeJob[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': 'PURGE', ':p': `${kind}#` },
      // Strongly consistent: a round right after a delete finds its job (one small partition).
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []) as PurgeJob[];
}
