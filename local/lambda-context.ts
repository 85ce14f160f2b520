/**
 * The Lambda `Context` the local runtime (local/gateway.ts) and `npm run invoke` (bin/invoke.ts)
 * hand to a handler: the fields Powertools and middy read, with a deadline like the function's
 * timeout.
 */
import type { Context } from 'aws-lambda';

export function lambdaContext(functionName: string, requestId: string, timeoutMs = 60_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
