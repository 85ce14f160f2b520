/**
 * The checks of `npm run preflight` (bin/preflight.ts): what would fail or spoil `npx cdk deploy`
 * in this account and region, found before the deploy starts, each with what to do. Read-only:
 * every call is a Get or Describe with the caller's credentials.
 *
 * | Check                 | Call                                  | Fails the deploy when                          |
 * |-----------------------|---------------------------------------|------------------------------------------------|
 * | credentials           | STS GetCallerIdentity                 | no or expired credentials, no region           |
 * | CDK bootstrap         | SSM GetParameter /cdk-bootstrap/...   | not bootstrapped, or a version below 6         |
 * | stack state           | CloudFormation DescribeStacks         | ROLLBACK_COMPLETE, *_FAILED, *_IN_PROGRESS     |
 * | Lambda concurrency    | Lambda GetAccountSettings             | a sweeper reservation the account cannot spare |
 * | API Gateway log role  | API Gateway GetAccount                | the setting is off and the account has no role |
 * | hosted zone           | Route 53 GetHostedZone                | missing, another name, or private              |
 * | alarm email           | none                                  | never; the subscription needs a click          |
 *
 * Each check answers `ok`, `warn` (deploys, but read this), `fail` (fix first) or `info`.
 */
import { APIGatewayClient, GetAccountCommand } from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand, type Stack as CfnStack } from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetHostedZoneCommand, Route53Client } from '@aws-sdk/client-route-53';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import type { CustomDomainProps } from '../lib/constructs/custom-domain';
import { DELIVERY_CONCURRENCY_SHARE_OF_ACCOUNT, defaultDeliveryConcurrency } from '../lambda/adapters/delivery-queue';
import { DEFAULT_ACCOUNT_CONCURRENCY } from '../lambda/domain/long-poll-limits';

/** The bootstrap version the stack's template requires (its CheckBootstrapVersion rule). */
export const MIN_BOOTSTRAP_VERSION = 6;
/** The CDK's default bootstrap qualifier (context `@aws-cdk/core:bootstrapQualifier` changes it). */
export const DEFAULT_QUALIFIER = 'hnb659fds';
/**
 * Lambda keeps this much of the account's concurrency unreserved, or the whole quota when that is
 * lower: a new account with a quota of 10 can reserve nothing ("decreases account's
 * UnreservedConcurrentExecution below its minimum value of [10]").
 */
export const LAMBDA_MIN_UNRESERVED = 100;
/** Service Quotas code of Lambda's "Concurrent executions". */
export const LAMBDA_CONCURRENCY_QUOTA_CODE = 'L-B99A9384';
/** A standard SQS queue's in-flight limit (received, not yet deleted or visible again). */
export const SQS_INFLIGHT_LIMIT = 120_000;

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'info';

export interface Check {
  /** What was checked, e.g. `CDK bootstrap`. */
  readonly title: string;
  readonly status: CheckStatus;
  /** What was found. */
  readonly found: string;
  /** What to do (every warn and fail has one). */
  readonly action?: string;
}

/** What the deploy will do, from the same CDK context as `cdk deploy` (lib/deployment.ts). */
export interface PreflightSettings {
  readonly stackName: string;
  readonly environmentName: string;
  /** @default DEFAULT_QUALIFIER */
  readonly qualifier?: string;
  /** @default true */
  readonly apiGatewayCloudWatchRole?: boolean;
  readonly sweeperReservedConcurrency?: number;
  /** @default defaultDeliveryConcurrency(1000), 250 */
  readonly webhookDeliveryConcurrency?: number;
  readonly tableDeletionProtection?: boolean;
  readonly customDomain?: CustomDomainProps;
  readonly alarmEmail?: string;
}

export interface PreflightClients {
  readonly sts: STSClient;
  readonly ssm: SSMClient;
  readonly cloudFormation: CloudFormationClient;
  readonly lambda: LambdaClient;
  readonly apiGateway: APIGatewayClient;
  readonly route53: Route53Client;
}

