/**
 * The OpenAPI 3.1 document of the whole API, generated so it cannot drift from the code: paths and
 * methods from the route table (lambda/core/rules/routes.ts), request bodies from the zod schemas the
 * handlers parse (`z.toJSONSchema`, through ./operations.ts), response `data` shapes from
 * ./schemas.ts, and the envelope, status codes, error codes, scopes and rate-limit headers of
 * DESIGN.md. Pure: no AWS imports; served by the local gateway and by a mock integration of the
 * stack at `GET /api/v1/openapi.json`, printed by `npm run openapi`.
 */
import * as z from 'zod/mini';
import { ROUTES, type Route, type Scope } from '../core/rules/routes';
import { DEFAULT_LIMITS, DEFAULT_PORTAL_LIMIT } from '../core/rules/rate-limits';
import { DEFAULT_FANOUT_LIMIT } from '../core/rules/fanout-writes';
import { MAX_BATCH_BODY_BYTES, MAX_PAYLOAD_BYTES } from '../core/rules/message';
import { OPERATIONS, operationKey, type OperationDoc } from './operations';
import { ref, responseSchemas, type JsonSchema } from './schemas';

/** Where the document is served, relative to the API root `/api/v1` (outside the route table). */
export const OPENAPI_PATH = '/openapi.json';
/** Version of the document's API (the `v1` of the path; bump the minor for additions). */
const API_DOCUMENT_VERSION = '1.0.0';

export interface OpenApiOptions {
  /** @default ROUTES */
  routes?: readonly Route[];
  /** @default the API root relative to the document (`/api/v1`) */
  servers?: { url: string; description?: string }[];
}

/**
 * Relative to where the document is served, so one document fits the local runtime, the
 * execute-api URL and a custom domain alike.
 */
const DEFAULT_SERVERS = [{ url: '/api/v1', description: 'The deployment that serves this document' }];

const TAGS = [
  { name: 'namespace', description: 'The namespace of the API key' },
  { name: 'publish', description: 'Publishing messages to topics' },
  { name: 'queues', description: 'Queues: consume, visibility timeout, ack, retries and dead-letter topics' },
  { name: 'streams', description: 'Streams: ordered, partitioned, retained logs read by offset per consumer group' },
  { name: 'subscriptions', description: 'Subscriptions: every subscriber id receives every retained message' },
  { name: 'webhooks', description: 'Webhooks: HTTP deliveries of messages to configured URLs, with retries and hooks' },
  { name: 'schedules', description: 'Schedules: publish to a topic on a cron (with a time zone) or every N seconds' },
  { name: 'catalog', description: 'Event catalog: event types with JSON Schemas and examples, enforced on publish, as AsyncAPI' },
  { name: 'applications', description: "Applications (a platform's customers) and portal access: single-use links to sessions scoped to one application" },
  { name: 'meta', description: 'This document' },
];

const PARAM_NOTES: Record<string, string> = {
  topic:
    'Topic name: 1 to 256 characters, `/`-separated levels, no empty level, no `+`, `#` or control characters. The topic may contain `/`: send its levels as path segments (`/topics/orders/eu/created/messages`); percent-encoded levels (`%2F` included) are decoded.',
  queue_name: 'Queue name',
  stream_name: 'Stream name',
  subscription_name: 'Subscription name',
  webhook_name: 'Webhook name',
  uid: "Application uid: the platform's own customer id",
  message_id: 'Id of a received message (from consume)',
  event_type: 'Event type name (a topic or filter): its levels as path segments, or percent-encoded (`/` as %2F); `#` always as %23 (`orders/%23` or `orders%2F%23` for `orders/#`)',
};

