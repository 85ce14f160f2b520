/**
 * The local gateway: a Node HTTP server that does what API Gateway does in the stack. It matches
 * the request against the resources built from the route table (404 NOT_FOUND, 405
 * METHOD_NOT_ALLOWED), runs the same Lambda authorizer (401 in the envelope on refusal, 503 when
 * it cannot check the key), builds an API Gateway REST proxy event and calls the same handler
 * module, in process. `GET /api/v1/openapi.json` answers the OpenAPI document without auth, as
 * the stack's mock does.
 *
 * It is no kinder than API Gateway and Lambda (docs/aws-parity.md): path parameters reach the
 * handler still percent-encoded, a body whose event is above Lambda's invoke limit never reaches
 * it (413), an answer above Lambda's response limit or a crashed handler is a 502, and a handler
 * still running after 29 s is cut off with 504 INTEGRATION_TIMEOUT.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import {
  API_BASE_PATH, API_STAGE, API_VERSION_PREFIX, apiResources, matchResource, resourcePathOf, type HandlerGroup, ROUTES,
} from '../lambda/core/rules/routes';
import {
  AUTHORIZER_RETRY_AFTER_SECONDS, GATEWAY_ANSWERS, GATEWAY_BODY_LIMIT_BYTES, gatewayAnswerBody, INTEGRATION_TIMEOUT_SECONDS,
  LAMBDA_INVOKE_LIMIT_BYTES, LAMBDA_RESPONSE_LIMIT_BYTES, mockRefusesContentType, sizeGuardRefuses, type GatewayAnswer,
} from '../lambda/core/rules/gateway-responses';
import { rateLimitPeeker } from '../lambda/limits/rate-limit';
import type { RateCategory } from '../lambda/core/rules/routes';
import type { HttpHandler } from '../lambda/handlers/http';
import { handler as authorizer } from '../lambda/handlers/authorizer';
import { OPENAPI_PATH, openApiJson } from '../lambda/api-docs/openapi';
import { lambdaContext } from './lambda-context';
import { serveConsole } from './console-static';
import { servePortal } from './portal-static';

export type HandlerModules = Partial<Record<HandlerGroup, HttpHandler>>;

/** Loads the handler module of every group in the route table (lambda/handlers/<group>.ts). */
export async function loadHandlers(): Promise<HandlerModules> {
  const out: HandlerModules = {};
  for (const group of new Set(ROUTES.map((r) => r.group))) {
    const mod = (await import(`../lambda/handlers/${group}`)) as { handler: HttpHandler };
    out[group] = mod.handler;
  }
  return out;
}

function sendAnswer(res: ServerResponse, a: GatewayAnswer, headers: Record<string, string> = {}) {
  res.writeHead(a.status, { 'content-type': 'application/json', ...headers });
  res.end(gatewayAnswerBody(a));
}

