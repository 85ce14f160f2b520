/**
 * Starts DynamoDB Local and fauxqs (SQS) once for the integration project and creates the tables
 * from the shared definitions. Refuses any endpoint that is not on this machine (STYLE.md habit 7).
 */
import { randomBytes } from 'node:crypto';
import { ensureTables, startDynamoDbLocal } from '../../local/dynamodb';
import { startSqsProcess } from '../../local/fauxqs';
import { TABLES } from '../../lambda/core/storage/tables';

function assertLocal(endpoint: string, what: string) {
  const host = new URL(endpoint).hostname;
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) throw new Error(`integration tests only run against a local ${what} endpoint, not ${endpoint}`);
}

export default async function globalSetup() {
  const g = globalThis as Record<string, unknown>;
  let endpoint = process.env.MSG_TEST_DYNAMODB_ENDPOINT;
  let sqsEndpoint = process.env.MSG_TEST_SQS_ENDPOINT;
  const [dynamo, sqs] = await Promise.all([endpoint ? undefined : startDynamoDbLocal(), sqsEndpoint ? undefined : startSqsProcess()]);
  g.__dynamo = dynamo;
  g.__sqs = sqs;
  endpoint ??= dynamo?.endpoint as string;
  sqsEndpoint ??= sqs?.endpoint as string;
  assertLocal(endpoint, 'DynamoDB');
  assertLocal(sqsEndpoint, 'SQS');
  // Inherited by the test workers, which jest starts after this.
  process.env.MSG_DYNAMODB_ENDPOINT = endpoint;
  process.env.MSG_SQS_ENDPOINT = sqsEndpoint;
  process.env.MSG_RECEIPT_KEY = randomBytes(32).toString('hex');
  // One key for every worker, standing in for KMS (webhook secrets at rest).
  process.env.MSG_SECRETS_LOCAL_KEY = randomBytes(32).toString('hex');
  await ensureTables(endpoint, Object.fromEntries(Object.values(TABLES).map((t) => [t.id, t.localName])));
}
