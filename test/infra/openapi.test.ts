/**
 * `GET /api/v1/openapi.json` in the stack: a mock integration without the authorizer whose
 * response template is the OpenAPI document, escaped so Velocity leaves it alone, within API
 * Gateway's mapping template size; other methods answer 405 like every resource.
 */
import type { Method, Resource } from 'aws-cdk-lib/aws-apigateway';
import { API_VERSION_PREFIX } from '../../lambda/core/rules/routes';
import { buildOpenApi, OPENAPI_PATH } from '../../lambda/api-docs/openapi';
import { MAX_MAPPING_TEMPLATE_BYTES } from '../../lib/constructs/api';
import { defaultStack } from './stack';

const { stack, template, logicalId } = defaultStack();
const resource = stack.api.restApi.root.resourceForPath(`${API_VERSION_PREFIX}${OPENAPI_PATH}`) as Resource;
const props = (verb: string) =>
  (template.toJSON().Resources as Record<string, { Properties: Record<string, any> }>)[logicalId(resource.node.tryFindChild(verb) as Method)].Properties;

describe('OpenAPI document in the stack', () => {
  it('is a GET mock integration without authorization that answers the document as JSON', () => {
    const get = props('GET');
    expect(get).toMatchObject({
      HttpMethod: 'GET',
      AuthorizationType: 'NONE',
      Integration: {
        Type: 'MOCK',
        RequestTemplates: { 'application/json': '{"statusCode": 200}' },
        IntegrationResponses: [{ StatusCode: '200', ResponseParameters: { 'method.response.header.Content-Type': "'application/json'" } }],
      },
      MethodResponses: [{ StatusCode: '200', ResponseParameters: { 'method.response.header.Content-Type': true } }],
    });
    expect(get.AuthorizerId).toBeUndefined();
    expect(get.ApiKeyRequired).toBeFalsy();
    const body: string = get.Integration.IntegrationResponses[0].ResponseTemplates['application/json'];
    expect(body).not.toMatch(/[$#]/);
    expect(JSON.parse(body)).toEqual(buildOpenApi());
    expect(Buffer.byteLength(body)).toBeLessThan(MAX_MAPPING_TEMPLATE_BYTES);
  });

  it('answers 405 with Allow: GET to other methods', () => {
    expect(props('ANY')).toMatchObject({
      AuthorizationType: 'NONE',
      Integration: { Type: 'MOCK', IntegrationResponses: [{ StatusCode: '405', ResponseParameters: { 'method.response.header.Allow': "'GET'" } }] },
    });
  });
});
