/**
 * Deployment settings: the stack props that `bin/app.ts` reads from the CDK context (cdk.json's
 * `context`, or `-c key=value` on the command line). Documented in README "Deploy to AWS".
 *
 * | Context key        | Stack prop      | Default                                             |
 * |--------------------|-----------------|-----------------------------------------------------|
 * | `environment`      | environmentName | `production`                                        |
 * | `domainName`       | customDomain    | none (the execute-api URL); needs the two below     |
 * | `hostedZoneId`     | customDomain    | none                                                |
 * | `zoneName`         | customDomain    | none                                                |
 * | `logRetentionDays` | logRetention    | 30                                                  |
 * | `removalPolicy`    | removalPolicy   | `retain` (RETAIN_ON_UPDATE_OR_DELETE); `destroy` only outside production |
 * | `alarmEmail`       | alarmEmail      | none (alarms without notifications)                 |
 * | `baseDomain`       | baseDomain      | the custom domain, else none (kept for older setups)|
 * | `apiGatewayCloudWatchRole` | apiGatewayCloudWatchRole | `true`: the stack sets the account's API Gateway logging role |
 * | `tableDeletionProtection`  | tableDeletionProtection  | `false` (see MessagingStackProps)         |
 * | `sweeperReservedConcurrency` | sweeperReservedConcurrency | none (the lease keeps one sweep at a time) |
 * | `webhookDeliveryConcurrency` | webhookDeliveryConcurrency | 250: a quarter of the account's 1,000 (docs/performance.md "Webhook throughput on AWS") |
 * | `awsSdk`           | awsSdk          | `bundled` (see AwsSdkSource in lib/constructs/bundling.ts)  |
 * | `console`          | console         | `true`: the browser console (lib/constructs/console.ts); `false` leaves it out |
 * | `sizeGuard`        | sizeGuard       | `true`: a WAF web ACL answering 413 for bodies of 3,000,000 bytes or more (lib/constructs/size-guard.ts) |
 * | `secretsKeyAdmins` | secretsKeyAdmins | none: only the CloudFormation role administers the secrets key; comma-separated IAM role or user ARNs add administrators |
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { IAM_PRINCIPAL_ARN } from './constructs/functions';
import type { MessagingStackProps } from './messaging-stack';
import { STACK_NAME } from './stack-outputs';

/** Environment names in which data is always retained. */
const PRODUCTION_ENVIRONMENTS = ['production', 'prod'];
export const DEFAULT_ENVIRONMENT = 'production';

export const isProduction = (environmentName: string) => PRODUCTION_ENVIRONMENTS.includes(environmentName.toLowerCase());

/**
 * The stack name of an environment: `MessagingService` for production (the default), and
 * `MessagingService-<environment>` otherwise, so a dev or staging stack can live beside production
 * in one account and region.
 */
export const stackNameFor = (environmentName: string = DEFAULT_ENVIRONMENT): string =>
  isProduction(environmentName) ? STACK_NAME : `${STACK_NAME}-${environmentName}`;

