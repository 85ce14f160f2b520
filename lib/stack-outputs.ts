/**
 * Names of the stack and its CloudFormation outputs. Pure (no CDK import), so the admin CLI and
 * scripts can read a deployed stack's outputs without loading aws-cdk-lib.
 */
import type { TableId } from '../lambda/storage/tables';

/** Stack name of `bin/app.ts` (`npx cdk deploy` deploys this stack). */
export const STACK_NAME = 'MessagingService';

/** Output with the API's base URL, `https://{api}.execute-api.{region}.amazonaws.com/api/v1`. */
export const API_URL_OUTPUT = 'ApiUrl';

/**
 * Output with a table's physical name.
 * @example tableNameOutput('meta') // 'MetaTableName'
 */
export const tableNameOutput = (id: TableId): string => `${id[0].toUpperCase()}${id.slice(1)}TableName`;
