/**
 * Builds the Lambda handler of one endpoint group: middy with our middlewares in a fixed order,
 * then a dispatch to the operation the route table names. Handlers stay thin: each operation
 * parses its input, calls the domain and storage, and returns the envelope's data.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { routesOf, type HandlerGroup } from '../core/rules/routes';
import { LOG_METRICS_OPTIONS, logger, metrics } from '../core/observability';
import { apiRequest, type ApiEvent, type ApiRequest, type Reply } from '../core/middleware/api-request';
import { envelope } from '../core/middleware/envelope';
import { resolveRequest } from '../core/middleware/resolve-request';
import { authorize } from '../core/middleware/authorize';
import { jsonBody } from '../core/middleware/json-body';
import { rateLimit } from '../limits/rate-limit';

export type Operation = (req: ApiRequest) => Promise<Reply>;

export type HttpHandler = (event: ApiEvent, context: Context) => Promise<APIGatewayProxyResult>;

export function httpHandler(group: HandlerGroup, operations: Record<string, Operation>): HttpHandler {
  const missing = routesOf(group).filter((r) => !operations[r.operation]);
  if (missing.length > 0) {
    throw new Error(`handler ${group} lacks operations ${missing.map((r) => r.operation).join(', ')}`);
  }
  return middy<ApiEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics, LOG_METRICS_OPTIONS))
    .use(envelope({ logger }))
    .use(resolveRequest(group))
    .use(authorize({ logger }))
    // After authorize (it needs the namespace), before the body: a refused request does nothing.
    .use(rateLimit({ logger }))
    .use(jsonBody())
    .handler(async (event) => {
      const api = apiRequest(event);
      return (await operations[api.route.operation](api)) as unknown as APIGatewayProxyResult;
    }) as unknown as HttpHandler;
}
