/**
 * SQS as AWS runs it, where fauxqs is kinder (issue 19 builds this out): see ./index.ts.
 */
import type { Pluggable } from '@smithy/types';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function harshSqsPlugins(_env: NodeJS.ProcessEnv): Pluggable<any, any>[] {
  return [];
}
