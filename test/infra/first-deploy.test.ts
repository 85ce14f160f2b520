/**
 * Deployable into a fresh AWS account on the first try (docs/deploy.md): each finding that only a
 * real deploy would show, pinned on the template. The alarm topic's policy and FILL in the alarm
 * math are in alarms.test.ts; where the AWS SDK comes from in functions.test.ts; npm run preflight
 * in test/unit/preflight.test.ts.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { stackPropsFromContext } from '../../lib/deployment';
import { defaultStack, isCdkDeployFunction, synthesize, type Synthesized } from './stack';

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string; DependsOn?: string[] };
const resourcesOf = (s: Synthesized) => s.template.toJSON().Resources as Record<string, Resource>;
const ofType = (s: Synthesized, type: string) => Object.entries(resourcesOf(s)).filter(([, r]) => r.Type === type);
const fromContext = (ctx: Record<string, unknown>) => stackPropsFromContext((k) => ctx[k]);

describe('1. no reserved concurrency (a new account\'s quota of 10 refuses any reservation)', () => {
  const s = defaultStack();

  it('reserves concurrency for no function by default', () => {
    const fns = ofType(s, 'AWS::Lambda::Function').filter(([id]) => !isCdkDeployFunction(id));
    expect(fns.length).toBe(s.stack.functions.all.size);
    for (const [, fn] of fns) expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it('reserves it for the sweeper only when asked (context sweeperReservedConcurrency)', () => {
    const props = fromContext({ sweeperReservedConcurrency: '2' });
    expect(props.sweeperReservedConcurrency).toBe(2);
    const opted = synthesize(props);
    const reserved = ofType(opted, 'AWS::Lambda::Function').filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined);
    expect(reserved).toEqual([[opted.logicalId(opted.stack.sweeper.function), expect.objectContaining({ Properties: expect.objectContaining({ ReservedConcurrentExecutions: 2 }) })]]);
  });

  it.each(['0', '-1', 'one', '1.5'])('refuses sweeperReservedConcurrency=%s', (v) => {
    expect(() => fromContext({ sweeperReservedConcurrency: v })).toThrow(/sweeperReservedConcurrency/);
  });
});

describe('2. a failed first deploy leaves nothing behind; an established stack keeps its data', () => {
  const s = defaultStack();

  it('keeps no resource with a plain Retain: each is kept on delete and replacement, but removed by the rollback of the deploy that created it', () => {
    const kept = Object.entries(resourcesOf(s)).filter(([, r]) => r.DeletionPolicy && r.DeletionPolicy !== 'Delete');
    expect(kept.length).toBeGreaterThan(0);
    for (const [id, r] of kept) expect({ id, DeletionPolicy: r.DeletionPolicy, UpdateReplacePolicy: r.UpdateReplacePolicy }).toEqual({ id, DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
    const keptTypes = new Set(kept.map(([, r]) => r.Type));
    // The data, the logs, the receipt-handle signing key, the KMS key of the webhook secrets sealed
    // in the data, and the account's API Gateway logging role.
    expect(keptTypes).toEqual(new Set(['AWS::DynamoDB::Table', 'AWS::Logs::LogGroup', 'AWS::SecretsManager::Secret', 'AWS::KMS::Key', 'AWS::IAM::Role', 'AWS::ApiGateway::Account']));
  });

  it('keeps every log group (functions, API access logs, retry workflow) that way', () => {
    const groups = ofType(s, 'AWS::Logs::LogGroup');
    expect(groups.length).toBe(s.stack.functions.all.size + 2);
    for (const [, g] of groups) expect([g.DeletionPolicy, g.UpdateReplacePolicy]).toEqual(['RetainExceptOnCreate', 'Retain']);
  });

  it('keeps the tables that way, without deletion protection (which would make that rollback fail)', () => {
    for (const [, t] of ofType(s, 'AWS::DynamoDB::Table')) {
      expect([t.DeletionPolicy, t.UpdateReplacePolicy]).toEqual(['RetainExceptOnCreate', 'Retain']);
      expect(t.Properties.DeletionProtectionEnabled).toBe(false);
      // An accidental DeleteTable stays recoverable: DynamoDB keeps a PITR table's system backup 35 days.
      expect(t.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    }
  });

  it('turns deletion protection on when asked (context tableDeletionProtection), with a plain Retain', () => {
    const props = fromContext({ tableDeletionProtection: 'true' });
    expect(props.tableDeletionProtection).toBe(true);
    const protectedStack = synthesize(props);
    for (const [, t] of ofType(protectedStack, 'AWS::DynamoDB::Table')) {
      expect([t.DeletionPolicy, t.UpdateReplacePolicy, t.Properties.DeletionProtectionEnabled]).toEqual(['Retain', 'Retain', true]);
    }
    // Everything else is unchanged.
    for (const [, g] of ofType(protectedStack, 'AWS::Logs::LogGroup')) expect(g.DeletionPolicy).toBe('RetainExceptOnCreate');
  });

  it('refuses deletion protection together with removalPolicy destroy', () => {
    expect(() => fromContext({ tableDeletionProtection: true, removalPolicy: 'destroy' })).toThrow(/contradicts/);
    expect(() => synthesize({ environmentName: 'dev', removalPolicy: RemovalPolicy.DESTROY, tableDeletionProtection: true })).toThrow(/contradicts/);
  });

  it('deletes everything with removalPolicy destroy, except the account\'s API Gateway role and setting', () => {
    const dev = synthesize({ environmentName: 'dev', removalPolicy: RemovalPolicy.DESTROY });
    const kept = Object.values(resourcesOf(dev)).filter((r) => r.DeletionPolicy && r.DeletionPolicy !== 'Delete').map((r) => r.Type);
    expect(kept.sort()).toEqual(['AWS::ApiGateway::Account', 'AWS::IAM::Role']);
  });

  it('deletes the alarm topic\'s key with the stack (it only encrypted notifications in transit)', () => {
    const withEmail = synthesize({ alarmEmail: 'ops@example.com' });
    const keys = ofType(withEmail, 'AWS::KMS::Key').filter(([, k]) => (k as unknown as { Properties: { Description: string } }).Properties.Description === 'Encrypts the alarm notification topic');
    expect(keys).toHaveLength(1);
    for (const [, k] of keys) expect(k.DeletionPolicy).toBe('Delete');
  });
});

describe('5. the retry workflow logs under /aws/vendedlogs/states/', () => {
  const s = defaultStack();
  const logGroupId = s.logicalId(s.stack.node.findChild('Webhooks').node.findChild('RetryWorkflowLogs'));

  it('names its log group under the prefix, unique per stack incarnation (a kept group never blocks a new stack)', () => {
    expect(resourcesOf(s)[logGroupId].Properties.LogGroupName).toEqual({
      'Fn::Join': ['', [
        '/aws/vendedlogs/states/Messaging-RetryWorkflow-',
        { 'Fn::Select': [0, { 'Fn::Split': ['-', { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] }] }] },
      ]],
    });
  });

  it('is where the state machine sends its logs', () => {
    s.template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      LoggingConfiguration: {
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [logGroupId, 'Arn'] } } }],
        IncludeExecutionData: false,
        Level: 'ALL',
      },
    });
  });
});

describe('6. the API Gateway account role is a setting', () => {
  it('creates the role and sets it on the account by default, before the stage that logs through it', () => {
    const s = defaultStack();
    const [[accountId, account]] = ofType(s, 'AWS::ApiGateway::Account');
    const roleId = account.Properties.CloudWatchRoleArn['Fn::GetAtt'][0];
    expect(resourcesOf(s)[roleId]).toMatchObject({
      Type: 'AWS::IAM::Role',
      Properties: { AssumeRolePolicyDocument: { Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' } }] } },
    });
    expect(resourcesOf(s)[s.logicalId(s.stack.api.restApi.deploymentStage)].DependsOn).toContain(accountId);
    expect(fromContext({}).apiGatewayCloudWatchRole).toBeUndefined();
  });

  it.each([['false', false], [false, false], ['true', true], ['TRUE', true]])('reads apiGatewayCloudWatchRole=%j', (v, expected) => {
    expect(fromContext({ apiGatewayCloudWatchRole: v }).apiGatewayCloudWatchRole).toBe(expected);
  });

  it('refuses a value that is not true or false', () => {
    expect(() => fromContext({ apiGatewayCloudWatchRole: 'no' })).toThrow(/apiGatewayCloudWatchRole must be true or false/);
  });

  it('leaves the account\'s existing role alone when off, and stays clean under cdk-nag', () => {
    const s = synthesize(fromContext({ apiGatewayCloudWatchRole: 'false' }));
    s.template.resourceCountIs('AWS::ApiGateway::Account', 0);
    expect(ofType(s, 'AWS::IAM::Role').filter(([, r]) => JSON.stringify(r.Properties).includes('apigateway.amazonaws.com'))).toEqual([]);
    // Execution logging stays on: it uses the role the account already has (npm run preflight checks).
    s.template.hasResourceProperties('AWS::ApiGateway::Stage', { MethodSettings: Match.arrayWith([Match.objectLike({ ResourcePath: '/*', LoggingLevel: 'ERROR' })]) });
    const { violations } = new AwsSolutionsChecks(s.app, { verbose: true }).validateScope(s.stack);
    expect(violations.map((v) => v.ruleName)).toEqual([]);
  });
});
