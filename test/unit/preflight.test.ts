/**
 * `npm run preflight` (bin/preflight-checks.ts, bin/preflight-aws-checks.ts, bin/preflight.ts)
 * against recorded AWS answers: each client is a real SDK client whose middleware stack answers
 * from test/fixtures/aws-replay.ts in the service's wire format (JSON for SSM, Lambda and API Gateway; XML for STS,
 * CloudFormation and Route 53), so the SDK's own serializers and deserializers run, errors
 * included. The answers follow the examples of each API's reference; they were not captured from
 * a live account.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { Route53Client } from '@aws-sdk/client-route-53';
import { SSMClient } from '@aws-sdk/client-ssm';
import { STSClient } from '@aws-sdk/client-sts';
import { deployContext, settingsFromContext } from '../../bin/preflight';
import { formatReport, runPreflight } from '../../bin/preflight-checks';
import type { Check, PreflightClients, PreflightReport, PreflightSettings } from '../../bin/preflight-types';
import { calls, json, jsonError, replay, TEST_CLIENT_CONFIG, xml, xmlError, type RecordedRequest, type Recordings } from '../fixtures/aws-replay';

const ACCOUNT = '123456789012';
const REGION = TEST_CLIENT_CONFIG.region;
const STS_NS = 'https://sts.amazonaws.com/doc/2011-06-15/';
const CFN_NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';
const R53_NS = 'https://route53.amazonaws.com/doc/2013-04-01/';

/** One account as its control plane answers. */
interface AccountState {
  credentials?: 'valid' | 'invalid';
  /** Value of /cdk-bootstrap/hnb659fds/version; undefined: not bootstrapped. */
  bootstrapVersion?: string;
  /** The stack's status; undefined: no such stack. */
  stackStatus?: string;
  lambda?: { limit: number; unreserved: number } | 'denied';
  apiGatewayRole?: string;
  hostedZone?: { id: string; name: string; private?: boolean } | 'missing';
}

const sts = (state: AccountState): Recordings => ({
  GetCallerIdentity: () =>
    state.credentials === 'invalid'
      ? xmlError(403, STS_NS, 'InvalidClientTokenId', 'The security token included in the request is invalid.')
      : xml(200, `
<GetCallerIdentityResponse xmlns="${STS_NS}">
  <GetCallerIdentityResult>
    <Arn>arn:aws:iam::${ACCOUNT}:user/deployer</Arn>
    <UserId>AIDASAMPLEUSERID</UserId>
    <Account>${ACCOUNT}</Account>
  </GetCallerIdentityResult>
  <ResponseMetadata><RequestId>01234567-89ab-cdef-0123-456789abcdef</RequestId></ResponseMetadata>
</GetCallerIdentityResponse>`),
});

const ssm = (state: AccountState, seen: RecordedRequest[] = []): Recordings => ({
  GetParameter: (req) => {
    seen.push(req);
    const { Name } = JSON.parse(req.body) as { Name: string };
    if (state.bootstrapVersion === undefined) return jsonError(400, 'ParameterNotFound', '');
    return json(200, {
      Parameter: {
        ARN: `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter${Name}`,
        DataType: 'text',
        LastModifiedDate: 1.7632e9,
        Name,
        Type: 'String',
        Value: state.bootstrapVersion,
        Version: 1,
      },
    });
  },
});

const cloudFormation = (state: AccountState, stackName: string): Recordings => ({
  DescribeStacks: (req) => {
    expect(new URLSearchParams(req.body).get('StackName')).toBe(stackName);
    if (state.stackStatus === undefined) return xmlError(400, CFN_NS, 'ValidationError', `Stack with id ${stackName} does not exist`);
    return xml(200, `
<DescribeStacksResponse xmlns="${CFN_NS}">
  <DescribeStacksResult>
    <Stacks>
      <member>
        <StackName>${stackName}</StackName>
        <StackId>arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${stackName}/1c2fa620-982a-11e3-aff7-50e2416294e0</StackId>
        <CreationTime>2026-11-20T10:00:00.000Z</CreationTime>
        <StackStatus>${state.stackStatus}</StackStatus>
        ${state.stackStatus === 'ROLLBACK_COMPLETE' ? '<StackStatusReason>The following resource(s) failed to create: [SweeperFunction].</StackStatusReason>' : ''}
      </member>
    </Stacks>
  </DescribeStacksResult>
  <ResponseMetadata><RequestId>b9b4b068-3a41-11e5-94eb-example</RequestId></ResponseMetadata>
</DescribeStacksResponse>`);
  },
});

