/**
 * The REST API, generated from the route table: stage `api`, every route under `/v1`, each
 * method a Lambda proxy integration of its group's function behind the REQUEST authorizer, an
 * `ANY` mock answering 405 on every resource, and Gateway Responses that answer in the envelope
 * (lambda/core/rules/gateway-responses.ts, the same answers as the local gateway).
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccessLogField, AccessLogFormat, ApiKeySourceType, AuthorizationType, EndpointType, IdentitySource, LambdaIntegration,
  LogGroupLogDestination, MethodLoggingLevel, MockIntegration, PassthroughBehavior, RequestAuthorizer,
  ResponseType, RestApi, type IResource, type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  API_STAGE, API_VERSION_PREFIX, apiResources, PORTAL_PAGE_PATH, resourcePathOf, ROUTES, type HandlerGroup, type HttpMethod, type Route,
} from '../../lambda/core/rules/routes';
import {
  AUTHORIZER_RETRY_AFTER_SECONDS, GATEWAY_ANSWERS, gatewayAnswerBody, MOCK_REQUEST_CONTENT_TYPES, type GatewayAnswer,
} from '../../lambda/core/rules/gateway-responses';

export { MOCK_REQUEST_CONTENT_TYPES };
import { buildOpenApi, OPENAPI_PATH, templateSafeJson } from '../../lambda/api-docs/openapi';
import type { Functions } from './functions';
import { SizeGuard } from './size-guard';

export interface ApiThrottle {
  /** Steady-state requests per second. */
  readonly rateLimit: number;
  /** Token-bucket size: requests allowed in a burst above the rate. */
  readonly burstLimit: number;
}

/**
 * Usage-plan throttle per API key. An outer guard only: the product's limits are per namespace
 * and category in DynamoDB (DESIGN.md section 10; publish 1000 + consume 500 + management 100 per
 * minute, about 27 requests per second together), so the plan sits well above them and only cuts
 * floods before they reach Lambda and DynamoDB.
 */
const DEFAULT_THROTTLE: ApiThrottle = { rateLimit: 50, burstLimit: 100 };

/**
 * Stage-wide throttle (every method, every caller, `deployOptions`): API Gateway applies it
 * before the authorizer runs, so a flood of requests with bad keys (which no usage plan meters:
 * the plan knows a key only once the authorizer has named it) cannot invoke the authorizer
 * without limit; beyond it API Gateway answers 429 (THROTTLED, in the envelope). Ten times the
 * per-key plan: well above any legitimate load one deployment's namespaces make together at the
 * product's limits, well under the account's 10,000 rps
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html).
 */
export const DEFAULT_STAGE_THROTTLE: ApiThrottle = { rateLimit: 500, burstLimit: 1000 };

/** The request templates of a mock answering `status`, one per {@link MOCK_REQUEST_CONTENT_TYPES}. */
const mockRequestTemplates = (status: number): Record<string, string> =>
  Object.fromEntries(MOCK_REQUEST_CONTENT_TYPES.map((t) => [t, `{"statusCode": ${status}}`]));

/**
 * How long API Gateway reuses an authorizer answer for the same Authorization and Host headers.
 * A revoked key keeps working until its cached answer expires, so this is the revocation delay;
 * 30 s keeps it short while sparing a DynamoDB GetItem and an authorizer invocation on nearly
 * every request of a busy client. `Duration.seconds(0)` disables the cache.
 */
const DEFAULT_AUTHORIZER_CACHE_TTL = Duration.seconds(30);

