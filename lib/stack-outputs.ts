/**
 * Names of the stack and its CloudFormation outputs. Pure (no CDK import), so the admin CLI and
 * scripts can read a deployed stack's outputs without loading aws-cdk-lib.
 */
import type { TableId } from '../lambda/storage/tables';

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

/** Output with the console address of the stack's CloudWatch dashboard. */
export const DASHBOARD_URL_OUTPUT = 'DashboardUrl';

/**
 * Output with a table's physical name.
 * @example tableNameOutput('meta') // 'MetaTableName'
 */
export const tableNameOutput = (id: TableId): string => `${id[0].toUpperCase()}${id.slice(1)}TableName`;
