/**
 * Names of the stack and its CloudFormation outputs. Pure (no CDK import), so the admin CLI and
 * scripts can read a deployed stack's outputs without loading aws-cdk-lib.
 */
import type { TableId } from '../lambda/core/storage/tables';

/** Stack name of `bin/app.ts` (`npx cdk deploy` deploys this stack); see `stackNameFor` in lib/deployment.ts for other environments. */
export const STACK_NAME = 'MessagingService';


/** Output with the API's base URL, `https://{api}.execute-api.{region}.amazonaws.com/api/v1`. */
export const API_URL_OUTPUT = 'ApiUrl';

/**
 * Output with the id of the API's usage plan. Every API key needs a twin API Gateway key (value =
 * the key's SHA-256 hash) in this plan, or API Gateway answers 401 INVALID_API_KEY; the admin CLI
 * creates it (`key create --outputs cdk-outputs.json`, or `--usage-plan ID`).
 */
export const USAGE_PLAN_ID_OUTPUT = 'UsagePlanId';

/**
 * Output with the URL of the webhook delivery queue: the admin CLI's redrive republishes through
 * publish, which queues a delivery job for every matching webhook (`--outputs` sets
 * MSG_WEBHOOK_QUEUE_URL from it).
 */
export const WEBHOOK_QUEUE_URL_OUTPUT = 'WebhookQueueUrl';

/** Output with the address of the browser console (docs/console.md), unless context console=false. */
export const CONSOLE_URL_OUTPUT = 'ConsoleUrl';

/** Output with the console address of the stack's CloudWatch dashboard. */
export const DASHBOARD_URL_OUTPUT = 'DashboardUrl';

/**
 * Outputs for the admin CLI's work on the SQS queues behind service queues (redrive, listing and
 * deleting what `cdk destroy` leaves): the name prefix of every such queue, and the URL base.
 */
export const SQS_QUEUE_PREFIX_OUTPUT = 'SqsQueuePrefix';
export const SQS_QUEUE_URL_BASE_OUTPUT = 'SqsQueueUrlBase';

/**
 * The name prefix of the SQS queues a stack creates at runtime (one per service queue, named
 * prefix + the queue's 26-character id). A stack name has only letters, digits and hyphens, so
 * `_q_` ends the prefix: no stack's prefix begins another's (`MessagingService_q_` is not a
 * prefix of `MessagingService-dev_q_...`), and IAM grants on `<prefix>*` stay within one stack.
 * SQS names stop at 80 characters: a long stack name is cut and made unique with a hash.
 * @example sqsQueuePrefix('MessagingService') // 'MessagingService_q_'
 */
export function sqsQueuePrefix(stackName: string): string {
  if (stackName.length <= 48) return `${stackName}_q_`;
  let h = 0x811c9dc5; // FNV-1a: a stable hash without node:crypto, so this stays importable anywhere
  for (const c of stackName) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return `${stackName.slice(0, 40)}-${h.toString(16).padStart(8, '0')}_q_`;
}

/**
 * Output with a table's physical name.
 * @example tableNameOutput('meta') // 'MetaTableName'
 */
export const tableNameOutput = (id: TableId): string => `${id[0].toUpperCase()}${id.slice(1)}TableName`;
