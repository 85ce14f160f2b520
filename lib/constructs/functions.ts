/**
 * The Lambda functions: one per handler group of the route table, the authorizer, and (through
 * {@link Functions.add}) any function with another event source. Every function gets the same
 * runtime, bundling, tracing, log group and environment, and exactly the table access that
 * lib/table-access.ts lists for it.
 *
 * A function with another event source adds its id to `FunctionId`, its row to `TABLE_ACCESS`,
 * and a construct that calls {@link Functions.add} and wires the source with its DLQ (e.g. the
 * sweeper's schedule, lib/constructs/sweeper.ts).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DefaultStackSynthesizer, Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { ArnPrincipal, PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { handlerGroups, type HandlerGroup, type Route, ROUTES } from '../../lambda/core/rules/routes';
import { TABLES, type TableId } from '../../lambda/core/storage/tables';
import { INTEGRATION_TIMEOUT_SECONDS, MAX_LONG_POLL_SECONDS } from '../../lambda/core/rules/gateway-responses';
import { INDEX_QUERIES, SECRETS_KEY_ACCESS, TABLE_ACCESS, tableActions, type FunctionId, type TableAccess } from '../table-access';
import { ENCRYPTION_CONTEXT } from '../../lambda/core/adapters/data-keys';
import { DEFAULT_ACCOUNT_CONCURRENCY } from '../../lambda/core/rules/long-poll-limits';
import { pascal, type Tables } from './tables';
import { DEFAULT_MEMORY_MB, QUEUES_MEMORY_MB } from '../function-memory';
import { builtConsoleDir } from './console';
import { bundlingOptions, lazyModuleOptions, type AwsSdkSource } from './bundling';

export interface FunctionsProps {
  readonly tables: Tables;
  /** @default ROUTES */
  readonly routes?: readonly Route[];
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Of the log groups. @default RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE (kept, except by the rollback of the deploy that created them) */
  readonly removalPolicy?: RemovalPolicy;
  /** POWERTOOLS_SERVICE_NAME. @default 'messaging' */
  readonly serviceName?: string;
  /** POWERTOOLS_METRICS_NAMESPACE (CloudWatch metrics namespace). @default 'Messaging' */
  readonly metricsNamespace?: string;
  /** MSG_BASE_DOMAIN: per-namespace hosts are `{ns}.{baseDomain}` (the Host rule). @default none */
  readonly baseDomain?: string;
  /** MSG_ENDPOINT_TEMPLATE for `GET /namespace`. @default derived from the request's host */
  readonly endpointTemplate?: string;
  /** @default 'bundled', see AwsSdkSource */
  readonly awsSdk?: AwsSdkSource;
  /**
   * The account's Lambda concurrency quota in this region: the long-poll bulkhead lets half of it
   * wait, a tenth of that per namespace (lambda/core/rules/long-poll-limits.ts, docs/aws-parity.md).
   * @default 1000 (Lambda's default quota)
   */
  readonly accountConcurrency?: number;
  /** Directory that holds `lambda/handlers/`. @default the nearest such directory above the working directory */
  readonly projectRoot?: string;
  /**
   * IAM role or user ARNs that administer the secrets key (KEY_ADMIN_ACTIONS, no use of the key)
   * besides the CloudFormation role of the deployment. @default none
   */
  readonly secretsKeyAdmins?: readonly string[];
}

/**
 * What a key administrator may do: the actions of AWS's "key administrators" statement
 * (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html#key-policy-default-allow-administrators).
 * None uses the key on data; an administrator could still change the policy (PutKeyPolicy) or
 * create a grant to use it, which CloudTrail records.
 */
const KEY_ADMIN_ACTIONS = [
  'kms:Create*', 'kms:Describe*', 'kms:Enable*', 'kms:List*', 'kms:Put*', 'kms:Update*', 'kms:Revoke*', 'kms:Disable*',
  'kms:Get*', 'kms:Delete*', 'kms:TagResource', 'kms:UntagResource', 'kms:ScheduleKeyDeletion', 'kms:CancelKeyDeletion', 'kms:RotateKeyOnDemand',
];

/** An IAM role or user ARN (not an account root, not a wildcard). */
export const IAM_PRINCIPAL_ARN = /^arn:aws[a-z-]*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+$/;