const lambda = (state: AccountState): Recordings => ({
  GetAccountSettings: () => {
    const l = state.lambda ?? { limit: 1000, unreserved: 1000 };
    if (l === 'denied') return json(403, { Type: 'User', Message: `User: arn:aws:iam::${ACCOUNT}:user/deployer is not authorized to perform: lambda:GetAccountSettings` }, { 'x-amzn-errortype': 'AccessDeniedException' });
    return json(200, {
      AccountLimit: { CodeSizeUnzipped: 262144000, CodeSizeZipped: 52428800, ConcurrentExecutions: l.limit, TotalCodeSize: 80530636800, UnreservedConcurrentExecutions: l.unreserved },
      AccountUsage: { FunctionCount: 0, TotalCodeSize: 0 },
    });
  },
});

const apiGateway = (state: AccountState): Recordings => ({
  GetAccount: () =>
    json(200, {
      apiKeyVersion: '4',
      ...(state.apiGatewayRole ? { cloudwatchRoleArn: state.apiGatewayRole } : {}),
      features: ['UsagePlans'],
      throttleSettings: { burstLimit: 5000, rateLimit: 10000.0 },
    }),
});

const route53 = (state: AccountState): Recordings => ({
  GetHostedZone: (req) => {
    const zone = state.hostedZone;
    const id = req.path.split('/').pop();
    if (!zone || zone === 'missing' || zone.id !== id) return xmlError(404, R53_NS, 'NoSuchHostedZone', `No hosted zone found with ID: ${id}`);
    return xml(200, `
<GetHostedZoneResponse xmlns="${R53_NS}">
  <HostedZone>
    <Id>/hostedzone/${zone.id}</Id>
    <Name>${zone.name}.</Name>
    <CallerReference>2026-11-01T00:00:00Z</CallerReference>
    <Config><Comment>messaging</Comment><PrivateZone>${zone.private ? 'true' : 'false'}</PrivateZone></Config>
    <ResourceRecordSetCount>4</ResourceRecordSetCount>
  </HostedZone>
  <DelegationSet>
    <NameServers>
      <NameServer>ns-2048.awsdns-64.com</NameServer>
      <NameServer>ns-2049.awsdns-65.net</NameServer>
    </NameServers>
  </DelegationSet>
</GetHostedZoneResponse>`);
  },
});

function clientsFor(state: AccountState, settings: PreflightSettings, seenSsm: RecordedRequest[] = []): PreflightClients {
  return {
    sts: replay(new STSClient(TEST_CLIENT_CONFIG), sts(state)),
    ssm: replay(new SSMClient(TEST_CLIENT_CONFIG), ssm(state, seenSsm)),
    cloudFormation: replay(new CloudFormationClient(TEST_CLIENT_CONFIG), cloudFormation(state, settings.stackName)),
    lambda: replay(new LambdaClient(TEST_CLIENT_CONFIG), lambda(state)),
    apiGateway: replay(new APIGatewayClient(TEST_CLIENT_CONFIG), apiGateway(state)),
    route53: replay(new Route53Client({ ...TEST_CLIENT_CONFIG, region: 'us-east-1' }), route53(state)),
  };
}

const settingsFor = (ctx: Record<string, unknown> = {}) => settingsFromContext(deployContext({ context: { environment: 'production' } }, Object.entries(ctx).map(([k, v]) => `${k}=${v}`)));
const check = (r: PreflightReport, title: string | RegExp): Check => {
  const c = r.checks.find((x) => (typeof title === 'string' ? x.title === title : title.test(x.title)));
  if (!c) throw new Error(`no check ${title} in ${r.checks.map((x) => x.title).join(', ')}`);
  return c;
};
const statuses = (r: PreflightReport) => Object.fromEntries(r.checks.map((c) => [c.title, c.status]));

async function preflight(state: AccountState, ctx: Record<string, unknown> = {}) {
  const settings = settingsFor(ctx);
  calls.length = 0;
  const report = await runPreflight(settings, clientsFor(state, settings));
  return { report, settings, text: formatReport(report, settings) };
}

