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
 * Each check answers `ok`, `warn` (deploys, but read this), `fail` (fix first) or `info`. This file
 * runs them and prints the report; the checks that ask the account are in ./preflight-aws-checks.ts,
 * the types in ./preflight-types.ts.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { Route53Client } from '@aws-sdk/client-route-53';
import { SSMClient } from '@aws-sdk/client-ssm';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import {
  apiGatewayRoleCheck, bootstrapCheck, concurrencyCheck, errorName, hostedZoneCheck, isUnreachable, LAMBDA_CONCURRENCY_QUOTA_CODE, message, stackCheck,
} from './preflight-aws-checks';
import type { Check, CheckStatus, PreflightClients, PreflightReport, PreflightSettings, Quotas } from './preflight-types';

/** A standard SQS queue's in-flight limit (received, not yet deleted or visible again). */
const SQS_INFLIGHT_LIMIT = 120_000;

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
