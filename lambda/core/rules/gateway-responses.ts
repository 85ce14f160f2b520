/**
 * Answers produced by the gateway layer itself, not by a handler: API Gateway's Gateway Responses
 * in the stack (lib/constructs/api.ts) and the same answers from the local gateway. One table, so
 * both speak the envelope with the same codes (DESIGN.md section 3).
 */
export interface GatewayAnswer {
  status: number;
  code: string;
  message: string;
}

export const GATEWAY_ANSWERS = {
  /** Authorizer refused the key (API Gateway: UNAUTHORIZED). */
  unauthorized: { status: 401, code: 'INVALID_API_KEY', message: 'The API key is missing or invalid. Send Authorization: Bearer <API_KEY>.' },
  /**
   * The authorizer accepted the key but API Gateway found no enabled API key with the value it
   * returned as usage identifier (the key's hash) in the stage's usage plan (API Gateway:
   * INVALID_API_KEY, its own 403). The key was created without its usage-plan twin
   * (docs/rate-limits.md); to the client it is an invalid key.
   */
  keyNotInUsagePlan: { status: 401, code: 'INVALID_API_KEY', message: 'The API key is not enabled for this API. Ask the operator of the service for a new key.' },
  /** Authorizer returned a Deny policy (API Gateway: ACCESS_DENIED). */
  accessDenied: { status: 403, code: 'INSUFFICIENT_PERMISSIONS', message: 'This API key may not call this endpoint.' },
  /** No resource at this path (API Gateway answers MISSING_AUTHENTICATION_TOKEN). */
  notFound: { status: 404, code: 'NOT_FOUND', message: 'No endpoint at this path. See the API reference for the paths under /api/v1.' },
  /** Known resource, method not served. */
  methodNotAllowed: { status: 405, code: 'METHOD_NOT_ALLOWED', message: 'This method is not allowed on this path.' },
  /** Usage-plan throttling (API Gateway: THROTTLED, QUOTA_EXCEEDED). */
  throttled: { status: 429, code: 'RATE_LIMIT_EXCEEDED', message: 'Too many requests for this API key. Retry after a short wait.' },
  /**
   * Body too large for the gateway (API Gateway: REQUEST_TOO_LARGE, above 10 MB) or for the
   * Lambda invoke behind it (above 6 MB with the rest of the event).
   */
  tooLarge: { status: 413, code: 'MESSAGE_TOO_LARGE', message: 'The request body is larger than the service accepts (about 6 MB at most; far less for each endpoint).' },
  /**
   * The stack's size guard (AWS WAF on the stage, lib/constructs/size-guard.ts) refused a body
   * whose Content-Length is {@link SIZE_GUARD_REFUSED_BYTES} or more, before API Gateway, the
   * authorizer and Lambda.
   */
  sizeGuard: {
    status: 413,
    code: 'MESSAGE_TOO_LARGE',
    message: 'The request body is 3,000,000 bytes or more; the service takes far less (256 KiB per payload, 1 MiB per batch). Split it, or send a reference to the data instead.',
  },
  /** A mock's 415 for a body type it has no template for (API Gateway: DEFAULT_4XX keeps the status). */
  unsupportedMediaType: { status: 415, code: 'INVALID_REQUEST', message: 'The request could not be processed by the gateway.' },
  /** Any other gateway 4xx (API Gateway: DEFAULT_4XX). */
  badRequest: { status: 400, code: 'INVALID_REQUEST', message: 'The request could not be processed by the gateway.' },
  /** Integration failure (API Gateway: DEFAULT_5XX, keeping its own status). */
  internal: { status: 500, code: 'INTERNAL_ERROR', message: 'The service failed to process the request. Retry later.' },
  /**
   * A function that crashed, timed out in Lambda or answered more than Lambda's response limit:
   * API Gateway answers 502 Bad Gateway (DEFAULT_5XX keeps it; the body is INTERNAL_ERROR's).
   */
  badGateway: { status: 502, code: 'INTERNAL_ERROR', message: 'The service failed to process the request. Retry later.' },
  /**
   * No answer from the integration within API Gateway's 29 s (API Gateway: INTEGRATION_TIMEOUT,
   * 504; https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html).
   */
  integrationTimeout: {
    status: 504,
    code: 'INTEGRATION_TIMEOUT',
    message: 'The service did not answer within 29 s. Retry; a long poll should ask for timeout_seconds of 25 or less.',
  },
  /**
   * The authorizer could not check the key (its table throttled or unavailable): API Gateway's
   * AUTHORIZER_FAILURE / AUTHORIZER_CONFIGURATION_ERROR, 500 by default, answered as the handlers
   * answer a dependency outage: 503 with Retry-After (DESIGN.md section 3).
   */
  authorizerUnavailable: {
    status: 503,
    code: 'SERVICE_UNAVAILABLE',
    message: 'The service could not check the API key just now (a dependency is unavailable). Retry after 1 s.',
  },
} as const satisfies Record<string, GatewayAnswer>;

/** Seconds a client should wait after {@link GATEWAY_ANSWERS.authorizerUnavailable}. */
export const AUTHORIZER_RETRY_AFTER_SECONDS = 1;