const RETENTION_DAYS = new Set(Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'));

function text(get: (key: string) => unknown, key: string): string | undefined {
  const v = get(key);
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' && typeof v !== 'number') throw new Error(`context ${key} must be a string, got ${JSON.stringify(v)}`);
  return String(v).trim();
}

/** A yes/no setting: a boolean in cdk.json, or the text `true` / `false` from `-c key=value`. */
function flag(get: (key: string) => unknown, key: string): boolean | undefined {
  const v = get(key);
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
  throw new Error(`context ${key} must be true or false, got ${JSON.stringify(v)}`);
}

/** Stack props from the CDK context; throws with the key's name on a bad value. */
export function stackPropsFromContext(get: (key: string) => unknown): MessagingStackProps {
  const environmentName = text(get, 'environment') ?? DEFAULT_ENVIRONMENT;
  if (!/^[A-Za-z0-9-]{1,32}$/.test(environmentName)) throw new Error(`context environment must be 1 to 32 letters, digits or -, got ${environmentName}`);

  const days = text(get, 'logRetentionDays');
  let logRetention: RetentionDays | undefined;
  if (days !== undefined) {
    const n = Number(days);
    if (!RETENTION_DAYS.has(n)) throw new Error(`context logRetentionDays must be one of CloudWatch Logs' retention periods (${[...RETENTION_DAYS].join(', ')}), got ${days}`);
    logRetention = n as RetentionDays;
  }

  const removal = text(get, 'removalPolicy')?.toLowerCase();
  if (removal !== undefined && removal !== 'retain' && removal !== 'destroy') throw new Error(`context removalPolicy must be retain or destroy, got ${removal}`);

  const domainName = text(get, 'domainName');
  const hostedZoneId = text(get, 'hostedZoneId');
  const zoneName = text(get, 'zoneName');
  if ((hostedZoneId || zoneName) && !domainName) throw new Error('context hostedZoneId and zoneName go with domainName');
  if (domainName && (!hostedZoneId || !zoneName)) throw new Error('context domainName needs hostedZoneId and zoneName (the Route 53 hosted zone that holds it)');

  const alarmEmail = text(get, 'alarmEmail');
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(alarmEmail)) throw new Error(`context alarmEmail is not an email address: ${alarmEmail}`);

  const apiGatewayCloudWatchRole = flag(get, 'apiGatewayCloudWatchRole');
  const tableDeletionProtection = flag(get, 'tableDeletionProtection');
  if (tableDeletionProtection && removal === 'destroy') throw new Error('context tableDeletionProtection=true contradicts removalPolicy=destroy');

  const reserved = text(get, 'sweeperReservedConcurrency');
  if (reserved !== undefined && !/^[1-9]\d{0,3}$/.test(reserved)) throw new Error(`context sweeperReservedConcurrency must be a whole number from 1, got ${reserved}`);

  const delivery = text(get, 'webhookDeliveryConcurrency');
  if (delivery !== undefined && !(/^\d{1,4}$/.test(delivery) && Number(delivery) >= 2 && Number(delivery) <= 1000)) {
    throw new Error(`context webhookDeliveryConcurrency must be a whole number from 2 to 1000 (the SQS event source's maximum concurrency), got ${delivery}`);
  }

  const awsSdk = text(get, 'awsSdk')?.toLowerCase();
  if (awsSdk !== undefined && awsSdk !== 'bundled' && awsSdk !== 'runtime') throw new Error(`context awsSdk must be bundled or runtime, got ${awsSdk}`);

  // IAM role or user ARNs only (the key's construct checks them again).
  const secretsKeyAdmins = text(get, 'secretsKeyAdmins')?.split(',').map((a) => a.trim()).filter(Boolean);
  for (const arn of secretsKeyAdmins ?? []) {
    if (!IAM_PRINCIPAL_ARN.test(arn)) throw new Error(`context secretsKeyAdmins must be comma-separated IAM role or user ARNs (not the account root), got ${arn}`);
  }

  const consoleOn = flag(get, 'console');
  const sizeGuard = flag(get, 'sizeGuard');

  return {
    environmentName,
    ...(logRetention !== undefined ? { logRetention } : {}),
    ...(removal ? { removalPolicy: removal === 'destroy' ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE } : {}),
    ...(domainName && hostedZoneId && zoneName ? { customDomain: { domainName, hostedZoneId, zoneName } } : {}),
    ...(alarmEmail ? { alarmEmail } : {}),
    ...(text(get, 'baseDomain') ? { baseDomain: text(get, 'baseDomain') } : {}),
    ...(apiGatewayCloudWatchRole !== undefined ? { apiGatewayCloudWatchRole } : {}),
    ...(tableDeletionProtection !== undefined ? { tableDeletionProtection } : {}),
    ...(reserved !== undefined ? { sweeperReservedConcurrency: Number(reserved) } : {}),
    ...(delivery !== undefined ? { webhookDeliveryConcurrency: Number(delivery) } : {}),
    ...(awsSdk ? { awsSdk } : {}),
    ...(consoleOn !== undefined ? { console: consoleOn } : {}),
    ...(sizeGuard !== undefined ? { sizeGuard } : {}),
    ...(secretsKeyAdmins?.length ? { secretsKeyAdmins } : {}),
  };
}
