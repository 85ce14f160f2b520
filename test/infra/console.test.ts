/**
 * The console in the stack (lib/constructs/console.ts): a private bucket read through CloudFront
 * origin access control, the API as a second origin under /api/* (no caching, Authorization
 * forwarded), the console's CSP on every file, the ConsoleUrl output, and context console=false.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { CONSOLE_CSP } from '../../console/security-headers';
import { stackPropsFromContext } from '../../lib/deployment';
import { CONSOLE_URL_OUTPUT } from '../../lib/stack-outputs';
import { defaultStack, synthesize } from './stack';
import { API_BASE_PATH, PORTAL_PAGE_PATH } from '../../lambda/core/rules/routes';
import { PORTAL_PAGE_FUNCTION } from '../../lib/constructs/console';

const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

describe('console construct', () => {
  const { template, stack, logicalId } = defaultStack();

  it('keeps the files in a bucket no one reads but CloudFront (OAC), encrypted and TLS only', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
    });
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    const bucketId = logicalId(stack.console!.bucket);
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Allow', Action: 's3:GetObject', Principal: { Service: 'cloudfront.amazonaws.com' } }),
        ]),
      },
    });
  });

  it('serves the API on the same origin under /api/*, uncached, with every viewer header but Host (Authorization included)', () => {
    const dist = template.findResources('AWS::CloudFront::Distribution');
    const config = Object.values(dist)[0].Properties.DistributionConfig;
    const api = config.CacheBehaviors.find((b: { PathPattern: string }) => b.PathPattern === '/api/*');
    expect(api).toMatchObject({ CachePolicyId: CACHING_DISABLED, OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST, ViewerProtocolPolicy: 'https-only' });
    expect(api.AllowedMethods).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']));
    const origin = config.Origins.find((o: { Id: string }) => o.Id === api.TargetOriginId);
    expect(JSON.stringify(origin.DomainName)).toContain(logicalId(stack.api.restApi));
    expect(origin.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
    expect(config.DefaultCacheBehavior.ViewerProtocolPolicy).toBe('redirect-to-https');
    expect(config.ViewerCertificate ?? {}).not.toMatchObject({ MinimumProtocolVersion: 'TLSv1' });
  });

  it('hands the viewer Host to the route that makes portal links, before /api/* (same origin, uncached), so links point at /portal/ here', () => {
    const config = Object.values(template.findResources('AWS::CloudFront::Distribution'))[0].Properties.DistributionConfig;
    const patterns = config.CacheBehaviors.map((b: { PathPattern: string }) => b.PathPattern);
    expect(patterns.indexOf('/api/v1/applications/*/portal-access')).toBeLessThan(patterns.indexOf('/api/*'));
    const portal = config.CacheBehaviors.find((b: { PathPattern: string }) => b.PathPattern === '/api/v1/applications/*/portal-access');
    const api = config.CacheBehaviors.find((b: { PathPattern: string }) => b.PathPattern === '/api/*');
    expect(portal).toMatchObject({ CachePolicyId: CACHING_DISABLED, OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST, ViewerProtocolPolicy: 'https-only', TargetOriginId: api.TargetOriginId });
    const fn = Object.values(template.findResources('AWS::CloudFront::Function')).find((f) => /x-portal-origin/.test(f.Properties.FunctionCode));
    expect(fn).toBeDefined();
    expect(JSON.stringify(portal.FunctionAssociations)).toContain('viewer-request');
    expect(api.FunctionAssociations).toBeUndefined();
  });

  it("answers /portal/ from the API's portal page (per-namespace CSP), uncached, with the query and without the console's fixed headers", () => {
    const config = Object.values(template.findResources('AWS::CloudFront::Distribution'))[0].Properties.DistributionConfig;
    const portal = config.CacheBehaviors.find((b: { PathPattern: string }) => b.PathPattern === '/portal/');
    const api = config.CacheBehaviors.find((b: { PathPattern: string }) => b.PathPattern === '/api/*');
    expect(portal).toMatchObject({ CachePolicyId: CACHING_DISABLED, OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST, TargetOriginId: api.TargetOriginId, AllowedMethods: ['GET', 'HEAD'] });
    const fns = template.findResources('AWS::CloudFront::Function');
    const [fnId] = Object.entries(fns).find(([, f]) => f.Properties.FunctionCode.includes(`${API_BASE_PATH}${PORTAL_PAGE_PATH}`)) ?? [];
    expect(fnId).toBeDefined();
    expect(JSON.stringify(portal.FunctionAssociations)).toContain(fnId);
    expect(JSON.stringify(portal.FunctionAssociations)).toContain('viewer-request');
    // Its response headers policy adds HSTS and nothing the page sets itself.
    const policies = template.findResources('AWS::CloudFront::ResponseHeadersPolicy');
    const own = policies[portal.ResponseHeadersPolicyId.Ref].Properties.ResponseHeadersPolicyConfig;
    expect(Object.keys(own.SecurityHeadersConfig)).toEqual(['StrictTransportSecurity']);
    expect(own.CustomHeadersConfig).toBeUndefined();
    // The S3 index function no longer sends /portal/ to the fixed-header console index.
    expect(Object.values(fns).some((f) => /'\/portal\/'/.test(f.Properties.FunctionCode))).toBe(false);
  });

  it('runs PORTAL_PAGE_FUNCTION as CloudFront would: any /portal/ request becomes the API page, its query kept', () => {
    const handler = new Function(`${PORTAL_PAGE_FUNCTION}; return handler;`)() as (e: unknown) => { uri: string; querystring: unknown };
    const r = handler({ request: { uri: '/portal/', querystring: { ns: { value: 'acme' } }, headers: {} } });
    expect(r).toEqual({ uri: `${API_BASE_PATH}${PORTAL_PAGE_PATH}`, querystring: { ns: { value: 'acme' } }, headers: {} });
  });

  it('puts the console CSP and security headers on its files', () => {
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: {
        SecurityHeadersConfig: Match.objectLike({
          ContentSecurityPolicy: { ContentSecurityPolicy: CONSOLE_CSP, Override: true },
          FrameOptions: { FrameOption: 'DENY', Override: true },
          ContentTypeOptions: { Override: true },
        }),
      },
    });
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
  });

  it('copies console/dist under console/ and invalidates it on deploy', () => {
    template.hasResourceProperties('Custom::CDKBucketDeployment', { DestinationBucketKeyPrefix: 'console/', DistributionPaths: ['/console/*'], Prune: true, RetainOnDelete: false });
  });

  it('outputs its address', () => {
    const out = template.findOutputs(CONSOLE_URL_OUTPUT);
    expect(JSON.stringify(out[CONSOLE_URL_OUTPUT].Value)).toMatch(/https:\/\/.*DomainName.*\/console\//);
  });

  it('is left out with context console=false', () => {
    expect(stackPropsFromContext((k) => ({ console: 'false' })[k])).toMatchObject({ console: false });
    expect(() => stackPropsFromContext((k) => ({ console: 'maybe' })[k])).toThrow(/context console must be true or false/);
    const off = synthesize(stackPropsFromContext((k) => ({ console: false })[k as 'console']));
    off.template.resourceCountIs('AWS::CloudFront::Distribution', 0);
    off.template.resourceCountIs('Custom::CDKBucketDeployment', 0);
    expect(Object.keys(off.template.findOutputs(CONSOLE_URL_OUTPUT))).toEqual([]);
  });
});
