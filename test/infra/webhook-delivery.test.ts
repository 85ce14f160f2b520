/**
 * The webhook delivery construct on its own (beside the tables it needs): queue and DLQ with SSE
 * and TLS only, the event source with partial batch failures, the state machine from the ASL file
 * with the attempt function substituted, least-privilege grants, alarms, and cdk-nag clean.
 */
import { DELIVERY_BATCH_SIZE, DELIVERY_BATCHING_WINDOW_SECONDS } from '../../lambda/webhooks/storage/delivery-queue';
import { DELIVERY_QUEUE_PLACEHOLDER, SQS_SEND_RESOURCE, webhookRetryAslPath } from '../../lambda/webhooks/workflows/definition';
import { readFileSync } from 'node:fs';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Functions } from '../../lib/constructs/functions';
import { Tables } from '../../lib/constructs/tables';
import { WebhookDelivery } from '../../lib/constructs/webhook-delivery';

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new Stack(app, 'WebhookTest');
const tables = new Tables(stack, 'Tables', {});
const delivery = new WebhookDelivery(stack, 'Webhooks', { functions: new Functions(stack, 'Functions', { tables }) });
const publisher = new LambdaFunction(stack, 'Publisher', { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code: Code.fromInline('exports.handler=async()=>{}') });
delivery.allowEnqueue(publisher);
const template = Template.fromStack(stack);
const id = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as never);

/** Every IAM statement attached to the role of `fn`. */
function statementsOf(roleLogicalId: string) {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleLogicalId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
}
const actions = (roleLogicalId: string) => statementsOf(roleLogicalId).flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));

