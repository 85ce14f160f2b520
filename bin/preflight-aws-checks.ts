/**
 * The checks of `npm run preflight` that ask the account (./preflight-checks.ts runs them in
 * order): CDK bootstrap, the stack's state, Lambda concurrency, the API Gateway logging role and a
 * custom domain's hosted zone. Each is one Get or Describe; a refused call is a warning, never a
 * reason to stop the deploy.
 */
import { GetAccountCommand } from '@aws-sdk/client-api-gateway';
import { DescribeStacksCommand, type Stack as CfnStack } from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand } from '@aws-sdk/client-lambda';
import { GetHostedZoneCommand } from '@aws-sdk/client-route-53';
import { GetParameterCommand } from '@aws-sdk/client-ssm';
import type { CustomDomainProps } from '../lib/constructs/custom-domain';
import { DELIVERY_CONCURRENCY_SHARE_OF_ACCOUNT, defaultDeliveryConcurrency } from '../lambda/webhooks/storage/delivery-queue';
import { DEFAULT_ACCOUNT_CONCURRENCY } from '../lambda/core/rules/long-poll-limits';
import type { Check, PreflightClients, PreflightSettings, Quotas } from './preflight-types';

/** The bootstrap version the stack's template requires (its CheckBootstrapVersion rule). */
const MIN_BOOTSTRAP_VERSION = 6;
/** The CDK's default bootstrap qualifier (context `@aws-cdk/core:bootstrapQualifier` changes it). */
const DEFAULT_QUALIFIER = 'hnb659fds';
/**
 * Lambda keeps this much of the account's concurrency unreserved, or the whole quota when that is
 * lower: a new account with a quota of 10 can reserve nothing ("decreases account's
 * UnreservedConcurrentExecution below its minimum value of [10]").
 */
const LAMBDA_MIN_UNRESERVED = 100;
/** Service Quotas code of Lambda's "Concurrent executions". */
export const LAMBDA_CONCURRENCY_QUOTA_CODE = 'L-B99A9384';

export const errorName = (e: unknown) => (e as { name?: string })?.name ?? '';
const isAccessDenied = (e: unknown) => /AccessDenied|UnauthorizedOperation|AuthorizationError/i.test(errorName(e));
export const message = (e: unknown) => (e as Error)?.message ?? String(e);
/** The SDK could not reach AWS at all (DNS, connection, proxy, timeout): not a credentials problem. */
export const isUnreachable = (e: unknown) =>
  /ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|TimeoutError|socket hang up/i.test(`${errorName(e)} ${(e as { code?: string })?.code ?? ''} ${message(e)}`);

/** A check that could not run for want of permission: not a reason to stop the deploy. */
const noPermission = (title: string, call: string, e: unknown): Check => ({
  title,
  status: 'warn',
  found: `not checked: ${call} was refused (${errorName(e)})`,
  action: `Allow ${call} for the credentials you deploy with to have this checked, or check it by hand (README "Deploy to AWS").`,
});

export async function bootstrapCheck(settings: PreflightSettings, clients: PreflightClients, account: string | undefined, region: string): Promise<Check> {
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

export async function stackCheck(settings: PreflightSettings, clients: PreflightClients): Promise<{ check: Check; exists?: boolean }> {
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

export async function concurrencyCheck(settings: PreflightSettings, clients: PreflightClients, quotas: Quotas): Promise<Check> {
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

export async function apiGatewayRoleCheck(settings: PreflightSettings, clients: PreflightClients, quotas: Quotas): Promise<Check> {
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

export async function hostedZoneCheck(domain: CustomDomainProps, clients: PreflightClients): Promise<Check> {
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