/** A new account, bootstrapped, nothing deployed yet: Lambda's concurrency quota is 10. */
const FRESH: AccountState = { credentials: 'valid', bootstrapVersion: '27', lambda: { limit: 10, unreserved: 10 } };
/** An established account where the stack runs. */
const ESTABLISHED: AccountState = {
  credentials: 'valid',
  bootstrapVersion: '27',
  stackStatus: 'UPDATE_COMPLETE',
  lambda: { limit: 1000, unreserved: 1000 },
  apiGatewayRole: `arn:aws:iam::${ACCOUNT}:role/MessagingService-ApiRestApiCloudWatchRoleE3ED6605-1A2B3C4D5E6F`,
};

describe('a fresh account (concurrency quota 10)', () => {
  it('is ready to deploy, with a warning about the quota and how to raise it', async () => {
    const { report, text } = await preflight(FRESH);
    expect(statuses(report)).toEqual({
      'AWS credentials': 'ok',
      'CDK bootstrap': 'ok',
      'Stack MessagingService': 'info',
      'Lambda concurrency': 'warn',
      'API Gateway logging role': 'ok',
      'Alarm email': 'info',
    });
    expect(check(report, 'Lambda concurrency')).toMatchObject({
      found: expect.stringContaining('quota 10 concurrent executions, 10 unreserved; Lambda keeps at least 10 unreserved, so 0 can be reserved'),
      action: expect.stringContaining('--service-code lambda --quota-code L-B99A9384 --desired-value 1000'),
    });
    expect(check(report, 'Stack MessagingService').found).toMatch(/first deploy/);
    expect(check(report, 'API Gateway logging role').found).toMatch(/this stack creates it/);
    expect(text).toMatch(/Ready to deploy \(read the 1 warning above\): npx cdk deploy/);
    expect(text).toContain('Lambda concurrent executions: 10 in this region');
    expect(text).toContain('API Gateway account throttle: 10000 requests/s, burst 5000');
  });

  it('fails a sweeper reservation the account cannot spare, before the deploy rolls back on it', async () => {
    const { report, text } = await preflight(FRESH, { sweeperReservedConcurrency: 1 });
    expect(check(report, 'Lambda concurrency')).toMatchObject({
      status: 'fail',
      found: expect.stringContaining('sweeperReservedConcurrency=1 would be refused'),
      action: expect.stringContaining('Deploy without -c sweeperReservedConcurrency'),
    });
    expect(text).toMatch(/Not ready: 1 check would fail the deploy/);
  });

  it('warns when the webhook delivery concurrency would take more than a quarter of the account', async () => {
    const roomy = await preflight({ ...FRESH, lambda: { limit: 1000, unreserved: 1000 } }, {});
    expect(check(roomy.report, 'Lambda concurrency').status).toBe('ok');
    const small = await preflight({ ...FRESH, lambda: { limit: 500, unreserved: 500 } }, {});
    expect(check(small.report, 'Lambda concurrency')).toMatchObject({
      status: 'warn',
      found: expect.stringContaining('may hold 250 of them (webhookDeliveryConcurrency)'),
      action: expect.stringContaining('-c webhookDeliveryConcurrency=125'),
    });
    const set = await preflight({ ...FRESH, lambda: { limit: 500, unreserved: 500 } }, { webhookDeliveryConcurrency: 100 });
    expect(check(set.report, 'Lambda concurrency').status).toBe('ok');
  });

  it('allows the reservation where the account has room (minimum 100 unreserved)', async () => {
    const { report } = await preflight({ ...FRESH, lambda: { limit: 1000, unreserved: 1000 } }, { sweeperReservedConcurrency: 1 });
    expect(check(report, 'Lambda concurrency').status).toBe('ok');
    const tight = await preflight({ ...FRESH, lambda: { limit: 1000, unreserved: 100 } }, { sweeperReservedConcurrency: 1 });
    expect(check(tight.report, 'Lambda concurrency').status).toBe('fail');
  });

  it('warns that protected tables would outlive a failed first deploy', async () => {
    const { report } = await preflight(FRESH, { tableDeletionProtection: true });
    expect(check(report, 'Table deletion protection')).toMatchObject({ status: 'warn', action: expect.stringContaining('turn it on with the next deploy') });
  });
});