describe('WebhookDelivery', () => {
  it('encrypts both queues, refuses plain HTTP, and redrives to the DLQ after 5 receives', () => {
    template.resourceCountIs('AWS::SQS::Queue', 3);
    template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MaximumMessageSize: 1048576,
      VisibilityTimeout: 360,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [id(delivery.deadLetterQueue), 'Arn'] }, maxReceiveCount: 5 },
    });
    template.allResourcesProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
  });

  it('feeds the delivery function in batches of one SQS receive, without a batching window, with partial batch failures', () => {
    // A window may hold a quiet queue's batch for up to 20 s in AWS (lambda/webhooks/storage/delivery-queue.ts);
    // without one, a batch is at most the 10 messages of one receive.
    expect(DELIVERY_BATCH_SIZE).toBeLessThanOrEqual(10);
    expect(DELIVERY_BATCHING_WINDOW_SECONDS).toBe(0);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [id(delivery.queue), 'Arn'] },
      FunctionName: { Ref: id(delivery.deliveryFunction) },
      BatchSize: DELIVERY_BATCH_SIZE,
      MaximumBatchingWindowInSeconds: Match.absent(),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('runs a quarter of the account\'s Lambda concurrency of delivery batches by default, and gives one namespace a quarter of the jobs they hold', () => {
    // 250 of the default 1,000: with 200 ms receivers about 8,000 deliveries a second
    // (docs/performance.md "Webhook throughput on AWS"); half the account is for long polls.
    expect(delivery.maxConcurrency).toBe(250);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [id(delivery.queue), 'Arn'] },
      ScalingConfig: { MaximumConcurrency: 250 },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^webhook delivery'),
      Environment: { Variables: Match.objectLike({ MSG_WEBHOOK_NAMESPACE_SHARE: String((250 * DELIVERY_BATCH_SIZE) / 4) }) },
    });
  });

  it('takes the delivery concurrency from its props (and from the account\'s), within the event source\'s 2 to 1,000 and below the account', () => {
    const synth = (props: { maxConcurrency?: number; accountConcurrency?: number }) => {
      const s = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Sized');
      const d = new WebhookDelivery(s, 'Webhooks', { functions: new Functions(s, 'Functions', { tables: new Tables(s, 'Tables', {}) }), ...props });
      return { d, t: Template.fromStack(s) };
    };
    const { d, t } = synth({ maxConcurrency: 40 });
    expect(d.maxConcurrency).toBe(40);
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 40 } });
    t.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ MSG_WEBHOOK_NAMESPACE_SHARE: '100' }) } });
    expect(synth({ accountConcurrency: 3000 }).d.maxConcurrency).toBe(750);
    expect(synth({ accountConcurrency: 10 }).d.maxConcurrency).toBe(2);
    for (const bad of [{ maxConcurrency: 1 }, { maxConcurrency: 1001 }, { maxConcurrency: 2.5 }, { maxConcurrency: 500, accountConcurrency: 400 }]) {
      expect(() => synth(bad)).toThrow(/maxConcurrency/);
    }
  });

  it('builds the state machine from the ASL file with the delivery queue\'s URL substituted', () => {
    const sm = Object.values(template.findResources('AWS::StepFunctions::StateMachine'))[0];
    expect(sm.Properties.StateMachineType).toBe('STANDARD');
    expect(sm.Properties.DefinitionSubstitutions).toEqual({ [DELIVERY_QUEUE_PLACEHOLDER]: { Ref: id(delivery.queue) } });
    // DefinitionBody.fromFile ships the ASL file as an asset.
    expect(sm.Properties.DefinitionS3Location).toBeDefined();
    expect(sm.Properties.TracingConfiguration).toEqual({ Enabled: true });
    expect(sm.Properties.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: false });
  });

  it('grants least privilege: only the delivery function starts executions, the state machine only sends to the delivery queue', () => {
    const deliveryRole = id(delivery.deliveryFunction.role as never);
    const attemptRole = id(delivery.attemptFunction.role as never);
    const smRole = id(delivery.stateMachine.role as never);
    expect(actions(deliveryRole)).toEqual(expect.arrayContaining(['states:StartExecution', 'states:DescribeExecution', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:SendMessage']));
    expect(actions(attemptRole)).not.toContain('states:DescribeExecution');
    expect(actions(attemptRole)).not.toContain('states:StartExecution');
    expect(actions(attemptRole)).not.toContain('sqs:ReceiveMessage');
    expect(actions(smRole)).not.toContain('lambda:InvokeFunction');
    expect(actions(smRole)).not.toContain('dynamodb:PutItem');
    const publisherRole = id(publisher.role as never);
    // Enqueuing sends, nothing more (the queue URL comes from the environment).
    expect(actions(publisherRole).filter((a) => a.startsWith('sqs:')).sort()).toEqual(['sqs:SendMessage']);
    for (const role of [deliveryRole, attemptRole, smRole, publisherRole]) {
      expect(actions(role).some((a) => a === '*' || a.endsWith(':*'))).toBe(false);
    }
  });

  it('lets the state machine send to the delivery queue only: its one Task is the SQS integration, on the substituted queue URL', () => {
    type State = { Type: string; Resource?: string; Parameters?: Record<string, string>; Next?: string; End?: boolean };
    const asl = JSON.parse(readFileSync(webhookRetryAslPath(), 'utf8')) as { StartAt: string; States: Record<string, State> };
    const tasks = Object.values(asl.States).filter((st) => st.Type === 'Task');
    expect(tasks).toHaveLength(1);
    expect(tasks[0].Resource).toBe(SQS_SEND_RESOURCE);
    expect(tasks[0].Parameters?.QueueUrl).toBe(`\${${DELIVERY_QUEUE_PLACEHOLDER}}`);
    const sends = statementsOf(id(delivery.stateMachine.role as never)).filter((s) => [s.Action].flat().some((a) => String(a).startsWith('sqs:')));
    expect(sends.map((s) => s.Action)).toEqual(['sqs:SendMessage']);
    expect(sends.flatMap((s) => [s.Resource].flat())).toEqual([{ 'Fn::GetAtt': [id(delivery.queue), 'Arn'] }]);
  });

  it('never loops: Wait, then the Task that sends the retry job, which ends the execution', () => {
    type State = { Type: string; Next?: string; End?: boolean };
    const asl = JSON.parse(readFileSync(webhookRetryAslPath(), 'utf8')) as { StartAt: string; States: Record<string, State> };
    expect(Object.keys(asl.States)).toHaveLength(2);
    expect(asl.States[asl.StartAt].Type).toBe('Wait');
    const next = asl.States[asl.States[asl.StartAt].Next!];
    expect(next).toMatchObject({ Type: 'Task', End: true });
  });

  it('passes the queue URL and the state machine ARN through the environment', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ MSG_WEBHOOK_RETRY_STATE_MACHINE_ARN: { Ref: id(delivery.stateMachine) }, MSG_WEBHOOK_QUEUE_URL: { Ref: id(delivery.queue) }, MSG_ALLOW_PRIVATE_WEBHOOK_TARGETS: 'false' }) },
    });
    template.hasResourceProperties('AWS::Lambda::Function', { Handler: 'index.handler', Environment: { Variables: { MSG_WEBHOOK_QUEUE_URL: { Ref: id(delivery.queue) } } } });
  });

  it('ends the delivery of an execution that failed: a rule on its status changes targets the attempt function, with a DLQ', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.states'], 'detail-type': ['Step Functions Execution Status Change'], detail: { status: ['FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [{ Ref: id(delivery.stateMachine) }] } },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [id(delivery.attemptFunction), 'Arn'] }, DeadLetterConfig: { Arn: { 'Fn::GetAtt': [id(delivery.executionFailuresDeadLetterQueue), 'Arn'] } }, RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 8 }) })],
    });
  });

  it('keeps an event the attempt function failed on past Lambda\'s retries in that DLQ (an on-failure destination), not discarded', () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: id(delivery.attemptFunction) },
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [id(delivery.executionFailuresDeadLetterQueue), 'Arn'] } } },
    });
  });

  it('alarms on the DLQ depths, on failed deliveries and on failed executions', () => {
    template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 1 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'WebhookDeliveryFailures', Namespace: 'Messaging', Statistic: 'Sum' });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ExecutionsFailed', Namespace: 'AWS/States' });
    template.resourcePropertiesCountIs('AWS::Logs::MetricFilter', { FilterPattern: '{ $.message = "webhook delivery failed" }' }, 2);
  });

  it('is cdk-nag clean', () => {
    const nagApp = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const s = new Stack(nagApp, 'Nag');
    new WebhookDelivery(s, 'Webhooks', { functions: new Functions(s, 'Functions', { tables: new Tables(s, 'Tables', {}) }) });
    Validations.of(nagApp).addPlugins(new AwsSolutionsChecks(nagApp, { verbose: true }));
    const { violations } = new AwsSolutionsChecks(nagApp, { verbose: true }).validateScope(s);
    const all = violations as unknown as { ruleName: string; violatingResources: { constructPath?: string }[] }[];
    const mine = all.filter((v) => v.violatingResources.some((r) => (r.constructPath ?? '').includes('/Webhooks/')));
    expect(mine.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
  });
});
