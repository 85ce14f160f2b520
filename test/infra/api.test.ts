import { Match } from 'aws-cdk-lib/assertions';
import { App, Duration, Stack } from 'aws-cdk-lib';
import type { Method, Resource } from 'aws-cdk-lib/aws-apigateway';
import { API_STAGE, API_VERSION_PREFIX, apiResources, PORTAL_PAGE_PATH, resourcePathOf, ROUTES } from '../../lambda/core/rules/routes';
import { DYNAMODB_ACTIONS, TABLE_ACCESS } from '../../lib/table-access';
import { GATEWAY_ANSWERS, gatewayAnswerBody, SIZE_GUARD_CONTENT_LENGTH_PATTERN } from '../../lambda/core/rules/gateway-responses';
import { SIZE_GUARD_BODY_KEY, SIZE_GUARD_RULE } from '../../lib/constructs/size-guard';
import { TABLES, type TableId } from '../../lambda/core/storage/tables';
import { Api, DEFAULT_STAGE_THROTTLE, MOCK_REQUEST_CONTENT_TYPES, PORTAL_PAGE_THROTTLE, staticTemplate } from '../../lib/constructs/api';
import { Functions } from '../../lib/constructs/functions';
import { Tables } from '../../lib/constructs/tables';
import { API_URL_OUTPUT, CONSOLE_URL_OUTPUT, DASHBOARD_URL_OUTPUT, SQS_QUEUE_PREFIX_OUTPUT, SQS_QUEUE_URL_BASE_OUTPUT, USAGE_PLAN_ID_OUTPUT, WEBHOOK_QUEUE_URL_OUTPUT, tableNameOutput } from '../../lib/stack-outputs';
import { defaultStack, synthesize } from './stack';

const { stack, template, logicalId } = defaultStack();
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>;
const api = stack.api.restApi;
const resourceAt = (path: string) => api.root.resourceForPath(`${API_VERSION_PREFIX}${path}`) as Resource;
const methodAt = (path: string, verb: string) => resourceAt(path).node.tryFindChild(verb) as Method | undefined;
const methodProps = (path: string, verb: string) => resources[logicalId(methodAt(path, verb)!)].Properties;