/**
 * API Gateway's integration timeout for REST APIs (29 s by default;
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html): the local gateway
 * cuts a handler there too, and HTTP functions have no use for a longer Lambda timeout.
 */
export const INTEGRATION_TIMEOUT_SECONDS = 29;

/**
 * Upper bound of a long poll (consume with `timeout_seconds`), one constant for the stack
 * (lib/constructs/functions.ts sets MSG_MAX_LONG_POLL_SECONDS from it) and the local runtime (the
 * config's default): the last poll, the reads it triggers and the response fit in the 4 s left
 * before the integration timeout.
 */
export const MAX_LONG_POLL_SECONDS = INTEGRATION_TIMEOUT_SECONDS - 4;

/**
 * Lambda's limit on a synchronous invoke's response: the function's JSON result (status, headers
 * and the body string), 6 MB; measured at 6,291,556 bytes (6 MiB + 100,
 * https://zaccharles.medium.com/deep-dive-lambdas-response-payload-size-limit-8aedba9530ed;
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html). Above it the invoke
 * fails and API Gateway answers 502.
 */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024 + 100;

/** API Gateway's payload limit for REST APIs: a larger body is refused at the door. */
export const GATEWAY_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

/**
 * Lambda's limit on a synchronous invoke's request: the whole proxy event as JSON (body, headers,
 * context), 6,291,456 bytes (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html;
 * measured in https://zaccharles.medium.com/deep-dive-lambdas-request-payload-size-limit-2-2-6350c1ae5577).
 * A body API Gateway accepts (up to 10 MB) but whose event exceeds this never reaches a handler.
 */
export const LAMBDA_INVOKE_LIMIT_BYTES = 6 * 1024 * 1024;

/**
 * Content types the mocks (405 on every resource, the OpenAPI document) have a request template
 * for: a mock integration reads its status from the mapped request, so a body passed through
 * unmapped (text, a form, bytes) would not be the `{"statusCode": ...}` it needs and the mock
 * fails with 500. Any other type is refused by API Gateway with 415 (passthrough NEVER,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/integration-passthrough-behaviors.html),
 * a 4XX in the envelope, never a 500. A request without Content-Type counts as application/json.
 */
export const MOCK_REQUEST_CONTENT_TYPES = [
  'application/json', 'text/plain', 'text/html', 'text/xml', 'text/csv', 'application/xml',
  'application/x-www-form-urlencoded', 'multipart/form-data', 'application/octet-stream',
  'application/javascript', 'application/x-ndjson', 'application/merge-patch+json', 'application/cloudevents+json',
] as const;

/**
 * Whether API Gateway refuses a request to a mock with 415 (a body whose media type, parameters
 * aside, has no request template).
 */
export function mockRefusesContentType(contentType: string | undefined, hasBody: boolean): boolean {
  if (!hasBody || !contentType) return false;
  const media = contentType.split(';')[0].trim().toLowerCase();
  return !(MOCK_REQUEST_CONTENT_TYPES as readonly string[]).includes(media);
}

/** The envelope body of a gateway answer, as JSON text. */
export const gatewayAnswerBody = (a: GatewayAnswer): string =>
  JSON.stringify({ success: false, data: null, error: { code: a.code, message: a.message, details: {} } });

/**
 * The size guard. In AWS a body between Lambda's invoke limit (6,291,456 bytes
 * of event) and API Gateway's 10 MB never reaches a handler and API Gateway answers with its own
 * status. So an AWS WAF web ACL on the stage blocks, with a custom 413 in the envelope
 * (https://docs.aws.amazon.com/waf/latest/developerguide/customizing-the-response-for-blocked-requests.html;
 * WAF on a REST API stage: https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-control-access-aws-waf.html),
 * every request whose `Content-Length` is SIZE_GUARD_REFUSED_BYTES or more.
 *
 * Why 3,000,000 and not just under 6 MB: the body travels in the event as a JSON string, where
 * every `"` and `\\` of a JSON body is escaped to two bytes. A valid JSON body under 3,000,000
 * bytes therefore always fits the invoke limit with its headers (API Gateway takes at most 10 KB
 * of them), so every body the guard lets through reaches the handler, which answers its own
 * precise 413 (the largest body any endpoint takes is about 1.6 MB: a 256 KiB payload of
 * `\\u0000` escapes). WAF's regex is PCRE without capturing groups
 * (https://docs.aws.amazon.com/waf/latest/developerguide/waf-regex-pattern-support.html); the
 * local gateway tests the same pattern with JavaScript's engine (the constructs are common to both).
 */
export const SIZE_GUARD_REFUSED_BYTES = 3_000_000;
export const SIZE_GUARD_CONTENT_LENGTH_PATTERN = '^0*(?:[3-9][0-9]{6}|[1-9][0-9]{7,})$';
const sizeGuardRegex = new RegExp(SIZE_GUARD_CONTENT_LENGTH_PATTERN);

/** Whether the size guard blocks a request with this Content-Length header (absent: never). */
export const sizeGuardRefuses = (contentLength: string | string[] | undefined): boolean =>
  typeof contentLength === 'string' && sizeGuardRegex.test(contentLength);
