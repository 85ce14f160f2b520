import type { CfnResource } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { handlerGroups } from '../../lambda/core/rules/routes';
import { TABLES } from '../../lambda/core/storage/tables';
import { bundlingOptions } from '../../lib/constructs/bundling';
import { DEFAULT_MEMORY_MB, QUEUES_MEMORY_MB } from '../../lib/constructs/functions';
import { defaultStack, isCdkDeployFunction, synthesize } from './stack';

const { stack, template, logicalId } = defaultStack();
const functions = [...stack.functions.all.entries()];
const props = (fn: (typeof functions)[number][1]) => template.toJSON().Resources[logicalId(fn)].Properties;

describe('Lambda functions', () => {
  it('creates every function of the stack: one per handler group of the route table, the authorizer, webhook delivery and attempt, and the sweeper', () => {
    expect([...stack.functions.http.keys()]).toEqual(handlerGroups());
    expect(stack.functions.authorizer).toBe(stack.functions.all.get('authorizer'));
    expect(new Set(stack.functions.all.keys())).toEqual(new Set([...handlerGroups(), 'authorizer', 'webhookAttempt', 'webhookDelivery', 'sweeper', 'scheduler', 'portalPage']));
    // No construct creates functions of its own: every one gets the shared settings and its
    // grants from lib/table-access.ts.
    const lambdas = stack.node.findAll().filter((c) => (c.node.defaultChild as CfnResource | undefined)?.cfnResourceType === 'AWS::Lambda::Function' && !isCdkDeployFunction(c.node.path));
    expect(lambdas).toHaveLength(stack.functions.all.size);
  });

  it.each(functions)('%s runs Node.js 22 on arm64 with active X-Ray tracing', (_id, fn) => {
    expect(props(fn)).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      Handler: 'index.handler',
    });
  });

  it.each(functions)('%s gets every table name, the Powertools settings, no private webhook targets and a long-poll cap', (_id, fn) => {
    const env = props(fn).Environment.Variables;
    for (const t of Object.values(TABLES)) expect(env[t.envVar]).toEqual({ Ref: logicalId(stack.tables.byId[t.id]) });
    expect(env).toMatchObject({
      POWERTOOLS_SERVICE_NAME: 'messaging',
      POWERTOOLS_METRICS_NAMESPACE: 'Messaging',
      MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS: 'false',
      // Long polls end before API Gateway's 29 s integration timeout.
      MSG_MAX_LONG_POLL_SECONDS: '25',
      // The long-poll bulkhead's limits derive from it (docs/aws-parity.md).
      MSG_ACCOUNT_CONCURRENCY: '1000',
    });
    expect(env.MSG_BASE_DOMAIN).toBeUndefined();
  });

  it.each(functions)('%s logs to its own log group with one month of retention', (_id, fn) => {
    const logGroup = props(fn).LoggingConfig.LogGroup;
    expect(logGroup).toEqual({ Ref: expect.any(String) });
    expect(template.toJSON().Resources[logGroup.Ref]).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 30 },
      // Kept with the stack's data, except by the rollback of the deploy that created it.
      DeletionPolicy: 'RetainExceptOnCreate',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it('gives the queues function the memory its largest consume needs with a margin (128 MB, the least Lambda has), and the other API functions 256 MB', () => {
    expect(QUEUES_MEMORY_MB).toBe(128);
    expect(props(stack.functions.http.get('queues')!).MemorySize).toBe(QUEUES_MEMORY_MB);
    for (const [group, fn] of stack.functions.http) if (group !== 'queues') expect([group, props(fn).MemorySize]).toEqual([group, DEFAULT_MEMORY_MB]);
    expect(props(stack.functions.authorizer).MemorySize).toBe(DEFAULT_MEMORY_MB);
  });

  it('keeps HTTP functions within API Gateway\'s 29 s integration timeout', () => {
    for (const fn of stack.functions.http.values()) expect(props(fn).Timeout).toBeLessThanOrEqual(29);
  });

  it('passes the base domain, log retention and removal policy from the stack props', () => {
    const { stack: s, template: t, logicalId: id } = synthesize({ baseDomain: 'msg.example.com', logRetention: 7 });
    const fn = s.functions.http.get('namespace')!;
    const p = t.toJSON().Resources[id(fn)].Properties;
    expect(p.Environment.Variables.MSG_BASE_DOMAIN).toBe('msg.example.com');
    t.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
    t.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
  });

  it('bundles with the local esbuild: minified ES module for Node 22, no Docker', () => {
    // Bundling is skipped in these tests (bundles.test.ts bundles for real).
    expect(bundlingOptions()).toMatchObject({ forceDockerBundling: false, minify: true, format: 'esm', target: 'node22' });
    expect(bundlingOptions('runtime').externalModules).toEqual(['@aws-sdk/*']);
    expect(bundlingOptions('bundled').externalModules).not.toContain('@aws-sdk/client-dynamodb');
  });

  it('bundles the AWS SDK by default: the version the lock pins and the tests run', () => {
    expect(bundlingOptions()).toEqual(bundlingOptions('bundled'));
    // Only the credential providers Lambda never reaches (its environment holds the credentials).
    expect(bundlingOptions().externalModules?.every((m) => /^@(aws-sdk|smithy)\/credential-provider-/.test(m))).toBe(true);
  });

  it('creates no function without an execution role of its own and no managed policy on it', () => {
    for (const fn of stack.functions.all.values()) {
      const role = template.toJSON().Resources[props(fn).Role['Fn::GetAtt'][0]];
      expect(role.Type).toBe('AWS::IAM::Role');
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
    template.allResourcesProperties('AWS::IAM::Role', Match.not(Match.objectLike({ RoleName: Match.anyValue() })));
  });
});
