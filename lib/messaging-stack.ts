/**
 * The messaging service in one stack: tables, functions and the API, composed from one construct
 * per concern, plus the outputs the admin CLI and clients need.
 */
import { CfnOutput, RemovalPolicy, Stack, type Duration, type StackProps } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { TABLES } from '../lambda/storage/tables';
import { Api, type ApiThrottle } from './constructs/api';
import { Functions, type AwsSdkSource } from './constructs/functions';
import { Sweeper } from './constructs/sweeper';
import { Tables } from './constructs/tables';
import { WebhookDelivery } from './constructs/webhook-delivery';
import { API_URL_OUTPUT, tableNameOutput, USAGE_PLAN_ID_OUTPUT } from './stack-outputs';

export interface MessagingStackProps extends StackProps {
  /**
   * Of the tables and log groups when they leave the stack (`RemovalPolicy.DESTROY` for
   * throw-away stacks).
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Base domain of per-namespace hosts (`{ns}.{baseDomain}`, the Host rule). @default none */
  readonly baseDomain?: string;
  /** `GET /namespace` endpoint, `{namespace}` replaced. @default from the request's host */
  readonly endpointTemplate?: string;
  /** @default DEFAULT_THROTTLE of lib/constructs/api.ts (50 requests/s, burst 100 per key) */
  readonly throttle?: ApiThrottle;
  /** @default DEFAULT_AUTHORIZER_CACHE_TTL of lib/constructs/api.ts (30 s) */
  readonly authorizerCacheTtl?: Duration;
  /** @default 'runtime', see AwsSdkSource in lib/constructs/functions.ts */
  readonly awsSdk?: AwsSdkSource;
  /** @default true, see ApiProps.cloudWatchRole */
  readonly apiGatewayCloudWatchRole?: boolean;
}

export class MessagingStack extends Stack {
  readonly tables: Tables;
  readonly functions: Functions;
  readonly api: Api;
  readonly webhooks: WebhookDelivery;
  readonly sweeper: Sweeper;

  constructor(scope: Construct, id: string, props: MessagingStackProps = {}) {
    super(scope, id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;

    this.tables = new Tables(this, 'Tables', { removalPolicy });
    this.functions = new Functions(this, 'Functions', {
      tables: this.tables,
      removalPolicy,
      logRetention,
      baseDomain: props.baseDomain,
      endpointTemplate: props.endpointTemplate,
      awsSdk: props.awsSdk,
    });
    this.api = new Api(this, 'Api', {
      functions: this.functions,
      removalPolicy,
      logRetention,
      throttle: props.throttle,
      authorizerCacheTtl: props.authorizerCacheTtl,
      cloudWatchRole: props.apiGatewayCloudWatchRole,
    });

    this.webhooks = new WebhookDelivery(this, 'Webhooks', {
      tables: this.tables,
      removalPolicy,
      logRetention,
      awsSdk: props.awsSdk,
    });
    // Functions that publish enqueue delivery jobs: the publish group, and the queues group, whose
    // dead-lettering republishes to a topic a webhook may match.
    for (const group of ['publish', 'queues'] as const) {
      const fn = this.functions.http.get(group);
      if (fn) this.webhooks.allowEnqueue(fn);
    }

    this.sweeper = new Sweeper(this, 'Sweeper', { functions: this.functions });

    new CfnOutput(this, API_URL_OUTPUT, { value: this.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, USAGE_PLAN_ID_OUTPUT, {
      value: this.api.usagePlan.usagePlanId,
      description: 'Usage plan of the API keys (the admin CLI adds each new key to it: --outputs or --usage-plan)',
    });
    for (const t of Object.values(TABLES)) {
      new CfnOutput(this, tableNameOutput(t.id), {
        value: this.tables.byId[t.id].tableName,
        description: `${t.id} table (Lambda environment ${t.envVar})`,
      });
    }
  }
}