describe('a bootstrapped account where the stack runs', () => {
  it('passes every check and suggests table deletion protection now that the stack exists', async () => {
    const { report, text } = await preflight(ESTABLISHED);
    expect(report).toMatchObject({ account: ACCOUNT, region: REGION, caller: `arn:aws:iam::${ACCOUNT}:user/deployer`, stackExists: true });
    expect(statuses(report)).toEqual({
      'AWS credentials': 'ok',
      'CDK bootstrap': 'ok',
      'Stack MessagingService': 'ok',
      'Lambda concurrency': 'ok',
      'API Gateway logging role': 'ok',
      'Alarm email': 'info',
      'Table deletion protection': 'info',
    });
    expect(check(report, 'CDK bootstrap').found).toBe('bootstrapped, version 27 (needs 6 or newer)');
    expect(check(report, 'API Gateway logging role').found).toMatch(/this stack's own/);
    expect(text).toMatch(/Ready to deploy: npx cdk deploy --outputs-file cdk-outputs.json/);
  });

  it('only reads: every call is a Get or a Describe', async () => {
    await preflight(ESTABLISHED, { domainName: 'api.example.com', hostedZoneId: 'Z0123456789ABC', zoneName: 'example.com' });
    expect(calls).toEqual([
      'STS.GetCallerIdentity', 'SSM.GetParameter', 'CloudFormation.DescribeStacks', 'Lambda.GetAccountSettings', 'APIGateway.GetAccount', 'Route53.GetHostedZone',
    ]);
  });

  it('warns that a second environment would take over the account\'s API Gateway role, and says how to keep it', async () => {
    const { report } = await preflight(ESTABLISHED, { environment: 'staging' });
    expect(check(report, 'API Gateway logging role')).toMatchObject({
      status: 'warn',
      action: expect.stringContaining('-c apiGatewayCloudWatchRole=false'),
    });
    const kept = await preflight(ESTABLISHED, { environment: 'staging', apiGatewayCloudWatchRole: false });
    expect(check(kept.report, 'API Gateway logging role').status).toBe('ok');
  });

  it('fails when the role setting is off and the account has no role (execution logging would fail the deploy)', async () => {
    const { report } = await preflight({ ...FRESH }, { apiGatewayCloudWatchRole: false });
    expect(check(report, 'API Gateway logging role')).toMatchObject({ status: 'fail', action: expect.stringContaining('apiGatewayCloudWatchRole=true') });
  });

  it.each([
    ['ROLLBACK_COMPLETE', /delete-stack --stack-name MessagingService/],
    ['UPDATE_ROLLBACK_FAILED', /continue-update-rollback --stack-name MessagingService/],
    ['UPDATE_IN_PROGRESS', /Wait for it to end/],
  ])('fails on a stack in %s and says what to do', async (stackStatus, action) => {
    const { report } = await preflight({ ...ESTABLISHED, stackStatus });
    expect(check(report, 'Stack MessagingService')).toMatchObject({ status: 'fail', action: expect.stringMatching(action) });
  });

  it('checks the stack of the environment being deployed', async () => {
    const { report } = await preflight(FRESH, { environment: 'dev' });
    expect(check(report, 'Stack MessagingService-dev').status).toBe('info');
  });
});

describe('a missing CDK bootstrap', () => {
  it('fails and gives the bootstrap command for this account and region', async () => {
    const { report, text } = await preflight({ ...FRESH, bootstrapVersion: undefined });
    expect(check(report, 'CDK bootstrap')).toMatchObject({
      status: 'fail',
      found: `${REGION} of account ${ACCOUNT} is not bootstrapped for the CDK (no SSM parameter /cdk-bootstrap/hnb659fds/version)`,
      action: `Bootstrap once per account and region: npx cdk bootstrap aws://${ACCOUNT}/${REGION}`,
    });
    expect(text).toMatch(/Not ready: 1 check would fail the deploy\. Fix it and run npm run preflight again\./);
  });

  it('fails on a bootstrap older than the template requires', async () => {
    const { report } = await preflight({ ...FRESH, bootstrapVersion: '5' });
    expect(check(report, 'CDK bootstrap')).toMatchObject({ status: 'fail', action: expect.stringContaining('Upgrade the bootstrap stack') });
  });

  it('reads the bootstrap of a custom qualifier', async () => {
    const settings = settingsFromContext(deployContext({ context: { '@aws-cdk/core:bootstrapQualifier': 'msg123' } }, []));
    const seen: RecordedRequest[] = [];
    const report = await runPreflight(settings, clientsFor({ ...FRESH, bootstrapVersion: undefined }, settings, seen));
    expect(JSON.parse(seen[0].body)).toEqual({ Name: '/cdk-bootstrap/msg123/version' });
    expect(check(report, 'CDK bootstrap').action).toMatch(/--qualifier msg123$/);
  });
});

describe('credentials', () => {
  it('stops at credentials AWS refuses, and says how to configure them', async () => {
    const { report, text } = await preflight({ ...FRESH, credentials: 'invalid' });
    expect(report.checks).toEqual([
      expect.objectContaining({ title: 'AWS credentials', status: 'fail', found: expect.stringContaining('InvalidClientTokenId'), action: expect.stringContaining('aws sso login') }),
    ]);
    expect(calls).toEqual(['STS.GetCallerIdentity']);
    expect(text).not.toContain('Quotas that matter');
  });

  it('warns, rather than fails, where the credentials may not read a setting', async () => {
    const { report } = await preflight({ ...FRESH, lambda: 'denied' });
    expect(check(report, 'Lambda concurrency')).toMatchObject({
      status: 'warn',
      found: expect.stringContaining('lambda:GetAccountSettings was refused (AccessDeniedException)'),
      action: expect.stringContaining('Allow lambda:GetAccountSettings'),
    });
  });
});

describe('custom domain', () => {
  const DOMAIN = { domainName: 'api.example.com', hostedZoneId: 'Z0123456789ABC', zoneName: 'example.com' };

  it('finds the public zone and lists the name servers the registrar must delegate to', async () => {
    const { report } = await preflight({ ...FRESH, hostedZone: { id: DOMAIN.hostedZoneId, name: 'example.com' } }, DOMAIN);
    expect(check(report, 'Hosted zone for api.example.com')).toMatchObject({
      status: 'ok',
      found: expect.stringContaining('public zone example.com (Z0123456789ABC); its name servers: ns-2048.awsdns-64.com, ns-2049.awsdns-65.net'),
    });
  });

  it.each([
    ['missing', 'missing' as const, /no hosted zone Z0123456789ABC/, /list-hosted-zones-by-name --dns-name example.com/],
    ['of another name', { id: DOMAIN.hostedZoneId, name: 'example.org' }, /is example.org, not example.com/, /hostedZoneId/],
    ['private', { id: DOMAIN.hostedZoneId, name: 'example.com', private: true }, /private zone/, /public hosted zone/],
  ])('fails on a zone that is %s', async (_case, hostedZone, found, action) => {
    const { report } = await preflight({ ...FRESH, hostedZone }, DOMAIN);
    expect(check(report, /^Hosted zone/)).toMatchObject({ status: 'fail', found: expect.stringMatching(found), action: expect.stringMatching(action) });
  });
});

describe('the checklist', () => {
  it('reminds that the alarm email subscription must be confirmed', async () => {
    const { report } = await preflight(FRESH, { alarmEmail: 'ops@example.com' });
    expect(check(report, 'Alarm email')).toMatchObject({
      status: 'info',
      found: expect.stringContaining('ops@example.com will get an email'),
      action: expect.stringContaining('Confirm subscription'),
    });
  });

  it('gives every warning and failure an action, and lists the quotas that matter', async () => {
    const { report, text } = await preflight({ ...FRESH, bootstrapVersion: undefined }, { sweeperReservedConcurrency: 5, apiGatewayCloudWatchRole: false });
    const problems = report.checks.filter((c) => c.status === 'warn' || c.status === 'fail');
    expect(problems.length).toBeGreaterThanOrEqual(3);
    for (const c of problems) expect(c.action).toEqual(expect.any(String));
    for (const c of problems) expect(text).toContain(`-> ${c.action}`);
    expect(text).toMatch(/Not ready: 3 checks would fail the deploy\. Fix them/);
    expect(text).toContain('SQS in-flight messages: about 120,000 per standard queue');
    expect(text).toContain('Read-only: nothing was changed.');
  });
});

describe('settings from the CDK context', () => {
  it('reads cdk.json, then -c over it, with the deploy\'s own rules', () => {
    const ctx = deployContext({ context: { environment: 'production', logRetentionDays: 30 } }, ['environment=dev', 'alarmEmail=ops@example.com', 'sweeperReservedConcurrency=2']);
    expect(settingsFromContext(ctx)).toEqual({
      stackName: 'MessagingService-dev',
      environmentName: 'dev',
      alarmEmail: 'ops@example.com',
      sweeperReservedConcurrency: 2,
      apiGatewayCloudWatchRole: undefined,
      tableDeletionProtection: undefined,
      customDomain: undefined,
    });
  });

  it('refuses what the deploy would refuse', () => {
    expect(() => deployContext({}, ['novalue'])).toThrow(/KEY=VALUE/);
    expect(() => settingsFromContext(deployContext({}, ['domainName=api.example.com']))).toThrow(/hostedZoneId and zoneName/);
  });
});