/** Descriptions added to request fields that zod leaves bare. */
const FIELD_NOTES: Record<string, string> = {
  topic_filter: 'MQTT 5 topic filter: `+` matches exactly one level, `#` (whole last level) any number of levels including none, e.g. `orders/#`, `orders/+/created`',
  dead_letter_topic: 'Topic name that receives failed messages',
  name: 'Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit',
  start_offset: '`earliest`, `latest`, or an offset (number or string of digits)',
  method: 'HTTP method of deliveries: POST, PUT or PATCH (case-insensitive)',
  url: 'http or https URL of the receiver',
  consumer_id: 'Counts this consumer in consumer_count instead of the API key',
  properties: 'Custom properties (string values); `x-hop` counts republishes by the service; `x-application` is the application a message is addressed to (set by `application`)',
  on_failure: '`send_to_dlq` (publishes the original message to dead_letter_topic) or {topic, payload} with `{{.error}}` in the payload template',
  on_success: '{topic, payload} published after a successful delivery; the payload template may use `{{.response}}`',
  condition: 'Delivers only messages whose `field` (dot path into the JSON payload, or `properties.<name>`) compares true against `value`; operators == != > >= < <=',
  secret: 'Signing secret (`whsec_` + base64 of 24 to 64 bytes); generated when left out',
};

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The OpenAPI form of a route path: `{topic+}` becomes `{topic}` (see PARAM_NOTES.topic). */
export const openApiPath = (routePath: string) => routePath.replace(/\{([^}+]+)\+\}/g, '{$1}');

const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);

/** The JSON Schema of a request body, as the client sends it (zod's input side). */
function requestSchema(op: OperationDoc): JsonSchema | undefined {
  if (!op.request) return undefined;
  const { $schema: _s, ...schema } = z.toJSONSchema(op.request, { io: 'input' }) as JsonSchema;
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  for (const [field, note] of Object.entries(FIELD_NOTES)) {
    if (props?.[field] && !props[field].description) props[field] = { ...props[field], description: note };
  }
  return op.adjustRequest ? op.adjustRequest(schema) : schema;
}

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const RATE_HEADERS = { 'X-RateLimit-Limit': header('X-RateLimit-Limit'), 'X-RateLimit-Remaining': header('X-RateLimit-Remaining'), 'X-RateLimit-Reset': header('X-RateLimit-Reset') };

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** An error answer whose `error.code` is one of `codes`. */
function errorResponse(description: string, codes: string[], headers: Record<string, unknown> = RATE_HEADERS) {
  return {
    description,
    headers,
    content: json({
      allOf: [ref('ErrorEnvelope'), { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } }],
    }),
  };
}

function components(routes: readonly Route[]) {
  const schemas: Record<string, JsonSchema> = responseSchemas();
  for (const r of routes) {
    const op = OPERATIONS[operationKey(r)];
    const body = op && requestSchema(op);
    if (body) schemas[`${pascal(op.operationId)}Request`] = body;
  }
  return {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key of the namespace: `Authorization: Bearer <API_KEY>`. Keys are issued with the admin CLI (`npm run admin -- key create`).',
      },
    },
    schemas,
    parameters: {
      limit: { name: 'limit', in: 'query', required: false, description: 'Page size; not an integer: 400, out of range: 422', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
      offset: { name: 'offset', in: 'query', required: false, description: 'Items to skip (items are ordered by name)', schema: { type: 'integer', minimum: 0, default: 0 } },
      'Idempotency-Key': {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Makes a retried publish answer the first result (201, same body, header Idempotent-Replayed: true) instead of storing again, within 24 hours, per namespace and topic. The same key with another body is 422; while the first request is in flight, 409 IDEMPOTENCY_KEY_IN_USE.',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
      },
    },
    headers: {
      'X-RateLimit-Limit': { description: "Requests allowed per minute in the request's rate category", schema: { type: 'integer' } },
      'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer', minimum: 0 } },
      'X-RateLimit-Reset': { description: 'Unix time (seconds) when the window resets', schema: { type: 'integer' } },
      'Retry-After': { description: 'Seconds until the window resets (at least 1)', schema: { type: 'integer', minimum: 1 } },
      'Retry-After-Unavailable': { description: 'Seconds to wait before retrying (at least 1)', schema: { type: 'integer', minimum: 1 } },
      'Idempotent-Replayed': { description: '`true` when the answer replays the first request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
      Allow: { description: 'The methods the path serves', schema: { type: 'string' } },
    },
    responses: {
      Unauthorized: errorResponse('Missing, malformed, unknown or revoked API key, or a key of another namespace than the Host names (no rate-limit headers)', ['INVALID_API_KEY'], {}),
      Forbidden: errorResponse("The key lacks the operation's scope, or a portal session (docs/portal.md) called an operation it may not", ['INSUFFICIENT_PERMISSIONS']),
      RateLimited: errorResponse("Over the namespace's limit for the rate category in this minute (for a portal session, its application's own limit: `details.application` names it); `details` has category, limit and reset", ['RATE_LIMIT_EXCEEDED'], {
        ...RATE_HEADERS,
        'Retry-After': header('Retry-After'),
      }),
      InternalError: errorResponse('A bug or a failed dependency; the message has no internals', ['INTERNAL_ERROR'], {}),
      ServiceUnavailable: errorResponse(
        'A dependency throttled the request, was briefly unavailable or did not answer in time: retry after `Retry-After` seconds. Like a 500, the request may or may not have taken effect (publishes are at least once; send an Idempotency-Key to make a retry safe)',
        ['SERVICE_UNAVAILABLE'],
        { 'Retry-After': header('Retry-After-Unavailable') },
      ),
      MethodNotAllowed: errorResponse('Known path, method not served (answered for any method a path does not list)', ['METHOD_NOT_ALLOWED'], { Allow: header('Allow') }),
    },
  };
}

const respRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** Why a route needs its second scope (docs/security.md "What each scope allows"). */
const ALSO_WHY: Record<Scope, string> = {
  read: '',
  manage: '',
  publish: "it publishes later on the key's behalf",
  consume: "it sends stored payloads to a URL the caller chooses: the webhook's, or those of the webhooks a portal session creates",
};

function operation(route: Route, op: OperationDoc) {
  const path = openApiPath(route.path);
  const body = requestSchema(op);
  const hasBody = body !== undefined;
  const bodySchemaName = `${pascal(op.operationId)}Request`;
  const parameters: unknown[] = pathParams(path).map((name) => ({ name, in: 'path', required: true, description: PARAM_NOTES[name] ?? name, schema: { type: 'string', minLength: 1 } }));
  if (op.paging) parameters.push({ $ref: '#/components/parameters/limit' }, { $ref: '#/components/parameters/offset' });
  if (op.idempotent) parameters.push({ $ref: '#/components/parameters/Idempotency-Key' });
  if (op.query) parameters.push(...op.query);

  const responses: Record<string, unknown> = {
    [route.status]: {
      description: route.status === 201 ? 'Created' : 'OK',
      headers: { ...RATE_HEADERS, ...(op.idempotent ? { 'Idempotent-Replayed': header('Idempotent-Replayed') } : {}) },
      content: json({ type: 'object', required: ['success', 'data', 'error'], properties: { success: { const: true }, data: ref(op.response), error: { type: 'null' } } }),
    },
  };
  const bad = [...(hasBody || op.paging || op.query ? ['INVALID_REQUEST'] : []), ...(op.topicFilter ? ['INVALID_TOPIC_FILTER'] : [])];
  if (bad.length) responses['400'] = errorResponse('Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax', bad);
  responses['401'] = respRef('Unauthorized');
  // Every operation: a read needs no scope, but a portal session is refused all but its own (docs/portal.md).
  responses['403'] = respRef('Forbidden');
  responses['404'] = errorResponse('Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist', ['NAMESPACE_NOT_FOUND', ...(op.notFound ?? [])]);
  if (op.conflict) responses['409'] = errorResponse('Conflict', op.conflict);
  if (hasBody) {
    responses['413'] = op.payloadLimits
      ? errorResponse(`A payload above ${MAX_PAYLOAD_BYTES} bytes (256 KiB) of UTF-8, or a batch body above ${MAX_BATCH_BODY_BYTES} bytes (1 MiB)`, ['MESSAGE_TOO_LARGE'])
      : errorResponse('A body larger than the gateway accepts (10 MB)', ['MESSAGE_TOO_LARGE'], {});
  }
  if (op.tooLargeAnswer) responses['413'] = errorResponse(op.tooLargeAnswer, ['MESSAGE_TOO_LARGE']);
  if (hasBody || op.paging || op.query || route.group === 'publish') {
    responses['422'] = errorResponse('A missing required field or a value out of range; `details.fields` names each field', ['VALIDATION_ERROR']);
  }
  responses['429'] = op.tooMany
    ? errorResponse(
        "Over the namespace's limit for the rate category in this minute (RATE_LIMIT_EXCEEDED), or (TOO_MANY_IN_FLIGHT) the queue has too many messages received and not yet acknowledged: acknowledge messages or let their visibility end, then retry after `Retry-After` seconds",
        ['RATE_LIMIT_EXCEEDED', ...op.tooMany],
        { ...RATE_HEADERS, 'Retry-After': header('Retry-After') },
      )
    : route.operation === 'publish' || route.operation === 'publishBatch'
      ? errorResponse(
        `Over the namespace's publish requests of this minute (\`details.category\` \`publish\`), or over its fan-out budget: the writes this publish would cause, messages x bindings reached, do not fit what is left of the minute's budget (\`details.category\` \`fanout\`, with \`limit\`, \`reset\` and \`writes\`; default ${DEFAULT_FANOUT_LIMIT} a minute). Nothing is stored`,
        ['RATE_LIMIT_EXCEEDED'],
        { ...RATE_HEADERS, 'Retry-After': header('Retry-After') },
      )
      : respRef('RateLimited');
  responses['500'] = respRef('InternalError');
  responses['503'] = respRef('ServiceUnavailable');

  return {
    operationId: op.operationId,
    summary: op.summary,
    description: [
      op.description,
      `Scope: ${route.scope === 'read' ? '`any key of the namespace`' : route.also ? `\`${route.scope}\` and \`${route.also}\` (${ALSO_WHY[route.also]})` : `\`${route.scope}\``}${(route.alsoWhen ?? []).map((c) => `; also \`${c.scope}\` when ${c.when}`).join('')}. Rate category: \`${route.category}\` (${DEFAULT_LIMITS[route.category]} requests per minute per namespace by default).`,
    ]
      .filter(Boolean)
      .join('\n\n'),
    tags: [route.group],
    'x-rate-limit-category': route.category,
    'x-required-scope': route.scope,
    ...(route.also ? { 'x-also-required-scope': route.also } : {}),
    ...(route.alsoWhen ? { 'x-conditionally-required-scopes': route.alsoWhen.map((c) => ({ ...c })) } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(hasBody
      ? { requestBody: { required: ((body.required as string[] | undefined) ?? []).length > 0, content: json(ref(bodySchemaName)) } }
      : {}),
    responses,
  };
}