/** The body, or undefined above API Gateway's limit (read to its end and dropped, so the 413 reaches the client). */
function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= GATEWAY_BODY_LIMIT_BYTES) chunks.push(c);
    });
    req.on('end', () => resolve(size > GATEWAY_BODY_LIMIT_BYTES ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function flatHeaders(req: IncomingMessage) {
  const headers: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    const values = Array.isArray(v) ? v : [v];
    headers[k] = values[values.length - 1];
    multi[k] = values;
  }
  return { headers, multi };
}

export interface GatewayOptions {
  handlers: HandlerModules;
  log?: (line: string) => void;
  /** When a handler is cut off with 504 (tests shorten it). @default INTEGRATION_TIMEOUT_SECONDS (29 s) */
  integrationTimeoutMs?: number;
  /** The stack's size guard (context `sizeGuard`, on by default): 413 for a Content-Length of 3,000,000 or more. @default true */
  sizeGuard?: boolean;
}

/** The authorizer failed for another reason than refusing the key (API Gateway: AUTHORIZER_FAILURE). */
class AuthorizerUnavailable extends Error {}

const TIMED_OUT = Symbol('integration timeout');

/** The authorizer's event for a request (the same REQUEST event API Gateway sends). */
function authorizerEvent(req: IncomingMessage, method: string, resource: string, path: string, params: Record<string, string>, query: URLSearchParams, requestId: string) {
  const { headers, multi } = flatHeaders(req);
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:local:000000000000:local/${API_STAGE}/${method}${resource}`,
    resource,
    path,
    httpMethod: method,
    headers,
    multiValueHeaders: multi,
    pathParameters: params,
    queryStringParameters: Object.fromEntries(query),
    requestContext: { requestId, stage: API_STAGE },
  } as unknown as APIGatewayRequestAuthorizerEvent;
}

/** The authorizer's context for a request, or undefined when it refuses the key. */
async function authorizedContext(event: APIGatewayRequestAuthorizerEvent): Promise<Record<string, unknown> | undefined> {
  try {
    const decision = await authorizer(event);
    return { ...(decision.context ?? {}), principalId: decision.principalId };
  } catch (e) {
    if ((e as Error).message === 'Unauthorized') return undefined;
    throw new AuthorizerUnavailable((e as Error).message);
  }
}

export function createGateway({ handlers, log = () => undefined, integrationTimeoutMs = INTEGRATION_TIMEOUT_SECONDS * 1000, sizeGuard = true }: GatewayOptions): Server {
  const resources = [...apiResources()].map(([path, methods]) => ({ path, methods }));
  const peekRateLimit = rateLimitPeeker();
  /**
   * Rate-limit headers for an answer the gateway gives itself (405, 413) to a valid key: they
   * carry its namespace's state of the path's category, without counting it (DESIGN.md section
   * 13 exempts only 401s and unknown paths); a portal credential's, its application's portal
   * counter (lambda/limits/rate-limit.ts). Without a valid key: none.
   */
  const gatewayRateHeaders = async (ctx: Record<string, unknown> | undefined, category: RateCategory | undefined) =>
    ctx && typeof ctx.namespace === 'string' && category ? peekRateLimit(ctx.namespace, category, ctx.portal && typeof ctx.application === 'string' ? ctx.application : undefined) : {};
  const server = createServer(async (req, res) => {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://local');
    // The path as sent: WHATWG URL parsing resolves `.` and `..` segments, `%2e%2e` included, so
    // `/queues/x/%2e%2e/%2e%2e/webhooks` would reach the webhooks list; API Gateway matches the
    // path the client sent and hands it on unchanged (`path` of the proxy event:
    // https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#api-gateway-simple-proxy-for-lambda-input-format),
    // so such a path names a resource level `..` here too (docs/security.md).
    const pathname = asSent(req.url) ?? url.pathname;
    const method = (req.method ?? 'GET').toUpperCase();
    // The stack's mocks (405, the API document) have a request template per common content type
    // and refuse any other body type with 415 (lib/constructs/api.ts).
    const mockRefuses = () => mockRefusesContentType(req.headers['content-type'], Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined);
    try {
      // The console's files (/console/), on the API's origin like CloudFront's second origin in the stack.
      if (serveConsole(req, res, url.pathname)) return; // the console's files: resolved, as a CDN serves them
      if (await servePortal(req, res, url)) return; // the same build in portal mode (docs/portal.md)
      // The stack's WAF rule sees every request to the stage before API Gateway does (routing,
      // authorizer, usage plan): the same pattern here, on the same header.
      if (sizeGuard && sizeGuardRefuses(req.headers['content-length'])) {
        await readBody(req);
        return sendAnswer(res, GATEWAY_ANSWERS.sizeGuard);
      }
      if (!pathname.startsWith(`${API_BASE_PATH}/`)) return sendAnswer(res, GATEWAY_ANSWERS.notFound);
      const rel = pathname.slice(API_BASE_PATH.length);
      // The API document is no route: no authorizer, no envelope (the stack's mock integration).
      if (rel === OPENAPI_PATH) {
        if (mockRefuses()) return sendAnswer(res, GATEWAY_ANSWERS.unsupportedMediaType);
        if (method !== 'GET') return sendAnswer(res, GATEWAY_ANSWERS.methodNotAllowed, { allow: 'GET' });
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(openApiJson());
      }
      const match = bestMatch(resources, rel);
      if (!match) return sendAnswer(res, GATEWAY_ANSWERS.notFound);
      const resource = `${API_VERSION_PREFIX}${match.path}`;
      const requestId = randomUUID();
      const authEvent = () => authorizerEvent(req, method, resource, `${API_VERSION_PREFIX}${rel}`, match.params, url.searchParams, requestId);
      if (!match.methods.includes(method)) {
        if (mockRefuses()) return sendAnswer(res, GATEWAY_ANSWERS.unsupportedMediaType);
        // The category of the path's own routes (a 405 has no route of its own).
        const category = ROUTES.find((r) => resourcePathOf(r.path) === match.path)?.category;
        const ctx = req.headers.authorization ? await authorizedContext(authEvent()) : undefined;
        return sendAnswer(res, GATEWAY_ANSWERS.methodNotAllowed, { allow: match.methods.join(', '), ...(await gatewayRateHeaders(ctx, category)) });
      }
      const route = ROUTES.find((r) => r.method === method && resourcePathOf(r.path) === match.path);
      const group = route?.group as HandlerGroup;
      const handler = handlers[group];
      if (!handler) return sendAnswer(res, GATEWAY_ANSWERS.notFound);

      const body = await readBody(req);
      if (body === undefined) {
        // Above API Gateway's 10 MB: refused at the door, before the authorizer.
        const ctx = req.headers.authorization ? await authorizedContext(authEvent()) : undefined;
        return sendAnswer(res, GATEWAY_ANSWERS.tooLarge, await gatewayRateHeaders(ctx, route?.category));
      }
      const { headers, multi } = flatHeaders(req);
      const authorizerContext = await authorizedContext(authEvent());
      if (!authorizerContext) return sendAnswer(res, GATEWAY_ANSWERS.unauthorized);

      const query: Record<string, string> = {};
      const multiQuery: Record<string, string[]> = {};
      for (const [k, v] of url.searchParams) {
        query[k] = v;
        (multiQuery[k] ??= []).push(v);
      }
      const event: APIGatewayProxyEvent = {
        resource,
        path: `${API_VERSION_PREFIX}${rel}`,
        httpMethod: method,
        headers: { ...headers, 'x-forwarded-proto': 'http' },
        multiValueHeaders: multi,
        queryStringParameters: Object.keys(query).length ? query : null,
        multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
        pathParameters: Object.keys(match.params).length ? match.params : null,
        stageVariables: null,
        body: body.length ? body.toString('utf8') : null,
        isBase64Encoded: false,
        requestContext: {
          accountId: '000000000000',
          apiId: 'local',
          authorizer: authorizerContext,
          httpMethod: method,
          identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1' } as APIGatewayProxyEvent['requestContext']['identity'],
          path: pathname,
          protocol: 'HTTP/1.1',
          requestId,
          requestTimeEpoch: started,
          resourceId: 'local',
          resourcePath: resource,
          stage: API_STAGE,
          domainName: headers.host,
        },
      };
      // Lambda refuses an invoke whose event is above its limit (RequestEntityTooLargeException),
      // so the handler never runs. With the size guard this takes a body the guard cannot size
      // (no Content-Length: chunked) or one whose escaping in the event more than doubles it;
      // API Gateway then answers a failed integration, DEFAULT_5XX (500 INTERNAL_ERROR). Without
      // the guard (context sizeGuard=false) the answer is the same: nothing in API Gateway alone
      // can turn it into a 413 (docs/aws-parity.md, "Sizes").
      if (body.length > LAMBDA_INVOKE_LIMIT_BYTES / 6 - 16 * 1024 && Buffer.byteLength(JSON.stringify(event), 'utf8') > LAMBDA_INVOKE_LIMIT_BYTES) {
        log(`gateway: ${method} ${pathname} event above Lambda's ${LAMBDA_INVOKE_LIMIT_BYTES}-byte invoke limit; answered 500 as API Gateway does for a failed invoke`);
        return sendAnswer(res, GATEWAY_ANSWERS.internal);
      }
      // API Gateway gives up on the integration after 29 s (504 INTEGRATION_TIMEOUT); the Lambda
      // execution may go on, as here. A crash is a Lambda function error: 502, as is a result
      // above Lambda's response limit (the invoke itself fails).
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<typeof TIMED_OUT>((r) => {
        timer = setTimeout(() => r(TIMED_OUT), integrationTimeoutMs);
      });
      const invoked = handler(event, lambdaContext(`msg-${group}`, requestId)).then(
        (out) => ({ out }),
        (error: unknown) => ({ error }),
      );
      const outcome = await Promise.race([invoked, timeout]).finally(() => clearTimeout(timer));
      if (outcome === TIMED_OUT) {
        log(`gateway: ${method} ${pathname} still running after ${integrationTimeoutMs} ms; answered 504 INTEGRATION_TIMEOUT`);
        return sendAnswer(res, GATEWAY_ANSWERS.integrationTimeout);
      }
      if ('error' in outcome) {
        log(`gateway: the ${group} handler crashed on ${method} ${pathname}: ${(outcome.error as Error)?.stack ?? outcome.error}`);
        return sendAnswer(res, GATEWAY_ANSWERS.badGateway);
      }
      const out = outcome.out;
      if (!out || typeof out.statusCode !== 'number' || Buffer.byteLength(JSON.stringify(out), 'utf8') > LAMBDA_RESPONSE_LIMIT_BYTES) {
        log(`gateway: the ${group} handler's answer to ${method} ${pathname} is malformed or above Lambda's ${LAMBDA_RESPONSE_LIMIT_BYTES}-byte response limit; answered 502`);
        return sendAnswer(res, GATEWAY_ANSWERS.badGateway);
      }
      res.writeHead(out.statusCode, out.headers as Record<string, string>);
      res.end(out.body);
    } catch (e) {
      if (e instanceof AuthorizerUnavailable) {
        log(`gateway: the authorizer failed on ${method} ${pathname}: ${e.message}; answered 503`);
        if (!res.headersSent) return sendAnswer(res, GATEWAY_ANSWERS.authorizerUnavailable, { 'retry-after': String(AUTHORIZER_RETRY_AFTER_SECONDS) });
        return res.end();
      }
      log(`gateway: unexpected error on ${method} ${pathname}: ${(e as Error).stack ?? e}`);
      if (!res.headersSent) sendAnswer(res, GATEWAY_ANSWERS.internal);
      else res.end();
    } finally {
      log(`${method} ${pathname} ${res.statusCode} ${Date.now() - started}ms`);
    }
  });
  // Node closes a kept-alive connection after 5 s idle, racing a client that sends on it just
  // then: ECONNRESET for a request that never reached the gateway, an artefact of the local
  // server (a fault-suite publisher paused that long on loaded cores). Kept 65 s instead, longer
  // than clients keep idle sockets (undici 4 s; Node's agent until the server closes them).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return server;
}

