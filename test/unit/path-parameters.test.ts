/**
 * Path parameters as API Gateway REST proxy integrations deliver them: still percent-encoded
 * (https://github.com/serverless/serverless/issues/5037 gets `%40` for `@`; the event shape is the
 * documented one, https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html#api-gateway-simple-proxy-for-lambda-input-format).
 * The request middleware decodes them exactly once (docs/aws-parity.md).
 */
import middy from '@middy/core';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { Logger } from '@aws-lambda-powertools/logger';
import { envelope } from '../../lambda/core/middleware/envelope';
import { resolveRequest } from '../../lambda/core/middleware/resolve-request';
import { apiRequest, type ApiEvent } from '../../lambda/core/middleware/api-request';
import type { HandlerGroup } from '../../lambda/core/rules/routes';

/** An event in the shape of the API Gateway docs' example of a REST proxy integration's input. */
function docsShapedEvent(resource: string, path: string, pathParameters: Record<string, string>, method = 'POST'): ApiEvent {
  return {
    resource: `/v1${resource}`,
    path: `/v1${path}`,
    httpMethod: method,
    headers: { 'Content-Type': 'application/json', Host: 'abc123.execute-api.us-east-1.amazonaws.com', 'X-Forwarded-Proto': 'https' },
    multiValueHeaders: { 'Content-Type': ['application/json'], Host: ['abc123.execute-api.us-east-1.amazonaws.com'], 'X-Forwarded-Proto': ['https'] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters,
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      authorizer: { namespace: 'ns', scopes: 'publish', keyId: 'k', principalId: 'k' },
      domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
      domainPrefix: 'abc123',
      extendedRequestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      httpMethod: method,
      identity: { sourceIp: '192.0.2.1' },
      path: `/api/v1${path}`,
      protocol: 'HTTP/1.1',
      requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      requestTime: '09/Apr/2015:12:34:56 +0000',
      requestTimeEpoch: 1428582896000,
      resourceId: 'roq9wj',
      resourcePath: `/v1${resource}`,
      stage: 'api',
    } as unknown as ApiEvent['requestContext'],
    body: '{"payload":"x"}',
    isBase64Encoded: false,
  };
}

const handlerOf = (group: HandlerGroup) =>
  middy<ApiEvent, APIGatewayProxyResult>()
    .use(envelope({ logger: new Logger({ logLevel: 'SILENT' }) }))
    .use(resolveRequest(group))
    .handler(async (event) => ({ data: { route: apiRequest(event).route.operation, params: apiRequest(event).params } }) as unknown as APIGatewayProxyResult);

const run = async (group: HandlerGroup, event: ApiEvent) => {
  const out = await handlerOf(group)(event, {} as Context);
  return { status: out.statusCode, body: JSON.parse(out.body) };
};

describe('path parameters from an API Gateway REST proxy event', () => {
  it.each([
    ['eu%20west/orders', 'eu west/orders'],
    ['a%3Ab', 'a:b'],
    ['100%25', '100%'],
    ['a+b', 'a+b'],
    ['caf%C3%A9/%E6%97%A5%E6%9C%AC', 'café/日本'],
    ['a%2Fb', 'a/b'],
    ['%2540', '%40'],
  ])('topic %s reaches the operation as %s (decoded once)', async (raw, topic) => {
    const res = await run('publish', docsShapedEvent('/topics/{topic+}', `/topics/${raw}/messages`, { topic: `${raw}/messages` }));
    expect(res.body.data).toEqual({ route: 'publish', params: { topic } });
  });

  it('picks the batch route on the encoded value: an encoded `/` is no route level', async () => {
    const batch = await run('publish', docsShapedEvent('/topics/{topic+}', '/topics/a%20b/messages/batch', { topic: 'a%20b/messages/batch' }));
    expect(batch.body.data).toEqual({ route: 'publishBatch', params: { topic: 'a b' } });
    const notARoute = await run('publish', docsShapedEvent('/topics/{topic+}', '/topics/a%2Fmessages', { topic: 'a%2Fmessages' }));
    expect(notARoute.status).toBe(404);
  });

  it('decodes a one-level parameter once (queue name with a space and a `%`)', async () => {
    const res = await run('queues', docsShapedEvent('/queues/{queue_name}/messages/consume', '/queues/my%20q%2525/messages/consume', { queue_name: 'my%20q%2525' }));
    expect(res.body.data).toEqual({ route: 'consume', params: { queue_name: 'my q%25' } });
  });

  it('answers 400 INVALID_REQUEST naming a parameter that is not valid percent-encoding', async () => {
    const res = await run('queues', docsShapedEvent('/queues/{queue_name}/messages/consume', '/queues/%E0%A4%A/messages/consume', { queue_name: '%E0%A4%A' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'queue_name' } });
    expect(res.body.error.message).toMatch(/encodeURIComponent/);
  });
});
