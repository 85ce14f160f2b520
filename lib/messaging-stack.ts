/**
 * The messaging service in one stack: tables, functions and the API, composed from one construct
 * per concern, plus the outputs the admin CLI and clients need.
 */
import { CfnOutput, RemovalPolicy, Stack, type Duration, type StackProps } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { TABLES } from '../lambda/core/storage/tables';
import { Api, type ApiThrottle } from './constructs/api';
import { Console } from './constructs/console';
import { CustomDomain, namespaceHosts, type CustomDomainProps } from './constructs/custom-domain';
import { Dashboard } from './constructs/dashboard';
import type { AwsSdkSource } from './constructs/bundling';
import { Functions } from './constructs/functions';
import { ServiceQueues } from './constructs/service-queues';
import { Sweeper } from './constructs/sweeper';
import { Scheduler } from './constructs/scheduler';
import { Tables } from './constructs/tables';
import { WebhookDelivery } from './constructs/webhook-delivery';
import { DEFAULT_ENVIRONMENT, isProduction } from './deployment';
import { API_URL_OUTPUT, CONSOLE_URL_OUTPUT, DASHBOARD_URL_OUTPUT, SQS_QUEUE_PREFIX_OUTPUT, SQS_QUEUE_URL_BASE_OUTPUT, tableNameOutput, USAGE_PLAN_ID_OUTPUT, WEBHOOK_QUEUE_URL_OUTPUT } from './stack-outputs';

export interface MessagingStackProps extends StackProps {
  /**
   * What happens to the tables and log groups when they leave the stack. Anything but
   * `RemovalPolicy.DESTROY` (for throw-away stacks) keeps them with
   * `RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE` (CloudFormation's `RetainExceptOnCreate`): kept when
   * the stack is deleted or they are replaced, but deleted by the rollback of the operation that
   * created them, so a failed first deploy leaves nothing behind (they are new and empty then).
   * @default RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection on the tables (refuses DeleteTable by anyone until turned off).
   * A protected table cannot be deleted by a rollback either, so protected tables are plain
   * `RETAIN`: a failed operation that created one leaves it behind (README "Deploy to AWS" has
   * the cleanup). Turn it on once the first deploy has succeeded. Refused with DESTROY.
   * @default false
   */
  readonly tableDeletionProtection?: boolean;
  /**
   * Reserved concurrency of the sweeper; see SweeperProps.reservedConcurrency.
   * @default none (the sweeper's lease keeps one sweep at a time)
   */
  readonly sweeperReservedConcurrency?: number;
  /**
   * Webhook delivery batches at once (the SQS event source's maximum concurrency); see
   * WebhookDeliveryProps.maxConcurrency.
   * @default a quarter of `accountConcurrency` (250)
   */
  readonly webhookDeliveryConcurrency?: number;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Base domain of per-namespace hosts (`{ns}.{baseDomain}`, the Host rule). @default none */
  readonly baseDomain?: string;
  /** `GET /namespace` endpoint, `{namespace}` replaced. @default from the request's host */
  readonly endpointTemplate?: string;
  /** @default DEFAULT_THROTTLE of lib/constructs/api.ts (50 requests/s, burst 100 per key) */
  readonly throttle?: ApiThrottle;
  /** Stage-wide, before the authorizer. @default DEFAULT_STAGE_THROTTLE of lib/constructs/api.ts (500 requests/s, burst 1000) */
  readonly stageThrottle?: ApiThrottle;
  /** @default DEFAULT_AUTHORIZER_CACHE_TTL of lib/constructs/api.ts (30 s) */
  readonly authorizerCacheTtl?: Duration;
  /** @default 'bundled', see AwsSdkSource in lib/constructs/bundling.ts */
  readonly awsSdk?: AwsSdkSource;
  /** The account's Lambda concurrency quota, for the long-poll bulkhead (docs/aws-parity.md). @default 1000 */
  readonly accountConcurrency?: number;
  /**
   * Create the account's API Gateway logging role (one per account and region); turn off where
   * the account already has one, e.g. for a second environment. See ApiProps.cloudWatchRole.
   * @default true
   */
  readonly apiGatewayCloudWatchRole?: boolean;
  /**
   * `production` or `prod` keep data whatever `removalPolicy` says (DESTROY is refused at synth);
   * the name is part of the dashboard's name (bin/app.ts also tags every resource with it).
   * @default 'production'
   */
  readonly environmentName?: string;
  /**
   * The API on `domainName` and `{ns}.domainName` (certificate, custom domain names, Route 53
   * aliases); sets baseDomain and endpointTemplate unless they are given. @default none
   */
  readonly customDomain?: CustomDomainProps;
  /** Every alarm notifies an encrypted SNS topic this address subscribes to. @default none */
  readonly alarmEmail?: string;
  /**
   * The browser console (docs/console.md): S3 + CloudFront with the API as a second origin, and
   * the `ConsoleUrl` output. Context `console=false` leaves it out. @default true
   */
  readonly console?: boolean;
  /**
   * The size guard: an AWS WAF web ACL on the API stage answering 413 MESSAGE_TOO_LARGE for a
   * body of 3,000,000 bytes or more (lib/constructs/size-guard.ts). Context `sizeGuard=false`
   * leaves it out. @default true
   */
  readonly sizeGuard?: boolean;
  /**
   * IAM role or user ARNs that administer the secrets key (its policy, rotation, deletion; not
   * its use) besides the deployment's CloudFormation role (docs/security.md). @default none
   */
  readonly secretsKeyAdmins?: readonly string[];
}