/**
 * The resource API Gateway would pick for a path: of all that match, the one whose first
 * differing level is static rather than a parameter (`/messages/ack` over `/messages/{id}`).
 */
function bestMatch(resources: { path: string; methods: string[] }[], rel: string) {
  const rank = (path: string) => path.split('/').map((l) => (l.startsWith('{') ? (l.endsWith('+}') ? 2 : 1) : 0));
  let best: { path: string; methods: string[]; params: Record<string, string> } | undefined;
  for (const r of resources) {
    const params = matchResource(r.path, rel);
    if (!params) continue;
    if (!best) {
      best = { ...r, params };
      continue;
    }
    const a = rank(r.path);
    const b = rank(best.path);
    const i = a.findIndex((x, k) => x !== b[k]);
    if (i !== -1 && a[i] < (b[i] ?? 3)) best = { ...r, params };
  }
  return best;
}

/**
 * The path of a request target as the client sent it (no dot segment resolved), origin-form
 * (`/a/b`) or absolute-form (`http://host/a/b`, RFC 9112 section 3.2.2), or undefined.
 */
function asSent(raw: string | undefined): string | undefined {
  const target = raw?.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, (authority) => (raw.length === authority.length ? '/' : ''));
  if (!target?.startsWith('/')) return undefined;
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}
