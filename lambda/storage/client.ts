/**
 * The DynamoDB document client, created once per container and shared (STYLE.md habit 2).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
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
