/**
 * Finds the route of the event in the route table and derives the request's parameters, query and
 * headers. A path under a served resource that no route takes (e.g. `/topics/a/other`) is 404.
 *
 * Path parameters arrive percent-encoded from API Gateway REST proxy integrations (and from the
 * local gateway, which hands over the same event; docs/aws-parity.md): the route is resolved on
 * them as they came, then each is decoded here, exactly once. Nothing downstream decodes again.
 */
import type { MiddlewareObj } from '@middy/core';
import { invalidRequest, routeNotFound } from '../rules/errors';
import { API_VERSION_PREFIX, decodePathParameters, resolveRoute, type HandlerGroup } from '../rules/routes';
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
      const decoded = decodePathParameters(resolved.params);
      if ('invalid' in decoded) {
        throw invalidRequest(`The path parameter ${decoded.invalid} is not valid percent-encoding. Encode each character outside A-Z a-z 0-9 - . _ ~ as %XX of its UTF-8 bytes (encodeURIComponent).`, { field: decoded.invalid });
      }
      const headers = lowerCaseHeaders(event.headers);
      event.api = {
        route: resolved.route,
        params: decoded.params,
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