const DESCRIPTION = `JSON REST API of the messaging service: publish to topics; consume from queues, streams and subscriptions bound to topics by MQTT filters; deliver to webhooks.

**Envelope.** Every answer (errors from the gateway layer included) is \`{"success", "data", "error"}\`: on success \`data\` is the payload and \`error\` null; on error \`data\` is null and \`error\` is \`{code, message, details}\` with \`details\` always an object (\`{"fields": [{"field", "message"}]}\` for validation errors). Timestamps are ISO 8601 UTC with milliseconds. Unknown body fields are ignored.

**Statuses.** 201 for creates and publishes, 200 for everything else that succeeds. 400 INVALID_REQUEST (body not JSON or not an object, wrong JSON type, bad query value) or INVALID_TOPIC_FILTER; 401 INVALID_API_KEY; 403 INSUFFICIENT_PERMISSIONS; 404 for missing resources (QUEUE_NOT_FOUND, STREAM_NOT_FOUND, SUBSCRIPTION_NOT_FOUND, WEBHOOK_NOT_FOUND, NAMESPACE_NOT_FOUND, TOPIC_NOT_FOUND, MESSAGE_NOT_FOUND) and NOT_FOUND for unknown paths; 405 METHOD_NOT_ALLOWED with an \`Allow\` header for a method a path does not serve; 409 for taken names (*_ALREADY_EXISTS), a namespace at its cap of a resource kind, of bindings per topic filter or of messages held for long delays (LIMIT_EXCEEDED), stale receipt handles (INVALID_RECEIPT_HANDLE) and Idempotency-Keys in flight; 413 MESSAGE_TOO_LARGE; 422 VALIDATION_ERROR (missing field, value out of range); 429 RATE_LIMIT_EXCEEDED; 500 INTERNAL_ERROR; 503 SERVICE_UNAVAILABLE with \`Retry-After\` when a dependency throttles, is briefly unavailable or times out. A refused request (any 4xx) changes nothing.

**Authentication.** \`Authorization: Bearer <API_KEY>\`. A key belongs to one namespace and has scopes: \`publish\`, \`consume\` (consume, ack, offset commit), \`manage\` (create, update, delete, webhook test) or \`*\`; creating or changing a schedule and redriving a queue need \`publish\` as well as \`manage\` (they publish later on the key's behalf); any key of the namespace may read (namespace, lists, gets, webhook status), and keys without \`manage\` see of a webhook only its name, filter, \`enabled\`, status and URL origin. On a host \`{namespace}.{base domain}\` the namespace must be the key's.

**Rate limits.** Per namespace per minute: publish ${DEFAULT_LIMITS.publish}, consume ${DEFAULT_LIMITS.consume}, management ${DEFAULT_LIMITS.management} (operators may change them per namespace). A portal link's or session's requests count instead on its application's own budget, ${DEFAULT_PORTAL_LIMIT} a minute per category by default, never on the namespace's. Answers to authenticated requests carry \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` for the request's category (and, for a portal credential, its application); over the limit, 429 with \`Retry-After\`. Each operation names its category in \`x-rate-limit-category\` and its scope in \`x-required-scope\`.

