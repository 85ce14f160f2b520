/**
 * Applies what the Lambda authorizer decided (lambda/handlers/authorizer.ts): the namespace and
 * scopes of the key arrive in `requestContext.authorizer`; the route table says which scope the
 * route needs. A key without it gets 403 INSUFFICIENT_PERMISSIONS (DESIGN.md section 2).
 */
import type { MiddlewareObj } from '@middy/core';
import { requireScopes } from '../domain/auth';
import { invalidApiKey, notFound } from '../domain/errors';
import { apiRequest, type ApiEvent } from './api-request';
import type { Logger } from '@aws-lambda-powertools/logger';

/** The context our authorizer returns (API Gateway passes string values only). */
export interface AuthorizerContext {
  namespace?: string;
  scopes?: string;
  keyId?: string;
  /** Set when the Host names another namespace that does not exist (404 NAMESPACE_NOT_FOUND). */
  hostError?: string;
}

export function authorize({ logger }: { logger: Logger }): MiddlewareObj<ApiEvent> {
  return {
    before: async (request) => {
      const api = apiRequest(request.event);
      const ctx = (request.event.requestContext?.authorizer ?? {}) as AuthorizerContext;
      if (!ctx.namespace) throw invalidApiKey();
      // Known before the Host rule's 404, so that answer carries the rate-limit headers of the
      // key's own namespace (middleware/rate-limit.ts); no data of it is read or returned.
      api.namespace = ctx.namespace;
      if (ctx.hostError === 'NAMESPACE_NOT_FOUND') throw notFound('NAMESPACE_NOT_FOUND', 'The namespace named by the Host header');
      api.scopes = (ctx.scopes ?? '').split(',').filter(Boolean);
      api.keyId = ctx.keyId ?? '';
      logger.appendKeys({ namespace: api.namespace, route: `${api.route.method} ${api.route.path}` });
      requireScopes(api.scopes, [api.route.scope, api.route.also]);
    },
  };
}