describe('REST API', () => {
  it('serves stage `api` with tracing, access logs and error-only execution logs without bodies', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: API_STAGE,
      TracingEnabled: true,
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('"keyId":"\\$context.authorizer.principalId"') },
      MethodSettings: Match.arrayWith([Match.objectLike({ LoggingLevel: 'ERROR', DataTraceEnabled: false, HttpMethod: '*', ResourcePath: '/*' })]),
    });
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
  });

  it('takes the API key from the authorizer (usageIdentifierKey), not from an x-api-key header', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
  });

  it.each(ROUTES.map((r) => [r.method, r.path, r]))('%s %s is a proxy integration of its group behind the authorizer', (_m, _p, route) => {
    const resource = resourcePathOf(route.path);
    const method = methodAt(resource, route.method);
    expect(method).toBeDefined();
    expect(resourceAt(resource).path).toBe(`${API_VERSION_PREFIX}${resource}`);
    const fn = stack.functions.http.get(route.group)!;
    expect(methodProps(resource, route.method)).toMatchObject({
      HttpMethod: route.method,
      AuthorizationType: 'CUSTOM',
      AuthorizerId: { Ref: logicalId(stack.api.authorizer) },
      // Metered by the usage plan under the key the authorizer names (usageIdentifierKey).
      ApiKeyRequired: true,
      Integration: {
        Type: 'AWS_PROXY',
        IntegrationHttpMethod: 'POST',
        Uri: { 'Fn::Join': ['', expect.arrayContaining([{ 'Fn::GetAtt': [logicalId(fn), 'Arn'] }])] },
      },
    });
  });

  it('has a method only where the route table has a route, plus ANY on each of those resources, plus the OpenAPI document and the portal page', () => {
    // + GET and ANY on /v1/openapi.json (test/infra/openapi.test.ts) and on /v1/portal-page.
    const expected = [...apiResources()].reduce((n, [, methods]) => n + methods.length + 1, 4);
    template.resourceCountIs('AWS::ApiGateway::Method', expected);
  });

  it.each([...apiResources()].map(([path, methods]) => [path, methods]))('ANY on %s answers 405 in the envelope without auth', (path, methods) => {
    expect(methodProps(path, 'ANY')).toEqual({
      HttpMethod: 'ANY',
      ResourceId: { Ref: logicalId(resourceAt(path)) },
      RestApiId: { Ref: logicalId(api) },
      AuthorizationType: 'NONE',
      Integration: {
        Type: 'MOCK',
        // A template per content type: a wrong method with a text, form or binary body is a 405
        // too; any other type API Gateway's 415, never the mock's 500 (docs/aws-parity.md).
        PassthroughBehavior: 'NEVER',
        RequestTemplates: Object.fromEntries(MOCK_REQUEST_CONTENT_TYPES.map((t) => [t, '{"statusCode": 405}'])),
        IntegrationResponses: [
          {
            StatusCode: '405',
            ResponseTemplates: { 'application/json': gatewayAnswerBody(GATEWAY_ANSWERS.methodNotAllowed) },
            ResponseParameters: {
              'method.response.header.Content-Type': "'application/json'",
              'method.response.header.Allow': `'${methods.join(', ')}'`,
            },
          },
        ],
      },
      MethodResponses: [
        { StatusCode: '405', ResponseParameters: { 'method.response.header.Content-Type': true, 'method.response.header.Allow': true } },
      ],
    });
  });

  it('authorizes with a REQUEST authorizer cached 30 s per Authorization and Host header', () => {
    template.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization,method.request.header.Host',
      AuthorizerResultTtlInSeconds: 30,
      AuthorizerUri: Match.objectLike({
        'Fn::Join': ['', Match.arrayWith([{ 'Fn::GetAtt': [logicalId(stack.functions.authorizer), 'Arn'] }])],
      }),
    });
  });

  it('lets API Gateway invoke each function with one permission for the whole API', () => {
    for (const fn of [...stack.functions.http.values(), stack.functions.authorizer]) {
      const perms = Object.values(resources).filter(
        (r) => r.Type === 'AWS::Lambda::Permission' && JSON.stringify(r.Properties.FunctionName).includes(logicalId(fn)),
      );
      expect(perms).toHaveLength(1);
      expect(perms[0].Properties.Principal).toBe('apigateway.amazonaws.com');
    }
  });

  // DEFAULT_4XX and DEFAULT_5XX keep API Gateway's own status (415, 403, 502, ...).
  const responses: [string, string, { code: string; message: string }][] = [
    ['UNAUTHORIZED', '401', GATEWAY_ANSWERS.unauthorized],
    ['ACCESS_DENIED', '403', GATEWAY_ANSWERS.accessDenied],
    // API Gateway's own 403 when the authorizer's usage key has no API key in the usage plan.
    ['INVALID_API_KEY', '401', GATEWAY_ANSWERS.keyNotInUsagePlan],
    ['MISSING_AUTHENTICATION_TOKEN', '404', GATEWAY_ANSWERS.notFound],
    ['RESOURCE_NOT_FOUND', '404', GATEWAY_ANSWERS.notFound],
    ['THROTTLED', '429', GATEWAY_ANSWERS.throttled],
    ['QUOTA_EXCEEDED', '429', GATEWAY_ANSWERS.throttled],
    ['REQUEST_TOO_LARGE', '413', GATEWAY_ANSWERS.tooLarge],
    ['INTEGRATION_TIMEOUT', '504', GATEWAY_ANSWERS.integrationTimeout],
    // The authorizer could not read the key: 503 with Retry-After, not 500.
    ['AUTHORIZER_FAILURE', '503', GATEWAY_ANSWERS.authorizerUnavailable],
    ['AUTHORIZER_CONFIGURATION_ERROR', '503', GATEWAY_ANSWERS.authorizerUnavailable],
    ['DEFAULT_4XX', 'its own status', GATEWAY_ANSWERS.badRequest],
    ['DEFAULT_5XX', 'its own status', GATEWAY_ANSWERS.internal],
  ];
  it.each(responses)('Gateway Response %s answers %s with the envelope', (type, status, answer) => {
    const found = template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: type } });
    expect(Object.values(found)).toHaveLength(1);
    const props = Object.values(found)[0].Properties;
    expect(props.StatusCode).toBe(/^\d+$/.test(status) ? status : undefined);
    expect(props.ResponseParameters['gatewayresponse.header.Content-Type']).toBe("'application/json'");
    expect(JSON.parse(props.ResponseTemplates['application/json'])).toEqual({
      success: false,
      data: null,
      error: { code: answer.code, message: answer.message, details: {} },
    });
  });

  it('covers every content type a client commonly sends in the mocks, JSON first', () => {
    expect(MOCK_REQUEST_CONTENT_TYPES).toEqual(expect.arrayContaining(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/octet-stream', 'application/xml']));
  });

  it('throttles the whole stage before the authorizer (500 rps, burst 1000), so bad-key floods cannot invoke it without limit', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 })]),
    });
    expect(DEFAULT_STAGE_THROTTLE).toEqual({ rateLimit: 500, burstLimit: 1000 });
    const { template: t } = synthesize({ stageThrottle: { rateLimit: 20, burstLimit: 40 } });
    t.hasResourceProperties('AWS::ApiGateway::Stage', { MethodSettings: Match.arrayWith([Match.objectLike({ ResourcePath: '/*', ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 })]) });
  });

  it('serves the portal page by its own function without the authorizer or a key, throttled on its own, and 405 for other methods', () => {
    expect(methodProps(PORTAL_PAGE_PATH, 'GET')).toMatchObject({
      HttpMethod: 'GET',
      AuthorizationType: 'NONE',
      Integration: { Type: 'AWS_PROXY', Uri: { 'Fn::Join': ['', expect.arrayContaining([{ 'Fn::GetAtt': [logicalId(stack.functions.portalPage), 'Arn'] }])] } },
    });
    expect(methodProps(PORTAL_PAGE_PATH, 'GET').ApiKeyRequired).toBeFalsy();
    expect(methodProps(PORTAL_PAGE_PATH, 'ANY')).toMatchObject({ AuthorizationType: 'NONE', Integration: { Type: 'MOCK' } });
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([Match.objectLike({ HttpMethod: 'GET', ResourcePath: `/${`${API_VERSION_PREFIX}${PORTAL_PAGE_PATH}`.replace(/\//g, '~1')}`, ThrottlingRateLimit: PORTAL_PAGE_THROTTLE.throttlingRateLimit, ThrottlingBurstLimit: PORTAL_PAGE_THROTTLE.throttlingBurstLimit })]),
    });
    // Its function reads the namespace item only.
    expect(TABLE_ACCESS.portalPage).toEqual({ meta: 'read' });
    expect(DYNAMODB_ACTIONS.portalPage).toEqual(['dynamodb:GetItem']);
  });

  it('says when to retry when the authorizer cannot check the key', () => {
    for (const type of ['AUTHORIZER_FAILURE', 'AUTHORIZER_CONFIGURATION_ERROR']) {
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        ResponseParameters: Match.objectLike({ 'gatewayresponse.header.Retry-After': "'1'" }),
      });
    }
  });

  it('asks for Bearer credentials on 401 and says when to retry on 429', () => {
    for (const type of ['UNAUTHORIZED', 'INVALID_API_KEY']) {
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        ResponseParameters: Match.objectLike({ 'gatewayresponse.header.WWW-Authenticate': "'Bearer'" }),
      });
    }
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'THROTTLED',
      ResponseParameters: Match.objectLike({ 'gatewayresponse.header.Retry-After': "'1'" }),
    });
  });

  it('refuses a route table in which two handler groups serve the same method of one resource', () => {
    const routes = [
      { method: 'POST', path: '/topics/{topic+}/messages', group: 'publish', operation: 'publish', category: 'publish', scope: 'publish', status: 201 },
      { method: 'POST', path: '/topics/{topic+}/other', group: 'queues', operation: 'other', category: 'publish', scope: 'publish', status: 201 },
    ] as const;
    const s = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Conflict');
    const functions = new Functions(s, 'Functions', { tables: new Tables(s, 'Tables'), routes });
    expect(() => new Api(s, 'Api', { functions, routes })).toThrow('POST /topics/{topic+} must be served by exactly one handler group, found: publish, queues');
  });

  it('refuses a fixed body that Velocity would interpret', () => {
    expect(() => staticTemplate('{"a":"$b"}')).toThrow(/must not contain/);
    expect(staticTemplate('{"a":"b"}')).toBe('{"a":"b"}');
  });

  it('has a usage plan on the stage with the default throttle (50 rps, burst 100)', () => {
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: 50, BurstLimit: 100 },
      ApiStages: [{ ApiId: { Ref: logicalId(api) }, Stage: { Ref: logicalId(api.deploymentStage) } }],
    });
  });

  it('takes the throttle and authorizer cache TTL from the stack props', () => {
    const { template: t } = synthesize({ throttle: { rateLimit: 5, burstLimit: 7 }, authorizerCacheTtl: Duration.seconds(0) });
    t.hasResourceProperties('AWS::ApiGateway::UsagePlan', { Throttle: { RateLimit: 5, BurstLimit: 7 } });
    t.hasResourceProperties('AWS::ApiGateway::Authorizer', { AuthorizerResultTtlInSeconds: 0 });
  });

  it('outputs the API base URL, the usage plan id, the webhook delivery queue URL, the SQS queue prefix and URL base, the dashboard URL, the console URL and the table names, nothing else', () => {
    expect(Object.keys(template.findOutputs('*')).sort()).toEqual(
      [API_URL_OUTPUT, USAGE_PLAN_ID_OUTPUT, CONSOLE_URL_OUTPUT, WEBHOOK_QUEUE_URL_OUTPUT, SQS_QUEUE_PREFIX_OUTPUT, SQS_QUEUE_URL_BASE_OUTPUT, DASHBOARD_URL_OUTPUT, ...(Object.keys(TABLES) as TableId[]).map(tableNameOutput)].sort(),
    );
  });

  it('outputs the usage plan id for the admin CLI (key create adds each key to the plan)', () => {
    expect(template.findOutputs(USAGE_PLAN_ID_OUTPUT)[USAGE_PLAN_ID_OUTPUT].Value).toEqual({ Ref: logicalId(stack.api.usagePlan) });
    // One plan, throttling only: no quota (budgets are the per-namespace limits).
    template.resourceCountIs('AWS::ApiGateway::UsagePlan', 1);
    expect(Object.values(template.findResources('AWS::ApiGateway::UsagePlan'))[0].Properties.Quota).toBeUndefined();
  });

  it('outputs the API base URL ending in /api/v1', () => {
    const output = template.findOutputs(API_URL_OUTPUT)[API_URL_OUTPUT];
    const parts = output.Value['Fn::Join'][1] as unknown[];
    expect(parts).toContainEqual({ Ref: logicalId(api) });
    // https://{api}.execute-api.{region}.{suffix}/{stage}/v1, the stage being `api`.
    expect(parts.slice(-3)).toEqual(['/', { Ref: logicalId(api.deploymentStage) }, API_VERSION_PREFIX]);
    expect(resources[logicalId(api.deploymentStage)].Properties.StageName).toBe(API_STAGE);
  });
});

