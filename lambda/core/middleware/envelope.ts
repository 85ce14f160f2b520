/**
 * Turns every outcome into the response envelope (DESIGN.md section 3): the operation's reply on
 * success, an {@link ApiError} as its status and code, a passing dependency failure (throttling,
 * unavailable, timed out: domain/dependency-errors.ts) as 503 SERVICE_UNAVAILABLE with
 * `Retry-After`, anything else as 500 INTERNAL_ERROR, with the details logged, never returned.
 * Used first so that its `after` and `onError` run last.
 */
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { Logger } from '@aws-lambda-powertools/logger';
import { ApiError, internalError, serviceUnavailable } from '../rules/errors';
import { DEPENDENCY_RETRY_AFTER_SECONDS, isPassingDependencyFailure } from '../rules/dependency-errors';
import { failure, JSON_HEADERS, success } from '../rules/envelope';
import type { ApiEvent, Reply } from './api-request';

export interface EnvelopeOptions {
  logger: Logger;
}

const respond = (status: number, body: object, event: ApiEvent, headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode: status,
  headers: { ...JSON_HEADERS, ...(event.api?.responseHeaders ?? {}), ...headers },
  body: JSON.stringify(body),
});

export function envelope({ logger }: EnvelopeOptions): MiddlewareObj<ApiEvent, APIGatewayProxyResult> {
  const after: MiddlewareObj<ApiEvent, APIGatewayProxyResult>['after'] = async (request) => {
    const out = request.response as unknown as Reply;
    const status = out.status ?? request.event.api?.route.status ?? 200;
    request.response = respond(status, success(out.data), request.event, out.headers);
  };
  const onError: MiddlewareObj<ApiEvent, APIGatewayProxyResult>['onError'] = async (request) => {
    const err = request.error;
    if (err instanceof ApiError) {
      if (err.status >= 500) logger.error('request failed', { code: err.code });
      request.response = respond(err.status, failure(err), request.event, err.headers);
      return;
    }
    if (isPassingDependencyFailure(err)) {
      // Throttling or a brief outage: the client should back off and retry, not report a bug.
      logger.warn('dependency unavailable', err as Error);
      const e = serviceUnavailable(DEPENDENCY_RETRY_AFTER_SECONDS);
      request.response = respond(e.status, failure(e), request.event, e.headers);
      return;
    }
    logger.error('unexpected error', err as Error);
    request.response = respond(500, failure(internalError()), request.event);
  };
  return { after, onError };
}
