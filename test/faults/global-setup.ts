/**
 * The fault suite's own DynamoDB Local and fauxqs, apart from the integration project's: its
 * sweeper runs over every namespace of its engines, with a clock moved past the quiet period, and
 * must never touch another project's data. The endpoints go to the suite's workers under their
 * own names (./env.ts), so the integration project's stay as they are when both run.
 */
import { ensureTables, startDynamoDbLocal } from '../../local/dynamodb';
import { startSqsProcess } from '../../local/fauxqs';
import { TABLES } from '../../lambda/core/storage/tables';

export default async function globalSetup() {
  const g = globalThis as Record<string, unknown>;
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startSqsProcess()]);
  g.__faultsDynamo = dynamo;
  g.__faultsSqs = sqs;
  process.env.MSG_FAULTS_DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.MSG_FAULTS_SQS_ENDPOINT = sqs.endpoint;
  await ensureTables(dynamo.endpoint, Object.fromEntries(Object.values(TABLES).map((t) => [t.id, t.localName])));
}
