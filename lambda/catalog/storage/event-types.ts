/**
 * The event catalog in the metadata table: one item per event type in its
 * namespace's catalog partition (a list is a Query by name), a count item kept in the create and
 * delete transactions (the per-namespace cap), and `catalog_version` on the namespace's publish
 * versions item, added to by every change in the same transaction. A publish reads that item
 * anyway (strongly consistent, for its bindings), so it learns of a catalog change at no extra
 * read and reloads the catalog only then (lambda/catalog/enforce.ts).
 *
 * The schema and the examples are stored as JSON text: a DynamoDB map nests at most 32 levels,
 * refuses empty attribute names and numbers beyond 38 digits of precision
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-attributes),
 * all of which a JSON Schema may hold.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, queryAll, tableName, transactWrite } from '../../core/storage/client';
import { catalogKeys, metaKeys } from '../../core/storage/keys';
import type { EventTypeConfig } from '../rules/event-types';
import { newId } from '../../core/rules/clock';
import { deleteCounted, putCounted } from '../../core/storage/resource-limits';

const TABLE = () => tableName('meta');

export interface EventTypeItem {
  namespace: string;
  name: string;
  description?: string;
  schema_json?: string;
  examples_json?: string;
  enforce: boolean;
  has_schema: boolean;
  /** 1 at create, one more at every change (a name deleted and created again starts at 1 again). */
  version: number;
  /**
   * A fresh id at every write: the compiled validator's cache key. `version` cannot be, since a
   * name deleted and created again is at version 1 again with another schema. Absent on items
   * written before it existed (their key is then the version).
   */
  revision?: string;
  created_at: number;
  updated_at: number;
}

/** What publish keeps of every event type of a namespace (the schema is read only when it applies). */
export interface CatalogEntry {
  name: string;
  version: number;
  revision?: string;
  enforce: boolean;
  has_schema: boolean;
}

export const configOf = (i: EventTypeItem): EventTypeConfig => ({
  enforce: i.enforce,
  ...(i.description !== undefined ? { description: i.description } : {}),
  ...(i.schema_json !== undefined ? { schema: JSON.parse(i.schema_json) as Record<string, unknown> } : {}),
  ...(i.examples_json !== undefined ? { examples: JSON.parse(i.examples_json) as unknown[] } : {}),
});

/** The stored item of a configuration. */
export function itemOf(ns: string, name: string, c: EventTypeConfig, version: number, createdAt: number, now: number): EventTypeItem {
  return {
    namespace: ns,
    name,
    enforce: c.enforce,
    has_schema: c.schema !== undefined,
    version,
    revision: newId(now),
    created_at: createdAt,
    updated_at: now,
    ...(c.description !== undefined ? { description: c.description } : {}),
    ...(c.schema !== undefined ? { schema_json: JSON.stringify(c.schema) } : {}),
    ...(c.examples !== undefined ? { examples_json: JSON.stringify(c.examples) } : {}),
  };
}

const bumpCatalog = (ns: string) => ({
  Update: { TableName: TABLE(), Key: metaKeys.publishVersions(ns), UpdateExpression: 'ADD catalog_version :one', ExpressionAttributeValues: { ':one': 1 } },
});

/**
 * Sends a transaction; one whose items another transaction held (`TransactionConflict`, which
 * writes nothing) is sent again (./client.ts transactWrite).
 * Answers the index of the item whose condition failed, or -1 when it was written.
 */
async function transact(items: object[]): Promise<number> {
  try {
    await transactWrite({ TransactItems: items as never });
    return -1;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    const i = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
    return i < 0 ? 0 : i;
  }
}

/**
 * Creates an event type under the namespace's cap, with its catalog's version bump, as every
 * counted create is (../../core/storage/resource-limits.ts `putCounted`: a try applied whose answer
 * was lost is read back as this create's, not answered 'exists').
 */
export const createEventType = (item: EventTypeItem, limit: number): Promise<'created' | 'exists' | 'limit'> =>
  putCounted('meta', { ...catalogKeys.eventType(item.namespace, item.name), ...item }, catalogKeys.eventTypeCount(item.namespace), limit, [bumpCatalog(item.namespace)]);

/** Replaces an event type if it is still at `version - 1`; false when it changed or is gone. */
export async function replaceEventType(item: EventTypeItem): Promise<boolean> {
  const failed = await transact([
    { Put: { TableName: TABLE(), Item: { ...catalogKeys.eventType(item.namespace, item.name), ...item }, ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': item.version - 1 } } },
    bumpCatalog(item.namespace),
  ]);
  return failed === -1;
}

/** Deletes an event type and counts it out; false when it did not exist. */
export const deleteEventType = (ns: string, name: string): Promise<boolean> =>
  deleteCounted('meta', catalogKeys.eventType(ns, name), catalogKeys.eventTypeCount(ns), [bumpCatalog(ns)]);

export async function getEventType(ns: string, name: string): Promise<EventTypeItem | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: TABLE(), Key: catalogKeys.eventType(ns, name), ConsistentRead: true }));
  return out.Item as EventTypeItem | undefined;
}

export async function eventTypeCount(ns: string): Promise<number> {
  const out = await ddb().send(new GetCommand({ TableName: TABLE(), Key: catalogKeys.eventTypeCount(ns), ConsistentRead: true }));
  return Math.max(0, Number(out.Item?.n ?? 0));
}

const byName = (ns: string) => ({
  TableName: TABLE(),
  KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
  ExpressionAttributeValues: { ':pk': catalogKeys.eventTypesPk(ns), ':p': catalogKeys.eventTypePrefix },
  ConsistentRead: true,
});

/** Event types by name from `offset`, at most `limit`: reads `offset + limit` items at most. */
export async function listEventTypes(ns: string, limit: number, offset: number): Promise<EventTypeItem[]> {
  const out: EventTypeItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ddb().send(new QueryCommand({ ...byName(ns), Limit: offset + limit - out.length, ExclusiveStartKey: start }));
    out.push(...((page.Items ?? []) as EventTypeItem[]));
    start = page.LastEvaluatedKey;
  } while (start && out.length < offset + limit);
  return out.slice(offset, offset + limit);
}

/** Every event type of the namespace, every field (the AsyncAPI document). */
export const allEventTypes = (ns: string) => queryAll<EventTypeItem>(byName(ns));

/** What publish keeps of the catalog: names, versions and whether a schema is enforced (strongly consistent). */
export async function loadCatalog(ns: string): Promise<CatalogEntry[]> {
  const items = await queryAll<CatalogEntry>({
    ...byName(ns),
    // The schema is read only for the event type that applies (getEventType); projecting it here
    // would keep every schema of the namespace in every publish container.
    ProjectionExpression: '#n, #v, #r, #e, #s',
    ExpressionAttributeNames: { '#n': 'name', '#v': 'version', '#r': 'revision', '#e': 'enforce', '#s': 'has_schema' },
  });
  return items.map((i) => ({ name: i.name, version: i.version, ...(i.revision ? { revision: i.revision } : {}), enforce: Boolean(i.enforce), has_schema: Boolean(i.has_schema) }));
}
