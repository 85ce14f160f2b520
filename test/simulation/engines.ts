/**
 * Engines of the simulation's own for `npm run simulate` (bin/simulate.ts): DynamoDB Local and
 * fauxqs (in a child process, as the fault suite's global setup starts them), the environment the
 * integration tests give their workers, the harsh layer on (local/aws-harsh) before any SDK client
 * exists, and the tables. The jest run gets the same from the fault suite's global setup.
 */
import { randomBytes } from 'node:crypto';
import { ensureTables, startDynamoDbLocal } from '../../local/dynamodb';
import { startSqsProcess } from '../../local/fauxqs';
import { installAwsHarsh } from '../../local/aws-harsh';
import { TABLES } from '../../lambda/core/storage/tables';

export async function startEngines(): Promise<{ stop(): Promise<void> }> {
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startSqsProcess()]);
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    POWERTOOLS_LOG_LEVEL: process.env.SIM_LOG_LEVEL ?? 'SILENT',
    POWERTOOLS_TRACE_ENABLED: 'false',
    POWERTOOLS_METRICS_NAMESPACE: 'MessagingSimulation',
    POWERTOOLS_METRICS_DISABLED: 'true',
    MSG_BASE_DOMAIN: 'localhost',
    MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
    MSG_DYNAMODB_ENDPOINT: dynamo.endpoint,
    MSG_SQS_ENDPOINT: sqs.endpoint,
    MSG_RECEIPT_KEY: randomBytes(32).toString('hex'),
    MSG_SECRETS_LOCAL_KEY: randomBytes(32).toString('hex'),
  });
  if (process.env.MSG_AWS_HARSH === undefined) process.env.MSG_AWS_HARSH = '1';
  installAwsHarsh();
  await ensureTables(dynamo.endpoint, Object.fromEntries(Object.values(TABLES).map((t) => [t.id, t.localName])));
  return { stop: () => Promise.all([sqs.stop(), dynamo.stop()]).then(() => undefined) };
}