**Methods.** A method a path does not list answers 405 METHOD_NOT_ALLOWED (see components.responses.MethodNotAllowed).`;

/**
 * Builds the document. Throws when a route has no row in the operation table, so a new route
 * cannot ship undocumented.
 * @example buildOpenApi().paths['/queues'].post.operationId // 'createQueue'
 */
export function buildOpenApi(opts: OpenApiOptions = {}) {
  const routes = opts.routes ?? ROUTES;
  const missing = routes.filter((r) => !OPERATIONS[operationKey(r)]);
  if (missing.length) {
    throw new Error(`lambda/api-docs/operations.ts has no row for ${missing.map((r) => `${r.method} ${r.path} (${operationKey(r)})`).join(', ')}`);
  }
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = openApiPath(r.path);
    (paths[path] ??= {})[r.method.toLowerCase()] = operation(r, OPERATIONS[operationKey(r)]);
  }
  paths[OPENAPI_PATH] = {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI document',
      description: 'Served without authentication, without the envelope and without rate-limit headers.',
      tags: ['meta'],
      security: [],
      responses: {
        '200': {
          description: 'The OpenAPI 3.1 document',
          content: json({ type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } } }),
        },
        '405': respRef('MethodNotAllowed'),
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Messaging Service API',
      version: API_DOCUMENT_VERSION,
      description: DESCRIPTION,
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    servers: opts.servers ?? DEFAULT_SERVERS,
    security: [{ bearerAuth: [] }],
    tags: TAGS,
    paths,
    components: components(routes),
  };
}

let cached: string | undefined;
/** The default document as compact JSON text, built once per process. */
export const openApiJson = (): string => (cached ??= JSON.stringify(buildOpenApi()));

/**
 * The same JSON with every `$` and `#` written as a `\u` escape: equal once parsed, and safe as an
 * API Gateway mapping template, which Velocity would otherwise read `$ref` and `#/...` in. Both
 * characters only occur inside JSON strings, where the escapes are valid.
 * @example templateSafeJson('{"$ref":"#/a"}') // '{"\\u0024ref":"\\u0023/a"}'
 */
export const templateSafeJson = (jsonText: string): string => jsonText.replace(/\$/g, '\\u0024').replace(/#/g, '\\u0023');
