/**
 * The one place that makes the local runtime behave like AWS where AWS is less kind than the
 * local engines (DynamoDB Local, fauxqs, the local Step Functions runner). It acts only on the
 * AWS SDK's middleware stack (lambda/core/client-plugins.ts) and on the local gateway's limits, never
 * in the service code.
 *
 * On by default in `npm start` and in the integration and fault tests; `MSG_AWS_HARSH=0` turns it
 * off (for example to tell an emulator difference from a product bug).
 *
 * - `./sqs.ts`: what SQS does that fauxqs does not (short polls that sample, a new queue that is
 *   not ready at once, OverLimit past an in-flight count).
 * - `./dynamodb.ts`: what DynamoDB does that DynamoDB Local does not (eventually consistent
 *   global secondary indexes), `./dynamodb-reads.ts` (eventually consistent reads of a base
 *   table that miss the last second's writes; on by default, `MSG_AWS_HARSH_EC_READS=0` turns it
 *   off) and `./dynamodb-transactions.ts` (writes and transactions that meet a transaction on
 *   their item are refused).
 * - DescribeExecution of the local Step Functions runner (../stepfunctions.ts) answers a status
 *   change only after a lag (`MSG_AWS_HARSH_SFN_DESCRIBE_LAG_MS`, 1000 ms by default; the runner
 *   reads this switch itself, as it is no SDK client).
 */
import { registerClientPlugin } from '../../lambda/core/client-plugins';
import { harshDynamoDbPlugins } from './dynamodb';
import { harshEcReadPlugins } from './dynamodb-reads';
import { transactionConflictPlugin, txConflictsEnabled } from './dynamodb-transactions';
import { harshSqsPlugins } from './sqs';

/** Whether the switch is on for this environment (on unless `MSG_AWS_HARSH` is 0/false/no/off). */
export function awsHarshEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.MSG_AWS_HARSH;
  return v === undefined || v === '' || !/^(0|false|no|off)$/i.test(v);
}

let installed = false;

/** Registers the harsh plugins for every SDK client created from now on (once per process). */
export function installAwsHarsh(env: NodeJS.ProcessEnv = process.env): boolean {
  if (installed || !awsHarshEnabled(env)) return installed;
  installed = true;
  for (const p of harshSqsPlugins(env)) registerClientPlugin('sqs', p);
  for (const p of harshDynamoDbPlugins(env)) registerClientPlugin('dynamodb', p);
  for (const p of harshEcReadPlugins(env)) registerClientPlugin('dynamodb', p);
  if (txConflictsEnabled(env)) registerClientPlugin('dynamodb', transactionConflictPlugin(env));
  return true;
}
