/**
 * Deployment settings (lib/deployment.ts, bin/app.ts): the CDK context keys become stack props,
 * and each prop shapes the template: environment (production keeps data), custom domain with
 * per-namespace hosts, log retention, removal policy, alarm email.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { stackNameFor, stackPropsFromContext } from '../../lib/deployment';
import { synthesize } from './stack';

const fromContext = (ctx: Record<string, unknown>) => stackPropsFromContext((k) => ctx[k]);
const DOMAIN = { domainName: 'api.example.com', hostedZoneId: 'Z0123456789ABCDEFGHIJ', zoneName: 'example.com' };

describe('context → stack props', () => {
  it('defaults to production with nothing else set', () => {
    expect(fromContext({})).toEqual({ environmentName: 'production' });
  });

  it('reads every key', () => {
    expect(fromContext({
      environment: 'dev', ...DOMAIN, logRetentionDays: '7', removalPolicy: 'destroy', alarmEmail: 'ops@example.com',
      apiGatewayCloudWatchRole: 'false', sweeperReservedConcurrency: '1', awsSdk: 'runtime', webhookDeliveryConcurrency: '400',
    })).toEqual({
      environmentName: 'dev',
      customDomain: DOMAIN,
      logRetention: RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
      alarmEmail: 'ops@example.com',
      apiGatewayCloudWatchRole: false,
      sweeperReservedConcurrency: 1,
      awsSdk: 'runtime',
      webhookDeliveryConcurrency: 400,
    });
    expect(fromContext({ removalPolicy: 'retain', tableDeletionProtection: true })).toEqual({
      environmentName: 'production',
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      tableDeletionProtection: true,
    });
    // cdk.json values may be numbers.
    expect(fromContext({ logRetentionDays: 365 }).logRetention).toBe(RetentionDays.ONE_YEAR);
    // The size guard (WAF): on unless turned off.
    expect(fromContext({ sizeGuard: 'false' }).sizeGuard).toBe(false);
    expect(fromContext({ sizeGuard: true }).sizeGuard).toBe(true);
    expect(fromContext({}).sizeGuard).toBeUndefined();
    // Administrators of the secrets key: comma-separated IAM role or user ARNs.
    expect(fromContext({ secretsKeyAdmins: 'arn:aws:iam::123456789012:role/KeyAdmin, arn:aws:iam::123456789012:user/ops' }).secretsKeyAdmins)
      .toEqual(['arn:aws:iam::123456789012:role/KeyAdmin', 'arn:aws:iam::123456789012:user/ops']);
    expect(fromContext({}).secretsKeyAdmins).toBeUndefined();
  });

  it.each([
    [{ logRetentionDays: '10' }, /logRetentionDays/],
    [{ removalPolicy: 'snapshot' }, /removalPolicy/],
    [{ domainName: 'api.example.com' }, /hostedZoneId and zoneName/],
    [{ hostedZoneId: 'Z1', zoneName: 'example.com' }, /go with domainName/],
    [{ alarmEmail: 'not-an-address' }, /alarmEmail/],
    [{ environment: 'has space' }, /environment/],
    [{ tableDeletionProtection: 'yes' }, /tableDeletionProtection must be true or false/],
    [{ tableDeletionProtection: 'true', removalPolicy: 'destroy' }, /contradicts/],
    [{ sweeperReservedConcurrency: '0' }, /sweeperReservedConcurrency/],
    [{ webhookDeliveryConcurrency: '1' }, /webhookDeliveryConcurrency/],
    [{ webhookDeliveryConcurrency: '1001' }, /webhookDeliveryConcurrency/],
    [{ webhookDeliveryConcurrency: 'many' }, /webhookDeliveryConcurrency/],
    [{ awsSdk: 'layer' }, /awsSdk must be bundled or runtime/],
    [{ sizeGuard: 'off' }, /sizeGuard must be true or false/],
    [{ secretsKeyAdmins: 'arn:aws:iam::123456789012:root' }, /secretsKeyAdmins/],
    [{ secretsKeyAdmins: 'KeyAdmin' }, /secretsKeyAdmins/],
  ])('refuses %j', (ctx, message) => {
    expect(() => fromContext(ctx)).toThrow(message);
  });
});

describe('environment and removal policy', () => {
  it('refuses DESTROY in production', () => {
    expect(() => synthesize({ removalPolicy: RemovalPolicy.DESTROY })).toThrow(/refused in the production environment/);
    expect(() => synthesize({ environmentName: 'prod', removalPolicy: RemovalPolicy.DESTROY })).toThrow(/refused/);
  });

  it('retains tables and log groups by default, except in the rollback of the deploy that created them', () => {
    const { template } = synthesize({ environmentName: 'production' });
    template.allResources('AWS::DynamoDB::Table', { DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
    template.allResources('AWS::Logs::LogGroup', { DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
  });

  it('lets a dev environment destroy its data with the stack', () => {
    const { template } = synthesize({ environmentName: 'dev', removalPolicy: RemovalPolicy.DESTROY });
    template.allResources('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', Properties: Match.objectLike({ DeletionProtectionEnabled: false }) });
    template.allResources('AWS::Logs::LogGroup', { DeletionPolicy: 'Delete' });
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'Messaging-dev' });
  });
});

describe('custom domain', () => {
  const s = synthesize({ customDomain: DOMAIN });

  it('gets a DNS-validated certificate for the name and its wildcard', () => {
    s.template.hasResourceProperties('AWS::CertificateManager::Certificate', {
      DomainName: 'api.example.com',
      SubjectAlternativeNames: ['*.api.example.com'],
      ValidationMethod: 'DNS',
      DomainValidationOptions: Match.arrayWith([Match.objectLike({ HostedZoneId: DOMAIN.hostedZoneId })]),
    });
  });

  it('maps api.example.com and *.api.example.com (regional, TLS 1.2) to the stage under /api', () => {
    for (const name of ['api.example.com', '*.api.example.com']) {
      s.template.hasResourceProperties('AWS::ApiGateway::DomainName', {
        DomainName: name,
        EndpointConfiguration: { Types: ['REGIONAL'] },
        SecurityPolicy: 'TLS_1_2',
      });
    }
    s.template.resourcePropertiesCountIs('AWS::ApiGateway::BasePathMapping', { BasePath: 'api' }, 2);
  });

  it('aliases both names in the hosted zone', () => {
    for (const name of ['api.example.com.', '*.api.example.com.']) {
      s.template.hasResourceProperties('AWS::Route53::RecordSet', { Name: name, Type: 'A', HostedZoneId: DOMAIN.hostedZoneId, AliasTarget: Match.anyValue() });
    }
  });

  it('gives every function MSG_BASE_DOMAIN and MSG_ENDPOINT_TEMPLATE of the per-namespace hosts', () => {
    const fns = s.stack.functions.all;
    expect(fns.size).toBeGreaterThan(0);
    for (const fn of fns.values()) {
      const props = s.template.findResources('AWS::Lambda::Function', { Properties: { Description: Match.anyValue() } });
      const cfn = props[s.logicalId(fn)] as { Properties: { Environment: { Variables: Record<string, unknown> } } };
      expect(cfn.Properties.Environment.Variables).toMatchObject({
        MSG_BASE_DOMAIN: 'api.example.com',
        MSG_ENDPOINT_TEMPLATE: 'https://{namespace}.api.example.com/api/v1',
      });
    }
  });

  it('refuses a domain outside its hosted zone', () => {
    expect(() => synthesize({ customDomain: { ...DOMAIN, zoneName: 'example.org' } })).toThrow(/not in the hosted zone/);
  });

  it('stays clean under cdk-nag', () => {
    const { violations } = new AwsSolutionsChecks(s.app, { verbose: true }).validateScope(s.stack);
    expect(violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('has no domain resources without a custom domain', () => {
    const plain = synthesize();
    plain.template.resourceCountIs('AWS::ApiGateway::DomainName', 0);
    plain.template.resourceCountIs('AWS::CertificateManager::Certificate', 0);
  });
});

describe('log retention', () => {
  it.each([[RetentionDays.ONE_WEEK, 7], [RetentionDays.THREE_MONTHS, 90]])('applies %s days to every log group', (retention, days) => {
    const { template } = synthesize({ logRetention: retention });
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: days });
  });
});

describe('stack name', () => {
  it.each([
    [undefined, 'MessagingService'],
    ['production', 'MessagingService'],
    ['PROD', 'MessagingService'],
    ['staging', 'MessagingService-staging'],
    ['dev', 'MessagingService-dev'],
  ])('is %s → %s, so other environments can share an account with production', (env, name) => {
    expect(stackNameFor(env)).toBe(name);
  });
});