export interface ApiProps {
  readonly functions: Functions;
  /** @default ROUTES */
  readonly routes?: readonly Route[];
  /** Usage-plan throttle. @default DEFAULT_THROTTLE (50 requests/s, burst 100) */
  readonly throttle?: ApiThrottle;
  /** Stage-wide throttle, before the authorizer. @default DEFAULT_STAGE_THROTTLE (500 requests/s, burst 1000) */
  readonly stageThrottle?: ApiThrottle;
  /** @default DEFAULT_AUTHORIZER_CACHE_TTL (30 seconds) */
  readonly authorizerCacheTtl?: Duration;
  /** Of the access log group. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Of the access log group. @default RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Create the role API Gateway writes its logs with and make it the account's
   * (AWS::ApiGateway::Account, one setting per account and region). Execution logging fails to
   * deploy in an account where that role was never set, hence on by default; turn it off where
   * the account already has one (another environment's stack, another project), or this stack
   * would point the account's setting at its own role. Both the role and the account setting are
   * kept when the stack is deleted (other APIs of the account log through them) and deleted only
   * by the rollback of the deploy that created them.
   * @default true
   */
  readonly cloudWatchRole?: boolean;
  /**
   * The size guard (./size-guard.ts): an AWS WAF web ACL on the stage answering 413
   * MESSAGE_TOO_LARGE for a Content-Length of 3,000,000 bytes or more, the same rule as the local
   * gateway. About $6 a month plus $0.60 per million requests. @default true
   */
  readonly sizeGuard?: boolean;
}

/**
 * Gateway Responses: answers API Gateway produces itself. Types with a status answer with the
 * status of the shared table; DEFAULT_4XX and DEFAULT_5XX cover many situations (415, 403 on a
 * bad signature, 502 on a malformed Lambda answer, ...) and keep API Gateway's own status.
 */
const GATEWAY_RESPONSES: { type: ResponseType; answer: GatewayAnswer; keepStatus?: true; headers?: Record<string, string> }[] = [
  { type: ResponseType.UNAUTHORIZED, answer: GATEWAY_ANSWERS.unauthorized, headers: { 'WWW-Authenticate': 'Bearer' } },
  { type: ResponseType.ACCESS_DENIED, answer: GATEWAY_ANSWERS.accessDenied },
  { type: ResponseType.INVALID_API_KEY, answer: GATEWAY_ANSWERS.keyNotInUsagePlan, headers: { 'WWW-Authenticate': 'Bearer' } },
  // API Gateway answers a path with no resource (or no method) as MISSING_AUTHENTICATION_TOKEN.
  { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, answer: GATEWAY_ANSWERS.notFound },
  { type: ResponseType.RESOURCE_NOT_FOUND, answer: GATEWAY_ANSWERS.notFound },
  { type: ResponseType.THROTTLED, answer: GATEWAY_ANSWERS.throttled, headers: { 'Retry-After': '1' } },
  { type: ResponseType.QUOTA_EXCEEDED, answer: GATEWAY_ANSWERS.throttled },
  { type: ResponseType.REQUEST_TOO_LARGE, answer: GATEWAY_ANSWERS.tooLarge },
  { type: ResponseType.INTEGRATION_TIMEOUT, answer: GATEWAY_ANSWERS.integrationTimeout },
  // The authorizer function failed (its table throttled or unavailable), not a refused key.
  { type: ResponseType.AUTHORIZER_FAILURE, answer: GATEWAY_ANSWERS.authorizerUnavailable, headers: { 'Retry-After': String(AUTHORIZER_RETRY_AFTER_SECONDS) } },
  { type: ResponseType.AUTHORIZER_CONFIGURATION_ERROR, answer: GATEWAY_ANSWERS.authorizerUnavailable, headers: { 'Retry-After': String(AUTHORIZER_RETRY_AFTER_SECONDS) } },
  { type: ResponseType.DEFAULT_4XX, answer: GATEWAY_ANSWERS.badRequest, keepStatus: true },
  { type: ResponseType.DEFAULT_5XX, answer: GATEWAY_ANSWERS.internal, keepStatus: true },
];

/**
 * A fixed JSON body as a mapping template. Templates are Velocity: `$` and `#` would start a
 * reference or a directive, so a body containing them is refused at synth rather than mangled.
 */
