/**
 * The console (docs/console.md) in the stack: its built files (console/dist) in a private S3
 * bucket read by CloudFront through origin access control, and the API as the distribution's
 * second origin under /api/*, so the browser calls the API on the console's own origin and no
 * CORS is needed. Every console file carries the CSP and headers of console/security-headers.ts,
 * as the local gateway serves them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Aws, DefaultStackSynthesizer, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AllowedMethods, CachePolicy, Distribution, Function as CfFunction, FunctionCode, FunctionEventType, HeadersFrameOption,
  HeadersReferrerPolicy, HttpVersion, OriginProtocolPolicy, OriginRequestPolicy, PriceClass, ResponseHeadersPolicy, SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, Source } from 'aws-cdk-lib/aws-s3-deployment';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { API_BASE_PATH, API_STAGE, PORTAL_PAGE_PATH } from '../../lambda/core/rules/routes';
import { CONSOLE_CSP, CONSOLE_PATH } from '../../console/security-headers';

export interface ConsoleProps {
  restApi: RestApi;
  removalPolicy: RemovalPolicy;
  /** The built console; built with `npm run console:build` when it is missing. @default console/dist */
  distDir?: string;
}

/** The directory of the built console, building it first when it is missing (synth needs the files). */
export function builtConsoleDir(distDir = resolve('console/dist')): string {
  if (!existsSync(join(distDir, 'index.html'))) {
    execFileSync(process.execPath, [resolve('node_modules/vite/bin/vite.js'), 'build', '--config', resolve('console/vite.config.ts'), '--logLevel', 'warn'], { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } });
  }
  return distDir;
}

/**
 * `/` and `/console` go to `/console/`, and `/console/` is its index.html (S3 has no directory
 * index behind OAC). CloudFront Functions' JavaScript runtime: plain ES5 plus a few ES6 features.
 */
const INDEX_FUNCTION = `function handler(event) {
  var r = event.request;
  if (r.uri === '/' || r.uri === '/console') {
    return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: '${CONSOLE_PATH}' } } };
  }
  if (r.uri === '${CONSOLE_PATH}') r.uri = '${CONSOLE_PATH}index.html';
  return r;
}`;

/**
 * A portal link (docs/portal.md) must point at this distribution, where /portal/ is served, but
 * API Gateway sees its own host (the API behavior forwards every viewer header but Host). On the
 * one route that makes links, the viewer's Host is handed on as `x-portal-origin`, a header name
 * CloudFront Functions may add
 * (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/edge-function-restrictions-all.html#function-restrictions-headers).
 */
const PORTAL_ORIGIN_FUNCTION = `function handler(event) {
  var r = event.request;
  r.headers['x-portal-origin'] = { value: 'https://' + r.headers.host.value };
  return r;
}`;

/**
 * `/portal/` is the console's index in portal mode (docs/portal.md), but with the CSP
 * `frame-ancestors` its namespace allows, which CloudFront cannot know (a function reads no
 * table): the API answers it (lambda/handlers/portal-page.ts), so the path becomes the API's
 * portal page; the query (`?ns=`) goes on unchanged. A viewer request function may change the URI
 * (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/functions-event-structure.html#functions-event-structure-request).
 */
export const PORTAL_PAGE_FUNCTION = `function handler(event) {
  var r = event.request;
  r.uri = '${API_BASE_PATH}${PORTAL_PAGE_PATH}';
  return r;
}`;

export class Console extends Construct {
  readonly bucket: Bucket;
  readonly distribution: Distribution;
  /** `https://<distribution>.cloudfront.net/console/` */
  readonly url: string;

