/**
 * Starts DynamoDB Local once for the integration project and creates the tables from the shared
 * definitions. Refuses any endpoint that is not on this machine (STYLE.md habit 7).
 */
import { ensureTables, startDynamoDbLocal } from '../../local/dynamodb';
import { TABLES } from '../../lambda/storage/tables';

export default async function globalSetup() {
  let endpoint = process.env.MSG_TEST_DYNAMODB_ENDPOINT;
  if (endpoint) {
    const host = new URL(endpoint).hostname;
    if (!['127.0.0.1', 'localhost', '::1'].includes(host)) {
      throw new Error(`integration tests only run against a local DynamoDB endpoint, not ${endpoint}`);
    }
  } else {
    const dynamo = await startDynamoDbLocal();
    (globalThis as Record<string, unknown>).__dynamo = dynamo;
    endpoint = dynamo.endpoint;
  }
  process.env.MSG_DYNAMODB_ENDPOINT = endpoint;
  await ensureTables(endpoint, Object.fromEntries(Object.values(TABLES).map((t) => [t.id, t.localName])));
}
