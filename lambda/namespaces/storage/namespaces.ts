/**
 * Namespaces and their per-namespace limits.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, queryAll, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import type { PortalTheme } from '../../core/rules/portal';
import type { RateCategory } from '../../core/rules/routes';

/**
 * Requests per minute by category, `fanout`: writes per minute (domain/fanout-writes.ts), and
 * `portal`: requests per minute of each application's portal sessions (domain/rate-limits.ts).
 */
export type Limits = Partial<Record<RateCategory | 'fanout' | 'portal', number>>;

export interface NamespaceRecord {
  name: string;
  status: 'active';
  created_at: number;
  limits?: Limits;
}

/**
 * The namespace's record. Strongly consistent: the admin CLI creates a namespace, then a key in it,
 * and merges limits over what it read (docs/aws-parity.md); every caller is rare or cached.
 */
export async function getNamespace(name: string): Promise<NamespaceRecord | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.namespace(name), ConsistentRead: true }));
  return out.Item as NamespaceRecord | undefined;
}

/** Creates the namespace unless it exists; returns whether it was created. */
export async function createNamespace(name: string, now: number, limits?: Limits): Promise<boolean> {
  try {
    await ddb().send(
      new PutCommand({
        TableName: tableName('meta'),
        Item: { ...metaKeys.namespace(name), kind: 'NAMESPACE', name, status: 'active', created_at: now, ...(limits ? { limits } : {}) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** Sets (merges) per-namespace limits; fails if the namespace does not exist. */
export async function setNamespaceLimits(name: string, limits: Limits): Promise<NamespaceRecord> {
  const sets = Object.entries(limits).filter(([, v]) => v !== undefined);
  if (sets.length === 0) throw new Error('no limits given');
  const current = await getNamespace(name);
  if (!current) throw new Error(`namespace ${name} does not exist`);
  const out = await ddb().send(
    new UpdateCommand({
      TableName: tableName('meta'),
      Key: metaKeys.namespace(name),
      UpdateExpression: 'SET limits = :l',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':l': { ...(current.limits ?? {}), ...limits } },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return out.Attributes as NamespaceRecord;
}

export async function listNamespaces(): Promise<NamespaceRecord[]> {
  const items = await queryAll<NamespaceRecord>({
    TableName: tableName('meta'),
    IndexName: 'resourcesByKind',
    KeyConditionExpression: 'kind = :k',
    ExpressionAttributeValues: { ':k': 'NAMESPACE' },
  });
  return items.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The origins a namespace allows to embed its portal in a frame and to serve its logo
 * (docs/portal.md): the portal page's CSP `frame-ancestors` and `img-src`. None by default.
 * Strongly consistent, as the settings below: an operator sets them, then loads the page.
 */
export async function portalOrigins(name: string): Promise<string[]> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.namespace(name), ProjectionExpression: 'portal_origins', ConsistentRead: true }));
  return (out.Item?.portal_origins as string[] | undefined) ?? [];
}

/** The portal page's settings of a namespace, in one read: its origins and its theme (docs/portal.md). */
export async function portalSettings(name: string): Promise<{ origins: string[]; theme?: PortalTheme }> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.namespace(name), ProjectionExpression: 'portal_origins, portal_theme', ConsistentRead: true }));
  return { origins: (out.Item?.portal_origins as string[] | undefined) ?? [], ...(out.Item?.portal_theme ? { theme: out.Item.portal_theme as PortalTheme } : {}) };
}

/** Stores the namespace's portal theme, or removes it (undefined); false when the namespace does not exist. */
export async function setPortalTheme(name: string, theme: PortalTheme | undefined): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.namespace(name),
        UpdateExpression: theme ? 'SET portal_theme = :t' : 'REMOVE portal_theme',
        ConditionExpression: 'attribute_exists(pk)',
        ...(theme ? { ExpressionAttributeValues: { ':t': theme } } : {}),
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}

/** Sets them (admin CLI); false when the namespace does not exist. */
export async function setPortalOrigins(name: string, origins: string[]): Promise<boolean> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName('meta'),
        Key: metaKeys.namespace(name),
        UpdateExpression: 'SET portal_origins = :o',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':o': origins },
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false;
    throw e;
  }
}