/** Quotas worth knowing before traffic arrives, as read from the account where possible. */
export interface Quotas {
  lambdaConcurrency?: number;
  lambdaUnreserved?: number;
  apiGatewayRate?: number;
  apiGatewayBurst?: number;
}

export interface PreflightReport {
  readonly account?: string;
  readonly region?: string;
  readonly caller?: string;
  readonly checks: Check[];
  readonly quotas: Quotas;
  /** The stack exists (an update) or not (a first deploy); undefined when unknown. */
  readonly stackExists?: boolean;
}

const errorName = (e: unknown) => (e as { name?: string })?.name ?? '';
const isAccessDenied = (e: unknown) => /AccessDenied|UnauthorizedOperation|AuthorizationError/i.test(errorName(e));
const message = (e: unknown) => (e as Error)?.message ?? String(e);
/** The SDK could not reach AWS at all (DNS, connection, proxy, timeout): not a credentials problem. */
const isUnreachable = (e: unknown) =>
  /ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|TimeoutError|socket hang up/i.test(`${errorName(e)} ${(e as { code?: string })?.code ?? ''} ${message(e)}`);

/** A check that could not run for want of permission: not a reason to stop the deploy. */
const noPermission = (title: string, call: string, e: unknown): Check => ({
  title,
  status: 'warn',
  found: `not checked: ${call} was refused (${errorName(e)})`,
  action: `Allow ${call} for the credentials you deploy with to have this checked, or check it by hand (README "Deploy to AWS").`,
});

/** Runs every check; never throws for an AWS answer, only for a bug. */
export async function runPreflight(settings: PreflightSettings, clients: PreflightClients): Promise<PreflightReport> {
  const checks: Check[] = [];
  const quotas: Quotas = {};

  // Credentials and region first: without them nothing else can answer.
  let region: string | undefined;
  try {
    region = await clients.sts.config.region();
  } catch {
    region = undefined;
  }
  if (!region) {
    checks.push({
      title: 'AWS region',
      status: 'fail',
      found: 'no region configured',
      action: 'Set AWS_REGION (e.g. export AWS_REGION=eu-west-1) or a region in your AWS profile (aws configure set region eu-west-1), then run npm run preflight again.',
    });
    return { checks, quotas };
  }
  let account: string | undefined;
  let caller: string | undefined;
  try {
    const id = await clients.sts.send(new GetCallerIdentityCommand({}));
    account = id.Account;
    caller = id.Arn;
    checks.push({ title: 'AWS credentials', status: 'ok', found: `${caller} in account ${account}, region ${region}` });
  } catch (e) {
    if (isUnreachable(e)) {
      checks.push({
        title: 'AWS credentials',
        status: 'fail',
        found: `could not reach AWS STS in ${region} (${message(e)})`,
        action: 'Check the internet connection and the region name, then run npm run preflight again.',
      });
      return { region, checks, quotas };
    }
    checks.push({
      title: 'AWS credentials',
      status: 'fail',
      found: `no usable credentials (${errorName(e)}: ${message(e)})`,
      action: 'Configure credentials for the account to deploy to: aws configure, or aws sso login --profile NAME and export AWS_PROFILE=NAME; then run npm run preflight again.',
    });
    return { region, checks, quotas };
  }

  checks.push(await bootstrapCheck(settings, clients, account, region));
  const stack = await stackCheck(settings, clients);
  checks.push(stack.check);
  checks.push(await concurrencyCheck(settings, clients, quotas));
  checks.push(await apiGatewayRoleCheck(settings, clients, quotas));
  if (settings.customDomain) checks.push(await hostedZoneCheck(settings.customDomain, clients));
  checks.push(alarmEmailCheck(settings));
  const protection = tableProtectionCheck(settings, stack.exists);
  if (protection) checks.push(protection);
  return { account, region, caller, checks, quotas, stackExists: stack.exists };
}