export interface FunctionOptions {
  /** Module under lambda/handlers/ (without `.ts`) that exports `handler`. @default the id in kebab-case */
  readonly entry?: string;
  readonly description?: string;
  /** @default 29 seconds, API Gateway's integration timeout */
  readonly timeout?: Duration;
  /** MB. @default DEFAULT_MEMORY_MB (256; the queues function: QUEUES_MEMORY_MB) */
  readonly memorySize?: number;
  /** Added to the shared environment. */
  readonly environment?: Record<string, string>;
  /** Concurrent executions reserved (and allowed at most). @default none: the account's unreserved pool */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Files copied beside the bundle's index.mjs after bundling (`to`, a file name), from the path
   * `from()` answers when bundling runs (never when a synth skips bundling).
   */
  readonly files?: readonly { from: () => string; to: string }[];
}

/**
 * API Gateway gives up on an integration after 29 s (REST API integration timeout), so an HTTP
 * function has no use for more.
 */
const HTTP_TIMEOUT = Duration.seconds(INTEGRATION_TIMEOUT_SECONDS);

export { DEFAULT_MEMORY_MB, QUEUES_MEMORY_MB };
/** Memory of the HTTP functions that differ from {@link DEFAULT_MEMORY_MB}, by handler group. */
const HTTP_MEMORY_MB: Partial<Record<HandlerGroup, number>> = { queues: QUEUES_MEMORY_MB };
/** The portal page's index.html beside the portalPage function's bundle. */
const PORTAL_INDEX_FILE = 'portal-index.html';

/** Adds copies of `files` to the bundling's afterBundling commands. */
function withFiles(o: ReturnType<typeof lazyModuleOptions>, files: readonly { from: () => string; to: string }[]): ReturnType<typeof lazyModuleOptions> {
  if (!files.length) return o;
  const q = (s: string) => `"${s.replace(/(["\\$`])/g, '\\$1')}"`;
  const before = o.bundling.commandHooks;
  const copy = (inputDir: string, outputDir: string) => [
    ...(before?.afterBundling(inputDir, outputDir) ?? []),
    ...files.map((f) => `cp ${q(f.from())} ${q(join(outputDir, f.to))}`),
  ];
  return { ...o, bundling: { ...o.bundling, commandHooks: { beforeBundling: () => [], beforeInstall: () => [], afterBundling: copy } } };
}

