/**
 * API keys, stored only as SHA-256 hashes (DESIGN.md section 2). Two items per key, written in one
 * transaction: the lookup by hash (the authorizer's single GetItem) and the entry under the
 * namespace (listing and revoking by key id).
 */
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, isConditionFailed, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { hashApiKey } from '../../core/rules/auth';

export interface ApiKeyRecord {
  key_id: string;
  namespace: string;
  scopes: string[];
  created_at: number;
  revoked_at?: number;
  /** Hash of the key; never the key itself. */
  hash: string;
  description?: string;
}

/**
 * Looks a presented key up by its hash; undefined when unknown or revoked. Strongly consistent: a
 * key is used right after the admin CLI creates it (an eventually consistent read may miss it:
 * docs/aws-parity.md); the authorizer's cache keeps this read rare.
 */
export async function findActiveKey(key: string): Promise<ApiKeyRecord | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName('meta'), Key: metaKeys.apiKeyByHash(hashApiKey(key)), ConsistentRead: true }),
  );
  const rec = out.Item as ApiKeyRecord | undefined;
  return rec && !rec.revoked_at ? rec : undefined;
}

/** Stores a key; returns false when this exact key already exists (seeding is idempotent). */
export async function putApiKey(key: string, rec: Omit<ApiKeyRecord, 'hash'>): Promise<boolean> {
  const hash = hashApiKey(key);
  const item = { ...rec, hash };
  try {
    await ddb().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName('meta'),
              Item: { ...metaKeys.apiKeyByHash(hash), ...item },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          { Put: { TableName: tableName('meta'), Item: { ...metaKeys.apiKeyOfNamespace(rec.namespace, rec.key_id), ...item } } },
          {
            ConditionCheck: {
              TableName: tableName('meta'),
              Key: metaKeys.namespace(rec.namespace),
              ConditionExpression: 'attribute_exists(pk)',
            },
          },
        ],
      }),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) {
      const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (reasons[2]?.Code === 'ConditionalCheckFailed') throw new Error(`namespace ${rec.namespace} does not exist; create it first`);
      return false;
    }
    throw e;
  }
}

export async function listApiKeys(namespace: string): Promise<ApiKeyRecord[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName('meta'),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': metaKeys.namespacePk(namespace), ':p': metaKeys.apiKeysOfNamespacePrefix },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []) as ApiKeyRecord[];
}

/** Revokes a key by id; returns false when the namespace has no such key. */
export async function revokeApiKey(namespace: string, keyId: string, now: number): Promise<boolean> {
  const entry = await ddb().send(
    new GetCommand({ TableName: tableName('meta'), Key: metaKeys.apiKeyOfNamespace(namespace, keyId), ConsistentRead: true }),
  );
  const rec = entry.Item as ApiKeyRecord | undefined;
  if (!rec) return false;
  await ddb().send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Update: {
            TableName: tableName('meta'),
            Key: metaKeys.apiKeyByHash(rec.hash),
            UpdateExpression: 'SET revoked_at = :t',
            ExpressionAttributeValues: { ':t': now },
          },
        },
        {
          Update: {
            TableName: tableName('meta'),
            Key: metaKeys.apiKeyOfNamespace(namespace, keyId),
            UpdateExpression: 'SET revoked_at = :t',
            ExpressionAttributeValues: { ':t': now },
          },
        },
      ],
    }),
  );
  return true;
}

/** A key of the namespace by id (its entry under the namespace), revoked or not. */
export async function getApiKeyById(namespace: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName('meta'), Key: metaKeys.apiKeyOfNamespace(namespace, keyId), ConsistentRead: true }));
  return out.Item as ApiKeyRecord | undefined;
}
