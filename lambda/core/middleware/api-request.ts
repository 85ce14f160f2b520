/**
 * The typed request that our middlewares derive from an API Gateway REST proxy event. Middlewares
 * fill it in order (route, identity, body); operations receive it whole.
 */
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { Route } from '../rules/routes';
import type { DeferredCount } from '../rules/rate-limits';

export interface ApiRequest {
  route: Route;
  /** Decoded path parameters of the logical route (`topic` without `/messages`). */
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  /** Request headers with lowercase names. */
  headers: Record<string, string | undefined>;
  /** The authenticated key's namespace: the only namespace this request can touch. */
  namespace: string;
  scopes: string[];
  keyId: string;
  /**
   * Set for a portal session (lambda/core/rules/portal.ts): the uid of the one application
   * it may act for. Its webhook operations are forced to that application.
   */
  application?: string;
  /** Parsed JSON body; `{}` when the request had none. */
  body: unknown;
  /** Size of the raw body in bytes (batch limits are on the body as sent). */
  bodyBytes: number;
  /** The Lambda context: remaining time bounds long polls. */
  lambda?: Context;
  requestId: string;
  /** Host the client used, for building the namespace endpoint. */
  host?: string;
  protocol: string;
  /**
   * Set by the rate-limit middleware on a publish whose request count it leaves to the publish
   * path, to be made in one write with the call's fan-out writes (middleware/rate-limit.ts).
   */
  deferredCount?: DeferredCount;
  /** Headers every response of this request carries (e.g. rate-limit headers). */
  responseHeaders: Record<string, string>;
}

export type ApiEvent = APIGatewayProxyEvent & { api?: ApiRequest };

/** What an operation returns: the `data` of the envelope, with an optional status and headers. */
export interface Reply {
  data: object;
  status?: number;
  headers?: Record<string, string>;
}

export const reply = (data: object, opts: Omit<Reply, 'data'> = {}): Reply => ({ data, ...opts });

export function lowerCaseHeaders(headers: Record<string, string | undefined> | null | undefined) {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = v;
  return out;
}

/** The request derived so far; throws if a middleware that should have run did not. */
export function apiRequest(event: ApiEvent): ApiRequest {
  if (!event.api) throw new Error('api request not resolved: resolveRequest middleware missing');
  return event.api;
}