export function staticTemplate(body: string): string {
  if (/[$#]/.test(body)) throw new Error(`gateway answer body must not contain $ or #: ${body}`);
  return body;
}

/**
 * API Gateway's quota on a mapping template's size (REST APIs: 300 KB, not adjustable), which the
 * OpenAPI document's response template must fit.
 */
export const MAX_MAPPING_TEMPLATE_BYTES = 300 * 1024;

/** A header value as API Gateway wants it in response parameters: a quoted literal. */
const literal = (v: string) => `'${v}'`;

/** Access log line (JSON): who called what, how it ended; never a header value or a body. */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: AccessLogField.contextRequestId(),
    time: AccessLogField.contextRequestTime(),
    ip: AccessLogField.contextIdentitySourceIp(),
    method: AccessLogField.contextHttpMethod(),
    resource: AccessLogField.contextResourcePath(),
    path: AccessLogField.contextPath(),
    status: AccessLogField.contextStatus(),
    responseLength: AccessLogField.contextResponseLength(),
    latency: AccessLogField.contextResponseLatency(),
    integrationLatency: AccessLogField.contextIntegrationLatency(),
    keyId: AccessLogField.contextAuthorizerPrincipalId(),
    namespace: AccessLogField.contextAuthorizer('namespace'),
    errorType: AccessLogField.contextErrorResponseType(),
    error: AccessLogField.contextErrorMessage(),
    traceId: AccessLogField.contextXrayTraceId(),
  }),
);

/** Page loads per second (and burst) of the portal page across the stage. */
export const PORTAL_PAGE_THROTTLE = { throttlingRateLimit: 50, throttlingBurstLimit: 100 };