async function bootstrapCheck(settings: PreflightSettings, clients: PreflightClients, account: string | undefined, region: string): Promise<Check> {
  const title = 'CDK bootstrap';
  const qualifier = settings.qualifier ?? DEFAULT_QUALIFIER;
  const name = `/cdk-bootstrap/${qualifier}/version`;
  const bootstrap = `npx cdk bootstrap aws://${account ?? 'ACCOUNT'}/${region}`;
  try {
    const out = await clients.ssm.send(new GetParameterCommand({ Name: name }));
    const version = Number(out.Parameter?.Value);
    if (!Number.isFinite(version) || version < MIN_BOOTSTRAP_VERSION) {
      return {
        title,
        status: 'fail',
        found: `bootstrap version ${out.Parameter?.Value} (${name}); this stack needs ${MIN_BOOTSTRAP_VERSION} or newer`,
        action: `Upgrade the bootstrap stack: ${bootstrap} (the CDK CLI of this project, npx cdk).`,
      };
    }
    return { title, status: 'ok', found: `bootstrapped, version ${version} (needs ${MIN_BOOTSTRAP_VERSION} or newer)` };
  } catch (e) {
    if (errorName(e) === 'ParameterNotFound') {
      return {
        title,
        status: 'fail',
        found: `${region} of account ${account} is not bootstrapped for the CDK (no SSM parameter ${name})`,
        action: `Bootstrap once per account and region: ${bootstrap}${qualifier !== DEFAULT_QUALIFIER ? ` --qualifier ${qualifier}` : ''}`,
      };
    }
    if (isAccessDenied(e)) return noPermission(title, `ssm:GetParameter on ${name}`, e);
    throw e;
  }
}

/** Stack states CloudFormation cannot deploy over, and what to do about each. */
function stuckStack(s: CfnStack, stackName: string): Check | undefined {
  const status = s.StackStatus ?? '';
  const title = `Stack ${stackName}`;
  const found = `${status}${s.StackStatusReason ? `: ${s.StackStatusReason}` : ''}`;
  if (status === 'ROLLBACK_COMPLETE' || status === 'ROLLBACK_FAILED') {
    return {
      title,
      status: 'fail',
      found: `${found} (its first deploy failed; CloudFormation cannot update it)`,
      action: `Delete it, then deploy again: aws cloudformation delete-stack --stack-name ${stackName} (README "Deploy to AWS": what a failed first deploy leaves behind).`,
    };
  }
  if (status === 'UPDATE_ROLLBACK_FAILED') {
    return {
      title,
      status: 'fail',
      found,
      action: `Finish the rollback first: aws cloudformation continue-update-rollback --stack-name ${stackName} (add --resources-to-skip for a resource that cannot roll back).`,
    };
  }
  if (status === 'DELETE_FAILED') {
    return { title, status: 'fail', found, action: `Delete it again, keeping what cannot be deleted: aws cloudformation delete-stack --stack-name ${stackName} --retain-resources <logical ids from the events>.` };
  }
  if (status.endsWith('_IN_PROGRESS')) {
    return { title, status: 'fail', found: `${found} (another operation is running)`, action: `Wait for it to end: aws cloudformation wait stack-update-complete --stack-name ${stackName} (or watch the stack's events).` };
  }
  return undefined;
}

async function stackCheck(settings: PreflightSettings, clients: PreflightClients): Promise<{ check: Check; exists?: boolean }> {
  const title = `Stack ${settings.stackName}`;
  try {
    const out = await clients.cloudFormation.send(new DescribeStacksCommand({ StackName: settings.stackName }));
    const s = out.Stacks?.[0];
    if (!s) return { check: { title, status: 'info', found: 'does not exist yet: this is a first deploy' }, exists: false };
    return { check: stuckStack(s, settings.stackName) ?? { title, status: 'ok', found: `${s.StackStatus}: this deploy updates it` }, exists: true };
  } catch (e) {
    if (errorName(e) === 'ValidationError' && /does not exist/.test(message(e))) {
      return { check: { title, status: 'info', found: `does not exist yet: this is a first deploy (environment ${settings.environmentName})` }, exists: false };
    }
    if (isAccessDenied(e)) return { check: noPermission(title, 'cloudformation:DescribeStacks', e) };
    throw e;
  }
}

