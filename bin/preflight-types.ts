/** What `npm run preflight` reads and answers (./preflight-checks.ts): settings, clients, checks, report. */
import type { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { Route53Client } from '@aws-sdk/client-route-53';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { STSClient } from '@aws-sdk/client-sts';
import type { CustomDomainProps } from '../lib/constructs/custom-domain';

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
  /** @default ./preflight-aws-checks.ts `DEFAULT_QUALIFIER` */
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
