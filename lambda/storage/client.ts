/**
 * The DynamoDB document client, created once per container and shared (STYLE.md habit 2).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, paginateQuery, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import type { TableId } from './tables';

let doc: DynamoDBDocumentClient | undefined;
let raw: DynamoDBClient | undefined;

export function dynamoClient(): DynamoDBClient {
  if (!raw) {
    const { region, dynamodbEndpoint } = config();
    raw = new DynamoDBClient({
      region,
      ...(dynamodbEndpoint
        ? { endpoint: dynamodbEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
        : {}),
    });
  }
  return raw;
}

export function ddb(): DynamoDBDocumentClient {
  return (doc ??= DynamoDBDocumentClient.from(dynamoClient(), {
    marshallOptions: { removeUndefinedValues: true },
  }));
}

/** Physical name of a table in this deployment. */
export const tableName = (id: TableId): string => config().tableNames[id];

/** Drops the cached clients (tests that switch endpoints). */
export function resetClients() {
  raw?.destroy();
  raw = undefined;
  doc = undefined;
}

/** Whether an SDK error is a failed condition (of a single write or of a transaction item). */
export function isConditionFailed(e: unknown): boolean {
  const name = (e as { name?: string })?.name;
  if (name === 'ConditionalCheckFailedException') return true;
  if (name === 'TransactionCanceledException') {
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
    return reasons.some((r) => r.Code === 'ConditionalCheckFailed');
  }
  return false;
}

/** Every item a Query matches, over all its pages (the SDK's paginator). */
export async function queryAll<T>(input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Select'>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of paginateQuery({ client: ddb() }, input)) out.push(...((page.Items ?? []) as T[]));
  return out;
}

/** How many items a Query matches (after its filter), over all its pages, with `Select: COUNT`. */
export async function countAll(input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Select' | 'ProjectionExpression'>): Promise<number> {
  let n = 0;
  for await (const page of paginateQuery({ client: ddb() }, { ...input, Select: 'COUNT' })) n += page.Count ?? 0;
  return n;
}