describe('size guard', () => {
  it('blocks a Content-Length of 3,000,000 bytes or more with a WAF rule answering 413 MESSAGE_TOO_LARGE in the envelope, the local gateway’s pattern', () => {
    template.resourceCountIs('AWS::WAFv2::WebACL', 1);
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      CustomResponseBodies: { [SIZE_GUARD_BODY_KEY]: { ContentType: 'APPLICATION_JSON', Content: gatewayAnswerBody(GATEWAY_ANSWERS.sizeGuard) } },
      Rules: [
        {
          Name: SIZE_GUARD_RULE,
          Priority: 0,
          Statement: {
            RegexMatchStatement: {
              RegexString: SIZE_GUARD_CONTENT_LENGTH_PATTERN,
              FieldToMatch: { SingleHeader: { Name: 'content-length' } },
              TextTransformations: [{ Priority: 0, Type: 'NONE' }],
            },
          },
          Action: { Block: { CustomResponse: { ResponseCode: 413, CustomResponseBodyKey: SIZE_GUARD_BODY_KEY } } },
          VisibilityConfig: Match.objectLike({ CloudWatchMetricsEnabled: true }),
        },
      ],
    });
    expect(JSON.parse(gatewayAnswerBody(GATEWAY_ANSWERS.sizeGuard))).toMatchObject({ success: false, data: null, error: { code: 'MESSAGE_TOO_LARGE' } });
    // WAF's custom response bodies are at most 4 KB.
    expect(Buffer.byteLength(gatewayAnswerBody(GATEWAY_ANSWERS.sizeGuard))).toBeLessThan(4096);
  });

  it('is associated with the API stage, after the stage exists', () => {
    const assoc = Object.entries(template.findResources('AWS::WAFv2::WebACLAssociation'));
    expect(assoc).toHaveLength(1);
    const [, a] = assoc[0];
    expect(a.Properties.WebACLArn).toEqual({ 'Fn::GetAtt': [logicalId(stack.api.sizeGuard!.webAcl), 'Arn'] });
    expect(JSON.stringify(a.Properties.ResourceArn)).toContain(logicalId(api));
    expect(JSON.stringify(a.Properties.ResourceArn)).toContain(`"/stages/",{"Ref":"${logicalId(api.deploymentStage)}"}`);
  });

  it('is left out with sizeGuard false', () => {
    const { template: t } = synthesize({ sizeGuard: false });
    t.resourceCountIs('AWS::WAFv2::WebACL', 0);
    t.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
  });
});