async function concurrencyCheck(settings: PreflightSettings, clients: PreflightClients, quotas: Quotas): Promise<Check> {
  const title = 'Lambda concurrency';
  const raise = `Request more in Service Quotas (AWS Lambda → Concurrent executions, code ${LAMBDA_CONCURRENCY_QUOTA_CODE}): aws service-quotas request-service-quota-increase --service-code lambda --quota-code ${LAMBDA_CONCURRENCY_QUOTA_CODE} --desired-value 1000`;
  let limit: number;
  let unreserved: number;
  try {
    const out = await clients.lambda.send(new GetAccountSettingsCommand({}));
    limit = out.AccountLimit?.ConcurrentExecutions ?? 0;
    unreserved = out.AccountLimit?.UnreservedConcurrentExecutions ?? limit;
  } catch (e) {
    if (isAccessDenied(e)) return noPermission(title, 'lambda:GetAccountSettings', e);
    throw e;
  }
  quotas.lambdaConcurrency = limit;
  quotas.lambdaUnreserved = unreserved;
  const minimum = Math.min(LAMBDA_MIN_UNRESERVED, limit);
  const spare = Math.max(0, unreserved - minimum);
  const found = `quota ${limit} concurrent executions, ${unreserved} unreserved; Lambda keeps at least ${minimum} unreserved, so ${spare} can be reserved`;
  const reservation = settings.sweeperReservedConcurrency;
  if (reservation !== undefined && reservation > spare) {
    return {
      title,
      status: 'fail',
      found: `${found}; sweeperReservedConcurrency=${reservation} would be refused and the deploy rolled back`,
      action: `Deploy without -c sweeperReservedConcurrency (the sweeper's lease keeps one sweep at a time without it), or first raise the quota. ${raise}`,
    };
  }
  // The webhook delivery backlog may hold this many executions (the event source's maximum
  // concurrency); the stack's default is sized for a quarter of the default quota of 1,000.
  const delivery = settings.webhookDeliveryConcurrency ?? defaultDeliveryConcurrency(DEFAULT_ACCOUNT_CONCURRENCY);
  if (limit >= LAMBDA_MIN_UNRESERVED && delivery > limit * DELIVERY_CONCURRENCY_SHARE_OF_ACCOUNT) {
    return {
      title,
      status: 'warn',
      found: `${found}; a webhook delivery backlog may hold ${delivery} of them (webhookDeliveryConcurrency), more than a quarter, beside long polls that may hold half`,
      action: `Deploy with -c webhookDeliveryConcurrency=${Math.max(2, Math.floor(limit * DELIVERY_CONCURRENCY_SHARE_OF_ACCOUNT))}, or first raise the quota. ${raise}`,
    };
  }
  if (limit < LAMBDA_MIN_UNRESERVED) {
    return {
      title,
      status: 'warn',
      found: `${found}. The deploy works, but every function shares ${limit}: each long poll holds one for up to 25 s, so a few waiting consumers throttle everything else (API Gateway then answers 5xx)`,
      action: `Before real traffic: ${raise}`,
    };
  }
  return { title, status: 'ok', found };
}

