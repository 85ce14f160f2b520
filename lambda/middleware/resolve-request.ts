/**
 * Finds the route of the event in the route table and derives the request's parameters, query and
 * headers. A path under a served resource that no route takes (e.g. `/topics/a/other`) is 404.
 */
import type { MiddlewareObj } from '@middy/core';
import { routeNotFound } from '../domain/errors';
import { API_VERSION_PREFIX, resolveRoute, type HandlerGroup } from '../domain/routes';
import { lowerCaseHeaders, type ApiEvent } from './api-request';

export function resolveRequest(group: HandlerGroup): MiddlewareObj<ApiEvent> {
  return {
    before: async (request) => {
      const event = request.event;
      const resource = event.resource.startsWith(API_VERSION_PREFIX)
        ? event.resource.slice(API_VERSION_PREFIX.length)
        : event.resource;
      const resolved = resolveRoute(event.httpMethod, resource, event.pathParameters as Record<string, string> ?? {});
      if (!resolved || resolved.route.group !== group) throw routeNotFound(event.httpMethod, event.path);
      const headers = lowerCaseHeaders(event.headers);
      event.api = {
        route: resolved.route,
        params: resolved.params,
        query: { ...(event.queryStringParameters ?? {}) },
        headers,
        namespace: '',
        scopes: [],
        keyId: '',
        body: {},
        bodyBytes: 0,
        lambda: request.context,
        requestId: event.requestContext?.requestId ?? '',
        host: headers.host ?? event.requestContext?.domainName,
        protocol: headers['x-forwarded-proto'] ?? 'https',
        responseHeaders: {},
      };
    },
  };
}
