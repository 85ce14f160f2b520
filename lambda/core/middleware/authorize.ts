/**
 * Applies what the Lambda authorizer decided (lambda/handlers/authorizer.ts): the namespace and
 * scopes of the key arrive in `requestContext.authorizer`; the route table says which scope the
 * route needs. A key without it gets 403 INSUFFICIENT_PERMISSIONS (DESIGN.md section 2).
 *
 * A portal credential (lambda/core/rules/portal.ts) is judged by its own list of routes
 * instead of scopes: a session may call its application's webhook routes and the catalog, a link
 * only its exchange for a session; anything else is 403, before anything is read or counted.
 */
import type { MiddlewareObj } from '@middy/core';
import { requireScopes } from '../rules/auth';
import { portalMayCall, portalOnly, type PortalCredential } from '../rules/portal';
import { ApiError, invalidApiKey, notFound } from '../rules/errors';
import { apiRequest, type ApiEvent } from './api-request';
import type { Logger } from '@aws-lambda-powertools/logger';

/** The context our authorizer returns (API Gateway passes string values only). */
export interface AuthorizerContext {
  namespace?: string;
  scopes?: string;
  keyId?: string;
  /** Set when the Host names another namespace that does not exist (404 NAMESPACE_NOT_FOUND). */
  hostError?: string;
  /** `link` or `session` for a portal credential; absent for an API key. */
  portal?: string;
  /** The application a portal credential is scoped to. */
  application?: string;
}

const portalRefusal = (kind: PortalCredential) =>
  new ApiError(403, 'INSUFFICIENT_PERMISSIONS', kind === 'link'
    ? 'A portal link can only be exchanged for a session (POST /portal/session).'
    : "A portal session may only manage its application's webhooks and read the event catalog.", { required_scope: 'manage' });

export function authorize({ logger }: { logger: Logger }): MiddlewareObj<ApiEvent> {
  return {
    before: async (request) => {
      const api = apiRequest(request.event);
      const ctx = (request.event.requestContext?.authorizer ?? {}) as AuthorizerContext;
      if (!ctx.namespace) throw invalidApiKey();
      // Known before the Host rule's 404, so that answer carries the rate-limit headers of the
      // key's own namespace (middleware/rate-limit.ts); no data of it is read or returned.
      api.namespace = ctx.namespace;
      // A portal credential's answers, refused ones too, show its application's own rate budget.
      if ((ctx.portal === 'link' || ctx.portal === 'session') && ctx.application) api.application = ctx.application;
      if (ctx.hostError === 'NAMESPACE_NOT_FOUND') throw notFound('NAMESPACE_NOT_FOUND', 'The namespace named by the Host header');
      api.scopes = (ctx.scopes ?? '').split(',').filter(Boolean);
      api.keyId = ctx.keyId ?? '';
      logger.appendKeys({ namespace: api.namespace, route: `${api.route.method} ${api.route.path}` });
      if (ctx.portal === 'link' || ctx.portal === 'session') {
        if (!ctx.application || !portalMayCall(ctx.portal, api.route)) throw portalRefusal(ctx.portal);
        return;
      }
      if (portalOnly(api.route)) throw new ApiError(403, 'INSUFFICIENT_PERMISSIONS', 'Only a portal link or session may call this route; an API key creates links with POST /applications/{uid}/portal-access.', { required_scope: 'portal' });
      requireScopes(api.scopes, [api.route.scope, api.route.also]);
    },
  };
}
