/**
 * DynamoDB as AWS runs it, where DynamoDB Local is kinder (issue 25 builds this out): see ./index.ts.
 */
import type { Pluggable } from '@smithy/types';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function harshDynamoDbPlugins(_env: NodeJS.ProcessEnv): Pluggable<any, any>[] {
  return [];
}