async function apiGatewayRoleCheck(settings: PreflightSettings, clients: PreflightClients, quotas: Quotas): Promise<Check> {
  const title = 'API Gateway logging role';
  const creates = settings.apiGatewayCloudWatchRole ?? true;
  let roleArn: string | undefined;
  try {
    const out = await clients.apiGateway.send(new GetAccountCommand({}));
    roleArn = out.cloudwatchRoleArn || undefined;
    quotas.apiGatewayRate = out.throttleSettings?.rateLimit;
    quotas.apiGatewayBurst = out.throttleSettings?.burstLimit;
  } catch (e) {
    if (isAccessDenied(e)) return noPermission(title, 'apigateway:GET on /account', e);
    throw e;
  }
  const roleName = roleArn?.split('/').pop() ?? '';
  // CloudFormation names the stack's role `{stack}-ApiRestApiCloudWatchRole...`.
  const ours = roleArn !== undefined && roleName.startsWith(`${settings.stackName}-`);
  if (!roleArn && creates) return { title, status: 'ok', found: 'the account has none; this stack creates it and sets it on the account' };
  if (!roleArn && !creates) {
    return {
      title,
      status: 'fail',
      found: 'the account has no API Gateway logging role and apiGatewayCloudWatchRole=false: the stage\'s execution logging would fail the deploy',
      action: 'Deploy with apiGatewayCloudWatchRole=true (the default: drop -c apiGatewayCloudWatchRole=false), so this stack creates the role.',
    };
  }
  if (ours) return { title, status: 'ok', found: `${roleArn} (this stack's own)` };
  if (creates) {
    return {
      title,
      status: 'warn',
      found: `the account already logs through ${roleArn}; this stack would replace the account's setting with a role of its own`,
      action: 'Keep the existing role: deploy with -c apiGatewayCloudWatchRole=false (e.g. a second environment, or a role another project manages).',
    };
  }
  return { title, status: 'ok', found: `${roleArn} (the account's; this stack leaves it alone)` };
}

async function hostedZoneCheck(domain: CustomDomainProps, clients: PreflightClients): Promise<Check> {
  const title = `Hosted zone for ${domain.domainName}`;
  const normalize = (n: string) => n.toLowerCase().replace(/\.$/, '');
  const find = `aws route53 list-hosted-zones-by-name --dns-name ${normalize(domain.zoneName)}`;
  try {
    const out = await clients.route53.send(new GetHostedZoneCommand({ Id: domain.hostedZoneId }));
    const name = normalize(out.HostedZone?.Name ?? '');
    if (name !== normalize(domain.zoneName)) {
      return {
        title,
        status: 'fail',
        found: `zone ${domain.hostedZoneId} is ${name}, not ${normalize(domain.zoneName)}`,
        action: `Give the id of the zone ${normalize(domain.zoneName)} as hostedZoneId (${find}), or correct zoneName.`,
      };
    }
    if (out.HostedZone?.Config?.PrivateZone) {
      return {
        title,
        status: 'fail',
        found: `${name} (${domain.hostedZoneId}) is a private zone: the certificate's DNS validation and the public aliases need a public one`,
        action: `Use the public hosted zone of ${name} (${find}).`,
      };
    }
    const ns = out.DelegationSet?.NameServers ?? [];
    return {
      title,
      status: 'ok',
      found: `public zone ${name} (${domain.hostedZoneId})${ns.length ? `; its name servers: ${ns.join(', ')}` : ''}. The domain's registrar must delegate to these, or the certificate validation waits until CloudFormation gives up`,
    };
  } catch (e) {
    if (errorName(e) === 'NoSuchHostedZone' || errorName(e) === 'InvalidInput') {
      return {
        title,
        status: 'fail',
        found: `no hosted zone ${domain.hostedZoneId} in this account (${errorName(e)})`,
        action: `Give the id of the public zone that holds ${normalize(domain.domainName)}: ${find}`,
      };
    }
    if (isAccessDenied(e)) return noPermission(title, 'route53:GetHostedZone', e);
    throw e;
  }
}

function alarmEmailCheck(settings: PreflightSettings): Check {
  if (!settings.alarmEmail) {
    return {
      title: 'Alarm email',
      status: 'info',
      found: 'none: alarms show on the dashboard only',
      action: 'To be emailed, deploy with -c alarmEmail=you@example.com.',
    };
  }
  return {
    title: 'Alarm email',
    status: 'info',
    found: `${settings.alarmEmail} will get an email "AWS Notification - Subscription Confirmation" during the deploy`,
    action: 'Follow its "Confirm subscription" link: until then no alarm email is sent (SNS console → Subscriptions shows "Pending confirmation").',
  };
}