  constructor(scope: Construct, id: string, props: ConsoleProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Files', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // The files are rebuilt from the repository at every deploy: nothing to keep. The deployment
      // (retainOnDelete false) empties the bucket when the stack goes, so it can be deleted.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'The bucket holds only the console build, rebuilt from the repository at every deploy and read by CloudFront alone (OAC); there is no data whose access needs a server access log.',
    });

    const headers = new ResponseHeadersPolicy(this, 'Headers', {
      comment: 'Console: strict CSP (own files and own-origin API only), no framing, no sniffing, no referrer',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: CONSOLE_CSP, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
      customHeadersBehavior: { customHeaders: [{ header: 'Cross-Origin-Opener-Policy', value: 'same-origin', override: true }] },
    });

    const index = new CfFunction(this, 'Index', { code: FunctionCode.fromInline(INDEX_FUNCTION), comment: 'Console: / and /console to /console/, /console/ to its index.html' });
    const portalPage = new CfFunction(this, 'PortalPage', { code: FunctionCode.fromInline(PORTAL_PAGE_FUNCTION), comment: "Portal: /portal/ to the API's portal page" });
    // The portal page brings its own CSP and framing headers (per namespace); CloudFront adds HSTS only.
    const portalHeaders = new ResponseHeadersPolicy(this, 'PortalHeaders', {
      comment: 'Portal page: HSTS; its CSP, framing and other headers come from the API',
      securityHeadersBehavior: { strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true } },
    });

    const portalOrigin = new CfFunction(this, 'PortalOrigin', { code: FunctionCode.fromInline(PORTAL_ORIGIN_FUNCTION), comment: 'Portal links: the viewer Host as x-portal-origin' });
    const apiOrigin = new HttpOrigin(`${props.restApi.restApiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}`, { protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY });

    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Messaging console and API on one origin',
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: headers,
        functionAssociations: [{ function: index, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: {
        // The portal page, from the API (PORTAL_PAGE_FUNCTION); the exact path, like the link's.
        '/portal/': {
          origin: apiOrigin,
          viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
          cachePolicy: CachePolicy.CACHING_DISABLED,
          originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
          responseHeadersPolicy: portalHeaders,
          functionAssociations: [{ function: portalPage, eventType: FunctionEventType.VIEWER_REQUEST }],
        },
        // The API under the same host: /api/v1/... is the stage `api` of the REST API.
        // Links made through this origin point at its /portal/ (PORTAL_ORIGIN_FUNCTION); otherwise as /api/* below.
        [`/${API_STAGE}/v1/applications/*/portal-access`]: {
          origin: apiOrigin,
          viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: AllowedMethods.ALLOW_ALL,
          cachePolicy: CachePolicy.CACHING_DISABLED,
          originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
          functionAssociations: [{ function: portalOrigin, eventType: FunctionEventType.VIEWER_REQUEST }],
        },
        [`/${API_STAGE}/*`]: {
          origin: apiOrigin,
          viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: AllowedMethods.ALLOW_ALL,
          // Nothing of the API is cached. With caching disabled, the AllViewerExceptHostHeader
          // policy forwards the Authorization header (and API Gateway needs its own Host):
          // https://repost.aws/knowledge-center/cloudfront-authorization-header
          cachePolicy: CachePolicy.CACHING_DISABLED,
          originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        },
      },
    });
    const acks: [string, string][] = [
      ['AwsSolutions-CFR1', 'The console is for the namespace owners wherever they are; access is by API key, not by country.'],
      ['AwsSolutions-CFR2', 'The console files are static and the API behind /api/* has its own throttling, usage plan and per-namespace rate limits; a WAF web ACL is an account-level choice left to the operator.'],
      ['AwsSolutions-CFR3', 'Requests to the API are logged by API Gateway access logs (lib/constructs/api.ts); the static console files need no separate access log bucket.'],
      ['AwsSolutions-CFR4', 'Without a custom domain the distribution uses the default *.cloudfront.net certificate, which CloudFront serves with TLSv1 as the minimum; the viewer policy cannot be raised without a certificate of your own.'],
    ];
    for (const [ackId, reason] of acks) Validations.of(this.distribution).acknowledge({ id: ackId, reason });

    const deployment = new BucketDeployment(this, 'Deploy', {
      sources: [Source.asset(props.distDir ?? builtConsoleDir())],
      destinationBucket: this.bucket,
      destinationKeyPrefix: CONSOLE_PATH.slice(1),
      distribution: this.distribution,
      distributionPaths: [`${CONSOLE_PATH}*`],
      prune: true,
      retainOnDelete: false,
      memoryLimit: 256,
    });
    this.acknowledgeDeploymentFunction(deployment);
    this.url = `https://${this.distribution.distributionDomainName}${CONSOLE_PATH}`;
  }

  /**
   * The copy of the files into the bucket is CDK's BucketDeployment: a singleton Lambda function
   * of CDK's own (at the stack's root) that runs at deploy time only, with the grants CDK gives it.
   */
  private acknowledgeDeploymentFunction(deployment: BucketDeployment) {
    const stack = Stack.of(this);
    const fn = stack.node.children.find((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
    if (!fn) throw new Error(`BucketDeployment ${deployment.node.path} made no Custom::CDKBucketDeployment function`);
    const bucketArn = `<${stack.getLogicalId(this.bucket.node.defaultChild as CfnBucket)}.Arn>`;
    const assets = `arn:<AWS::Partition>:s3:::cdk-${DefaultStackSynthesizer.DEFAULT_QUALIFIER}-assets-<AWS::AccountId>-<AWS::Region>`;
    const acks: [string, string][] = [
      ['AwsSolutions-L1', "CDK's BucketDeployment function: its runtime is chosen by aws-cdk-lib and moves with it; it runs only during deploys."],
      ['AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', "CDK's BucketDeployment function writes its own logs with the basic execution role; it runs only during deploys."],
      ['AwsSolutions-IAM5[Action::s3:GetObject*]', 'BucketDeployment reads the console asset (grantRead of the CDK asset bucket objects) and the console bucket.'],
      ['AwsSolutions-IAM5[Action::s3:GetBucket*]', 'BucketDeployment reads the location of the asset and console buckets (grantRead).'],
      ['AwsSolutions-IAM5[Action::s3:List*]', 'BucketDeployment lists the console bucket to prune files of an earlier build (grantReadWrite).'],
      ['AwsSolutions-IAM5[Action::s3:DeleteObject*]', 'BucketDeployment deletes files of an earlier build from the console bucket (prune) and all of them with the stack (retainOnDelete false).'],
      ['AwsSolutions-IAM5[Action::s3:Abort*]', 'BucketDeployment aborts its own multipart uploads to the console bucket (grantReadWrite).'],
      [`AwsSolutions-IAM5[Resource::${bucketArn}/*]`, 'Objects of the console bucket only: the files the deployment replaces.'],
      [`AwsSolutions-IAM5[Resource::${assets}/*]`, "Objects of CDK's bootstrap asset bucket, where the console's zipped build is uploaded by cdk deploy."],
      ['AwsSolutions-IAM5[Resource::*]', 'cloudfront:CreateInvalidation and GetInvalidation, which BucketDeployment calls to invalidate /console/* after copying; CDK grants them on *.'],
    ];
    for (const [id, reason] of acks) Validations.of(fn).acknowledge({ id, reason });
  }
}