/** The directory above `from` that holds lambda/handlers (the repository root). */
function findProjectRoot(from: string): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'lambda', 'handlers'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no lambda/handlers directory above ${from}: run cdk from the repository`);
  }
}

const kebab = (id: string) => id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export class Functions extends Construct {
  /** The function of each handler group of the route table. */
  readonly http = new Map<HandlerGroup, NodejsFunction>();
  readonly authorizer: NodejsFunction;
  /** Answers the portal page with its namespace's headers (lambda/handlers/portal-page.ts). */
  readonly portalPage: NodejsFunction;
  /** Every function created by this construct, by id. */
  readonly all = new Map<FunctionId, NodejsFunction>();
  /**
   * Encrypts webhook secrets at rest (envelope encryption, lambda/core/adapters/data-keys.ts): kept
   * when the stack is deleted, since without it no stored secret opens again.
   */
  readonly secretsKey: Key;

  /** The repository root, which holds lambda/ (handlers, the workflow's ASL file). */
  readonly projectRoot: string;
  private readonly props: FunctionsProps;
  private readonly handlersDir: string;
  private readonly environment: Record<string, string>;

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    this.props = props;
    this.projectRoot = props.projectRoot ?? findProjectRoot(process.cwd());
    this.handlersDir = join(this.projectRoot, 'lambda', 'handlers');
    this.environment = {
      ...Object.fromEntries(
        Object.values(TABLES).map((t) => [t.envVar, props.tables.byId[t.id].tableName]),
      ),
      POWERTOOLS_SERVICE_NAME: props.serviceName ?? 'messaging',
      POWERTOOLS_METRICS_NAMESPACE: props.metricsNamespace ?? 'Messaging',
      // DESIGN.md section 9: webhook targets on private addresses are refused in AWS.
      MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS: 'false',
      MSG_MAX_LONG_POLL_SECONDS: String(MAX_LONG_POLL_SECONDS),
      MSG_ACCOUNT_CONCURRENCY: String(props.accountConcurrency ?? DEFAULT_ACCOUNT_CONCURRENCY),
      ...(props.baseDomain ? { MSG_BASE_DOMAIN: props.baseDomain } : {}),
      ...(props.endpointTemplate ? { MSG_ENDPOINT_TEMPLATE: props.endpointTemplate } : {}),
    };

    const admins = props.secretsKeyAdmins ?? [];
    for (const arn of admins) {
      if (!IAM_PRINCIPAL_ARN.test(arn)) throw new Error(`secretsKeyAdmins: ${arn} is not an IAM role or user ARN (arn:aws:iam::<account>:role/<name>); the account root is refused, it would let any IAM policy of the account use the key`);
    }
    this.secretsKey = new Key(this, 'SecretsKey', {
      description: 'Encrypts webhook signing secrets, header values and client keys at rest (data keys per Lambda container)',
      enableKeyRotation: true,
      // Not CDK's default policy: it gives the account root kms:*, and a key policy that allows the
      // account lets IAM policies grant any use of the key, so any principal of the account allowed
      // kms:Decrypt on * (plus a table read) could open every secret
      // (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html#key-policy-default-allow-root-enable-iam).
      // This policy names its administrators here and each function role that uses the key (add()).
      // The CloudFormation role must be one of them: CreateKey refuses a policy that would not let
      // its caller call PutKeyPolicy later (https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateKey.html,
      // BypassPolicyLockoutSafetyCheck), and stack updates of the key run as that role.
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'KeyAdministrators',
            principals: [new ArnPrincipal(deploymentRoleArn(this)), ...admins.map((a) => new ArnPrincipal(a))],
            actions: KEY_ADMIN_ACTIONS,
            resources: ['*'],
          }),
        ],
      }),
      // Like the tables whose items it encrypts: kept on delete and replacement of an established
      // stack (the sealed secrets would be unreadable without it), removed by the rollback of the
      // deploy that created it, and with removalPolicy destroy (dev stacks).
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    });

    for (const group of handlerGroups(props.routes ?? ROUTES)) {
      this.http.set(group, this.add(group, { description: `HTTP endpoints of the ${group} group`, memorySize: HTTP_MEMORY_MB[group] }));
    }
    this.authorizer = this.add('authorizer', {
      description: 'API Gateway REQUEST authorizer: API key → namespace and scopes',
      timeout: Duration.seconds(10),
    });
    // The console's built index.html travels in the bundle: the page the function answers.
    this.portalPage = this.add('portalPage', {
      description: "The portal page: the console's index.html with its namespace's CSP frame-ancestors",
      timeout: Duration.seconds(10),
      memorySize: 128,
      environment: { MSG_PORTAL_INDEX_FILE: PORTAL_INDEX_FILE },
      files: [{ from: () => join(builtConsoleDir(join(this.projectRoot, 'console', 'dist')), 'index.html'), to: PORTAL_INDEX_FILE }],
    });
  }

  /**
   * Creates the function `id` from lambda/handlers/<entry>.ts with the shared settings, its own
   * log group and role, and the table grants of `TABLE_ACCESS[id]`.
   */
  add(id: FunctionId, options: FunctionOptions = {}): NodejsFunction {
    if (this.all.has(id)) throw new Error(`function ${id} already exists`);
    const name = pascal(id);
    const logGroup = new LogGroup(this, `${name}Logs`, {
      retention: this.props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: this.props.removalPolicy ?? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    });
    // Our own role instead of AWSLambdaBasicExecutionRole: it may write to this log group only.
    const role = new Role(this, `${name}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${id} function`,
    });
    logGroup.grantWrite(role);

    const lazy = withFiles(lazyModuleOptions(id, bundlingOptions(this.props.awsSdk)), options.files ?? []);
    const fn = new NodejsFunction(this, name, {
      entry: join(this.handlersDir, `${options.entry ?? kebab(id)}.ts`),
      handler: 'handler',
      description: options.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: options.memorySize ?? DEFAULT_MEMORY_MB,
      reservedConcurrentExecutions: options.reservedConcurrentExecutions,
      timeout: options.timeout ?? HTTP_TIMEOUT,
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      environment: {
        ...this.environment,
        ...(SECRETS_KEY_ACCESS[id] ? { MSG_SECRETS_KMS_KEY_ARN: this.secretsKey.keyArn } : {}),
        ...lazy.environment,
        ...options.environment,
      },
      bundling: lazy.bundling,
    });

    this.grantTables(id, role);
    const kms = SECRETS_KEY_ACCESS[id];
    if (kms) {
      // Data keys of webhook secrets only (https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html#conditions-kms-encryption-context).
      const conditions = { StringEquals: Object.fromEntries(Object.entries(ENCRYPTION_CONTEXT).map(([k, v]) => [`kms:EncryptionContext:${k}`, v])) };
      role.addToPolicy(new PolicyStatement({ actions: kms, resources: [this.secretsKey.keyArn], conditions }));
      // The key policy names the role too: without the account root in it, IAM policies alone
      // grant nothing on the key (`*` in a key policy is this key).
      this.secretsKey.addToResourcePolicy(new PolicyStatement({ sid: `Use${name}`, principals: [new ArnPrincipal(role.roleArn)], actions: kms, resources: ['*'], conditions }));
    }
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Tracing.ACTIVE grants xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions (Resource must be *).',
    });
    Validations.of(fn).acknowledge({
      id: 'AwsSolutions-L1',
      reason: 'Node.js 22 is the runtime the service is built and tested for (DESIGN.md section 1, package.json devDependency node@22); moving to a newer runtime is a deliberate upgrade of the whole project.',
    });
    this.all.set(id, fn);
    return fn;
  }

  /**
   * Exactly the DynamoDB actions the function's code calls (lib/table-access.ts DYNAMODB_ACTIONS)
   * on each table it may use, as far as the table's access level allows, and Query on the indexes
   * it queries (INDEX_QUERIES), each by name. No grant*Data: those add Scan, DescribeTable,
   * ConditionCheckItem and the stream actions, which nothing here calls.
   */
  private grantTables(id: FunctionId, role: Role) {
    for (const [tableId, access] of Object.entries(TABLE_ACCESS[id]) as [TableId, TableAccess][]) {
      const actions = tableActions(id, access);
      if (actions.length === 0) continue;
      role.addToPolicy(new PolicyStatement({ actions, resources: [this.props.tables.byId[tableId].tableArn] }));
    }
    for (const [tableId, indexes] of Object.entries(INDEX_QUERIES[id] ?? {}) as [TableId, string[]][]) {
      const declared = [...(TABLES[tableId].globalIndexes ?? []), ...(TABLES[tableId].localIndexes ?? [])].map((i) => i.indexName);
      const unknown = indexes.filter((ix) => !declared.includes(ix));
      if (unknown.length) throw new Error(`INDEX_QUERIES.${id}: the ${tableId} table has no index ${unknown.join(', ')}`);
      const access = TABLE_ACCESS[id][tableId];
      if (!access || !tableActions(id, access).includes('dynamodb:Query')) {
        throw new Error(`INDEX_QUERIES.${id}: querying the ${tableId} table needs read access in TABLE_ACCESS and dynamodb:Query in DYNAMODB_ACTIONS`);
      }
      const arn = this.props.tables.byId[tableId].tableArn;
      role.addToPolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources: indexes.map((ix) => `${arn}/index/${ix}`) }));
    }
  }
}

/**
 * The role CloudFormation deploys the stack with: the CDK bootstrap's CloudFormation execution
 * role (`cdk-<qualifier>-cfn-exec-role-<account>-<region>`), with `${AWS::...}` placeholders for an
 * environment-agnostic stack.
 */
function deploymentRoleArn(scope: Construct): string {
  const synthesizer = Stack.of(scope).synthesizer;
  if (!(synthesizer instanceof DefaultStackSynthesizer)) {
    throw new Error('the secrets key policy names the CloudFormation execution role of the DefaultStackSynthesizer (cdk bootstrap); another synthesizer needs its deploy role added here');
  }
  return Fn.sub(synthesizer.cloudFormationExecutionRoleArn);
}