export class MessagingStack extends Stack {
  readonly tables: Tables;
  readonly functions: Functions;
  readonly api: Api;
  readonly webhooks: WebhookDelivery;
  readonly dashboard: Dashboard;
  readonly customDomain?: CustomDomain;
  readonly sweeper: Sweeper;
  readonly scheduler: Scheduler;
  readonly serviceQueues: ServiceQueues;
  readonly console?: Console;

  constructor(scope: Construct, id: string, props: MessagingStackProps = {}) {
    super(scope, id, props);
    const environmentName = props.environmentName ?? DEFAULT_ENVIRONMENT;
    if (isProduction(environmentName) && props.removalPolicy === RemovalPolicy.DESTROY) {
      throw new Error(`removalPolicy DESTROY is refused in the ${environmentName} environment: production data is retained`);
    }
    const removalPolicy = props.removalPolicy === RemovalPolicy.DESTROY ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
    const hosts = props.customDomain ? namespaceHosts(props.customDomain.domainName) : undefined;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;

    this.tables = new Tables(this, 'Tables', { removalPolicy, deletionProtection: props.tableDeletionProtection });
    this.functions = new Functions(this, 'Functions', {
      tables: this.tables,
      removalPolicy,
      logRetention,
      baseDomain: props.baseDomain ?? hosts?.baseDomain,
      endpointTemplate: props.endpointTemplate ?? hosts?.endpointTemplate,
      awsSdk: props.awsSdk,
      accountConcurrency: props.accountConcurrency,
      secretsKeyAdmins: props.secretsKeyAdmins,
    });
    this.api = new Api(this, 'Api', {
      functions: this.functions,
      removalPolicy,
      logRetention,
      throttle: props.throttle,
      stageThrottle: props.stageThrottle,
      authorizerCacheTtl: props.authorizerCacheTtl,
      cloudWatchRole: props.apiGatewayCloudWatchRole,
      sizeGuard: props.sizeGuard,
    });
    if (props.customDomain) this.customDomain = new CustomDomain(this, 'CustomDomain', { ...props.customDomain, restApi: this.api.restApi });

    this.webhooks = new WebhookDelivery(this, 'Webhooks', { functions: this.functions, removalPolicy, logRetention, accountConcurrency: props.accountConcurrency, maxConcurrency: props.webhookDeliveryConcurrency });
    // Functions that publish enqueue delivery jobs: the publish group, and the queues group, whose
    // dead-lettering republishes to a topic a webhook may match; and the webhooks group, whose
    // replays (extension) queue deliveries.
    for (const group of ['publish', 'queues', 'webhooks'] as const) {
      const fn = this.functions.http.get(group);
      if (fn) this.webhooks.allowEnqueue(fn);
    }

    this.sweeper = new Sweeper(this, 'Sweeper', { functions: this.functions, reservedConcurrency: props.sweeperReservedConcurrency });
    // The sweeper publishes `webhooks/disabled` events whose first publish failed, to any sink.
    this.webhooks.allowEnqueue(this.sweeper.function);
    // The tick hands held messages to webhooks and publishes schedule runs.
    this.scheduler = new Scheduler(this, 'Scheduler', { functions: this.functions });
    this.webhooks.allowEnqueue(this.scheduler.function);
    // After every function exists: the SQS grants and environment of service queues.
    this.serviceQueues = new ServiceQueues(this, 'ServiceQueues', { functions: this.functions, removalPolicy });

    new CfnOutput(this, API_URL_OUTPUT, { value: this.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, USAGE_PLAN_ID_OUTPUT, {
      value: this.api.usagePlan.usagePlanId,
      description: 'Usage plan of the API keys (the admin CLI adds each new key to it: --outputs or --usage-plan)',
    });
    new CfnOutput(this, WEBHOOK_QUEUE_URL_OUTPUT, {
      value: this.webhooks.queue.queueUrl,
      description: 'Webhook delivery queue (the admin CLI redrive enqueues deliveries for matching webhooks: --outputs)',
    });
    new CfnOutput(this, SQS_QUEUE_PREFIX_OUTPUT, {
      value: this.serviceQueues.prefix,
      description: 'Name prefix of the SQS queues behind service queues (made at runtime; npm run admin -- sqs-queues list --outputs)',
    });
    if (props.console !== false) {
      this.console = new Console(this, 'Console', { restApi: this.api.restApi, removalPolicy });
      new CfnOutput(this, CONSOLE_URL_OUTPUT, { value: this.console.url, description: 'The browser console (docs/console.md): sign in with an API key' });
    }
    new CfnOutput(this, SQS_QUEUE_URL_BASE_OUTPUT, { value: this.serviceQueues.urlBase, description: 'URL base of those SQS queues (the admin CLI)' });
    for (const t of Object.values(TABLES)) {
      new CfnOutput(this, tableNameOutput(t.id), {
        value: this.tables.byId[t.id].tableName,
        description: `${t.id} table (Lambda environment ${t.envVar})`,
      });
    }

    // Last, so that it sees every function, dead-letter queue and alarm of the stack.
    const stackFunctions = this.node.findAll().filter((c): c is NodejsFunction => c instanceof NodejsFunction);
    this.dashboard = new Dashboard(this, 'Monitoring', {
      restApi: this.api.restApi,
      functions: new Map(stackFunctions.map((fn) => [functionLabel(fn), fn])),
      tables: this.tables.byId,
      globalIndexes: Object.fromEntries(Object.values(TABLES).map((t) => [t.id, (t.globalIndexes ?? []).map((i) => i.indexName)])),
      accessLogs: this.api.accessLogs,
      deliveryQueue: this.webhooks.queue,
      retryWorkflow: this.webhooks.stateMachine,
      deadLetterQueues: new Map(
        this.node.findAll()
          .filter((c): c is Queue => c instanceof Queue && c.node.id === 'DeadLetterQueue')
          .map((q) => [`${q.node.scope?.node.id} DLQ`, q]),
      ),
      extraAlarms: this.node.findAll().filter((c): c is Alarm => c instanceof Alarm),
      alarmEmail: props.alarmEmail,
      dashboardName: `${this.stackName}-${environmentName}`,
      sqsQueuePrefix: this.serviceQueues.prefix,
    });
    this.dashboard.dashboard.addWidgets(...this.scheduler.widgets);
    new CfnOutput(this, DASHBOARD_URL_OUTPUT, { value: this.dashboard.url, description: 'The CloudWatch dashboard of this stack (README "Operate")' });
  }
}

/** `publish` for Functions/Publish, `webhooksDelivery` for Webhooks/DeliveryFunction. */
function functionLabel(fn: NodejsFunction): string {
  const id = fn.node.id.replace(/Function$/, '');
  const parent = fn.node.scope?.node.id ?? '';
  const name = parent === 'Functions' ? id : `${parent}${id}`;
  return `${name[0].toLowerCase()}${name.slice(1)}`;
}