export class Api extends Construct {
  readonly restApi: RestApi;
  readonly authorizer: RequestAuthorizer;
  readonly usagePlan: UsagePlan;
  /** The access log group (one JSON line per request, ACCESS_LOG_FORMAT). */
  readonly accessLogs: LogGroup;
  /** `https://{api}.execute-api.{region}.amazonaws.com/api/v1` */
  readonly url: string;
  /** The WAF size guard on the stage, unless turned off. */
  readonly sizeGuard?: SizeGuard;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    const routes = props.routes ?? ROUTES;
    const accessLogs = (this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    }));

    this.restApi = new RestApi(this, 'RestApi', {
      restApiName: Stack.of(this).stackName,
      description: 'Messaging service REST API (routes from lambda/core/rules/routes.ts)',
      // Regional: clients in the region skip CloudFront, and a wildcard custom domain for the
      // per-namespace hosts (`{ns}.{base domain}`) maps onto it directly.
      endpointTypes: [EndpointType.REGIONAL],
      // The usage plan meters the API key the authorizer names (`usageIdentifierKey`, the key's
      // SHA-256 hash), not an x-api-key header: clients send only Authorization: Bearer.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      cloudWatchRole: props.cloudWatchRole ?? true,
      ...((props.cloudWatchRole ?? true) ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE } : {}),
      deployOptions: {
        stageName: API_STAGE,
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: ACCESS_LOG_FORMAT,
        // Execution logs for errors only, and never request or response bodies (payloads, keys).
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        throttlingRateLimit: (props.stageThrottle ?? DEFAULT_STAGE_THROTTLE).rateLimit,
        throttlingBurstLimit: (props.stageThrottle ?? DEFAULT_STAGE_THROTTLE).burstLimit,
        // The portal page needs no key, so no usage plan meters it: a throttle of its own (method throttling, https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html).
        methodOptions: { [`${API_VERSION_PREFIX}${PORTAL_PAGE_PATH}/GET`]: PORTAL_PAGE_THROTTLE },
      },
    });

    this.authorizer = new RequestAuthorizer(this, 'Authorizer', {
      handler: props.functions.authorizer,
      // Without an Authorization header API Gateway answers 401 (UNAUTHORIZED) without calling
      // the authorizer. Host is part of the cache key because the Host rule (DESIGN.md section 2)
      // makes the answer depend on it.
      identitySources: [IdentitySource.header('Authorization'), IdentitySource.header('Host')],
      resultsCacheTtl: props.authorizerCacheTtl ?? DEFAULT_AUTHORIZER_CACHE_TTL,
    });

    const integrations = new Map<HandlerGroup, LambdaIntegration>();
    const integrationOf = (group: HandlerGroup) => {
      let integration = integrations.get(group);
      if (!integration) {
        const fn = props.functions.http.get(group);
        if (!fn) throw new Error(`no function for handler group ${group}`);
        // One invoke permission per function for this API instead of two per method: the
        // function's resource policy stays small however many routes the group serves.
        integration = new LambdaIntegration(fn, { scopePermissionToMethod: false });
        integrations.set(group, integration);
      }
      return integration;
    };

    for (const [path, methods] of apiResources(routes)) {
      const resource = this.restApi.root.resourceForPath(`${API_VERSION_PREFIX}${path}`);
      for (const method of methods) {
        resource.addMethod(method, integrationOf(groupOf(routes, path, method)), {
          authorizer: this.authorizer,
          authorizationType: AuthorizationType.CUSTOM,
          // Puts the request under the usage plan's throttle for the authorizer's usage key.
          apiKeyRequired: true,
        });
      }
      this.addMethodNotAllowed(resource, methods);
    }

    for (const { type, answer, keepStatus, headers } of GATEWAY_RESPONSES) {
      this.restApi.addGatewayResponse(`GatewayResponse${pascalCase(type.responseType)}`, {
        type,
        statusCode: keepStatus ? undefined : String(answer.status),
        responseHeaders: Object.fromEntries(
          Object.entries({ 'Content-Type': 'application/json', ...headers }).map(([k, v]) => [k, literal(v)]),
        ),
        templates: { 'application/json': staticTemplate(gatewayAnswerBody(answer)) },
      });
    }

    // Every API key of the service has a twin API Gateway key in this plan: name = key id, value =
    // the key's SHA-256 hash, which the authorizer returns as `usageIdentifierKey` (the admin CLI
    // creates and deletes the twins, bin/admin-usage-plan.ts). A request whose key has no twin
    // is API Gateway's INVALID_API_KEY, answered 401 above. The plan has no quota: budgets are
    // the per-namespace limits (docs/rate-limits.md).
    this.usagePlan = this.restApi.addUsagePlan('UsagePlan', {
      description: 'Outer throttle per API key; per-namespace limits are enforced by the handlers',
      throttle: props.throttle ?? DEFAULT_THROTTLE,
      apiStages: [{ api: this.restApi, stage: this.restApi.deploymentStage }],
    });

    if (props.sizeGuard ?? true) this.sizeGuard = new SizeGuard(this, 'SizeGuard', { stage: this.restApi.deploymentStage });

    this.url = this.restApi.deploymentStage.urlForPath(API_VERSION_PREFIX);
    // RestApi adds an output with the stage's root URL; the stack outputs the API's base URL
    // (`.../api/v1`) instead, so there is one URL to copy.
    this.restApi.node.tryRemoveChild('Endpoint');
    this.acknowledgeNagRules();
    this.addOpenApiDocument(routes);
    this.addPortalPage(props.functions);
  }

  /** `GET /v1/portal-page` (lambda/handlers/portal-page.ts), without the authorizer: the page holds no data. CloudFront's `/portal/` comes here. */
  private addPortalPage(functions: Functions) {
    const resource = this.restApi.root.resourceForPath(`${API_VERSION_PREFIX}${PORTAL_PAGE_PATH}`);
    const method = resource.addMethod('GET', new LambdaIntegration(functions.portalPage, { scopePermissionToMethod: false }), { authorizationType: AuthorizationType.NONE });
    const reason = "The portal page is the console's static index.html with its namespace's CSP header: no data, opened before sign-in (the session comes from the link's token, checked by the API); throttled per method.";
    Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason });
    Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason });
    this.addMethodNotAllowed(resource, ['GET']);
  }

  /**
   * `ANY` on a resource answers 405 in the envelope. API Gateway prefers a method that names the
   * request's verb over ANY, so the real methods still win.
   */
  private addMethodNotAllowed(resource: IResource, methods: HttpMethod[]) {
    const allow = methods.join(', ');
    const anyMethod = resource.addMethod(
      'ANY',
      new MockIntegration({
        // A mock integration answers with the status of its request template: one per content
        // type, so a wrong method with a text, form or binary body is a 405 too;
        // any other type is API Gateway's 415.
        passthroughBehavior: PassthroughBehavior.NEVER,
        requestTemplates: mockRequestTemplates(405),
        integrationResponses: [
          {
            statusCode: '405',
            responseTemplates: { 'application/json': staticTemplate(gatewayAnswerBody(GATEWAY_ANSWERS.methodNotAllowed)) },
            responseParameters: {
              'method.response.header.Content-Type': literal('application/json'),
              'method.response.header.Allow': literal(allow),
            },
          },
        ],
      }),
      {
        authorizationType: AuthorizationType.NONE,
        methodResponses: [
          {
            statusCode: '405',
            responseParameters: { 'method.response.header.Content-Type': true, 'method.response.header.Allow': true },
          },
        ],
      },
    );
    Validations.of(anyMethod).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason: 'The ANY method is a mock that only answers 405 METHOD_NOT_ALLOWED (no integration, no data); requiring a key there would turn a wrong method into a 401.',
    });
  }

  /**
   * `GET /v1/openapi.json`: the OpenAPI document (lambda/api-docs/openapi.ts), without the
   * authorizer, as a mock integration whose response template is the document itself: no Lambda,
   * no invocation cost, and the document is fixed at synth like the routes it describes.
   */
  private addOpenApiDocument(routes: readonly Route[]) {
    const body = templateSafeJson(JSON.stringify(buildOpenApi({ routes })));
    if (Buffer.byteLength(body) > MAX_MAPPING_TEMPLATE_BYTES) {
      throw new Error(`the OpenAPI document is ${Buffer.byteLength(body)} bytes, above API Gateway's ${MAX_MAPPING_TEMPLATE_BYTES}-byte mapping template limit; serve it from a Lambda function instead`);
    }
    const resource = this.restApi.root.resourceForPath(`${API_VERSION_PREFIX}${OPENAPI_PATH}`);
    const method = resource.addMethod(
      'GET',
      new MockIntegration({
        passthroughBehavior: PassthroughBehavior.NEVER,
        requestTemplates: mockRequestTemplates(200),
        integrationResponses: [
          {
            statusCode: '200',
            responseTemplates: { 'application/json': body },
            responseParameters: { 'method.response.header.Content-Type': literal('application/json') },
          },
        ],
      }),
      {
        authorizationType: AuthorizationType.NONE,
        methodResponses: [{ statusCode: '200', responseParameters: { 'method.response.header.Content-Type': true } }],
      },
    );
    const reason = 'The public API description (OpenAPI document) is served without a key, like any API reference; a mock integration with a fixed body, no data and no backend.';
    Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason });
    Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason });
    this.addMethodNotAllowed(resource, ['GET']);
  }

  private acknowledgeNagRules() {
    Validations.of(this.restApi).acknowledge({
      id: 'AwsSolutions-COG4',
      reason: 'Clients authenticate with API keys (Authorization: Bearer), checked by the Lambda REQUEST authorizer (DESIGN.md section 2); there are no Cognito users.',
    });
    Validations.of(this.restApi).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason: 'Requests are validated by the handlers (zod schemas) so that errors carry the envelope with per-field details (DESIGN.md section 3); an API Gateway request validator would answer without them.',
    });
    if (!this.sizeGuard) {
      Validations.of(this.restApi.deploymentStage).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason: 'The size guard web ACL is turned off (context sizeGuard=false, a fixed monthly cost per deployment): the authorizer rejects unknown keys, the usage plan and per-namespace limits throttle, and operators can associate a web ACL with the stage.',
      });
    }
    const cloudWatchRole = this.restApi.node.tryFindChild('CloudWatchRole');
    if (cloudWatchRole) {
      Validations.of(cloudWatchRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason: 'The AWS managed policy made for the account-wide role API Gateway writes access and execution logs with; it is what API Gateway requires and AWS keeps it current.',
      });
    }
  }
}

/** The handler group of the routes on `resource` with `method`; one integration serves them all. */
function groupOf(routes: readonly Route[], resource: string, method: HttpMethod): HandlerGroup {
  const groups = new Set(routes.filter((r) => r.method === method && resourcePathOf(r.path) === resource).map((r) => r.group));
  if (groups.size !== 1) {
    throw new Error(`${method} ${resource} must be served by exactly one handler group, found: ${[...groups].join(', ')}`);
  }
  return [...groups][0];
}

const pascalCase = (s: string) => s.toLowerCase().replace(/(^|_)([a-z0-9])/g, (_m, _u, c: string) => c.toUpperCase());