function tableProtectionCheck(settings: PreflightSettings, stackExists: boolean | undefined): Check | undefined {
  if (stackExists === true && !settings.tableDeletionProtection) {
    return {
      title: 'Table deletion protection',
      status: 'info',
      found: 'off (the default, so that a failed first deploy can remove its new tables)',
      action: 'The stack exists now: consider -c tableDeletionProtection=true (or in cdk.json) so that no one can delete a table by hand.',
    };
  }
  if (stackExists === false && settings.tableDeletionProtection) {
    return {
      title: 'Table deletion protection',
      status: 'warn',
      found: 'on for a first deploy: if it fails, the new tables stay behind and block nothing, but must be deleted by hand',
      action: 'Deploy first without -c tableDeletionProtection=true, and turn it on with the next deploy.',
    };
  }
  return undefined;
}

const MARK: Record<CheckStatus, string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', info: 'info' };

/** The report as the terminal shows it: checks, then the quotas that matter, then the verdict. */
export function formatReport(report: PreflightReport, settings: PreflightSettings): string {
  const lines = [
    `Preflight for stack ${settings.stackName} (environment ${settings.environmentName})` +
      (report.account ? ` in account ${report.account}, region ${report.region}` : ''),
    'Read-only: nothing was changed.',
    '',
  ];
  for (const c of report.checks) {
    lines.push(`[${MARK[c.status]}] ${c.title}: ${c.found}`);
    if (c.action) lines.push(`       -> ${c.action}`);
  }
  const q = report.quotas;
  if (report.account) lines.push(
    '',
    'Quotas that matter (README "Deploy to AWS"):',
    `  - Lambda concurrent executions: ${q.lambdaConcurrency ?? 'unknown'} in this region, shared by every function; each long poll holds one for up to 25 s. Raise: Service Quotas → AWS Lambda → Concurrent executions (${LAMBDA_CONCURRENCY_QUOTA_CODE}).`,
    `  - API Gateway account throttle: ${q.apiGatewayRate ?? 'unknown'} requests/s, burst ${q.apiGatewayBurst ?? 'unknown'}, shared by every API of the account in this region (the stack's usage plan adds 50/s, burst 100 per key). Raise: Service Quotas → Amazon API Gateway → Throttle rate.`,
    `  - SQS in-flight messages: about ${SQS_INFLIGHT_LIMIT.toLocaleString('en-US')} per standard queue (received, not yet acknowledged); a consumer that never acks fills it. Raise: a case with AWS Support.`,
  );
  lines.push('');
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  const warned = report.checks.filter((c) => c.status === 'warn').length;
  lines.push(
    failed
      ? `Not ready: ${failed} check${failed > 1 ? 's' : ''} would fail the deploy. Fix ${failed > 1 ? 'them' : 'it'} and run npm run preflight again.`
      : `Ready to deploy${warned ? ` (read the ${warned} warning${warned > 1 ? 's' : ''} above)` : ''}: npx cdk deploy --outputs-file cdk-outputs.json`,
  );
  return `${lines.join('\n')}\n`;
}

/** The clients of one region and profile (the caller's default credential chain). */
export function preflightClients(config: { region?: string; profile?: string } = {}): PreflightClients {
  const c = { ...(config.region ? { region: config.region } : {}), ...(config.profile ? { profile: config.profile } : {}) };
  return {
    sts: new STSClient(c),
    ssm: new SSMClient(c),
    cloudFormation: new CloudFormationClient(c),
    lambda: new LambdaClient(c),
    apiGateway: new APIGatewayClient(c),
    // Route 53 is global; its endpoint is in us-east-1 whatever the deploy's region.
    route53: new Route53Client({ ...c, region: 'us-east-1' }),
  };
}
