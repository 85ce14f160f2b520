/**
 * The sweeper in the stack: an EventBridge rule runs it every minute; delivery failures and failed
 * or dropped sweeps land in one encrypted DLQ; no reserved concurrency (the handler's lease keeps
 * one sweep at a time, test/integration/sweeper-lease.test.ts); and
 * its role reaches exactly the tables its tasks touch (the per-function checks of iam.test.ts
 * cover it too: TABLE_ACCESS row, tables named by its bundle, logs and X-Ray).
 */
import { TABLE_ACCESS } from '../../lib/table-access';
import { defaultStack } from './stack';

const { stack, template, logicalId } = defaultStack();
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>;
const sweeper = stack.sweeper;
const fnId = logicalId(sweeper.function);
const dlqId = logicalId(sweeper.deadLetterQueue);
const ruleId = logicalId(sweeper.rule);

/** Policy statements on the sweeper function's role. */
function roleStatements(): { Effect: string; Action: string | string[]; Resource: unknown }[] {
  const roleId = resources[fnId].Properties.Role['Fn::GetAtt'][0];
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: { Ref: string }) => x.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
}

describe('sweeper', () => {
  it('is a function of the Functions construct running lambda/handlers/sweeper.ts', () => {
    expect(stack.functions.all.get('sweeper')).toBe(sweeper.function);
    expect(resources[fnId].Properties).toMatchObject({ Runtime: 'nodejs22.x', Handler: 'index.handler' });
  });

  it('runs for at most two minutes, without reserved concurrency (one sweep at a time is the lease in the meta table)', () => {
    expect(resources[fnId].Properties).toMatchObject({ Timeout: 120 });
    expect(resources[fnId].Properties.ReservedConcurrentExecutions).toBeUndefined();
    // The lease is a conditional write in the meta table, which the sweeper already reads and writes.
    expect(TABLE_ACCESS.sweeper.meta).toBe('readWrite');
  });

  it('is invoked every minute by an EventBridge rule with a retry policy and a DLQ', () => {
    expect(resources[ruleId].Properties).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        {
          Id: 'Target0',
          Arn: { 'Fn::GetAtt': [fnId, 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 300 },
        },
      ],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] },
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
    });
  });

  it('never retries a sweep: a failed, timed-out or long-waiting one goes to the same DLQ', () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fnId },
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [dlqId, 'Arn'] } } },
    });
    // The sweeper's, and the scheduler tick's (test/infra/scheduler.test.ts).
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::EventInvokeConfig' && JSON.stringify(r.Properties.FunctionName).includes(fnId))).toHaveLength(1);
  });

  it('has an encrypted DLQ that only EventBridge (for this rule) and the sweeper may send to, over TLS', () => {
    expect(resources[dlqId].Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    const policies = Object.values(resources).filter(
      (r) => r.Type === 'AWS::SQS::QueuePolicy' && r.Properties.Queues.some((q: unknown) => JSON.stringify(q).includes(dlqId)),
    );
    expect(policies).toHaveLength(1);
    const statements = policies[0].Properties.PolicyDocument.Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'sqs:SendMessage',
        Principal: { Service: 'events.amazonaws.com' },
        Condition: { ArnEquals: { 'aws:SourceArn': { 'Fn::GetAtt': [ruleId, 'Arn'] } } },
      }),
    );
    // Lambda's on-failure destination sends with the function's role, to this queue; the other SQS
    // statements are on the service queues (test/infra/service-queues.test.ts) and the webhook
    // delivery queue (a pending `webhooks/disabled` event it publishes may go to a webhook).
    const sqs = roleStatements().filter((s) => JSON.stringify(s.Action).includes('sqs:') && !JSON.stringify(s.Resource).includes('_q_*') && !JSON.stringify(s.Resource).includes('WebhooksQueue'));
    expect(sqs).toEqual([expect.objectContaining({ Effect: 'Allow', Resource: { 'Fn::GetAtt': [dlqId, 'Arn'] } })]);
    expect([sqs[0].Action].flat()).toContain('sqs:SendMessage');
  });

  it('reads and writes the tables its tasks touch, and no other', () => {
    expect(TABLE_ACCESS.sweeper).toEqual({ meta: 'readWrite', streamLog: 'readWrite', subscriptionLog: 'readWrite' });
    const tablesOnRole = new Set(
      roleStatements()
        .filter((s) => JSON.stringify(s.Action).includes('dynamodb:'))
        .flatMap((s) => Object.values(stack.tables.byId).filter((t) => JSON.stringify(s.Resource).includes(`"${logicalId(t)}"`)))
        .map((t) => logicalId(t)),
    );
    expect([...tablesOnRole].sort()).toEqual(
      (['meta', 'streamLog', 'subscriptionLog'] as const).map((t) => logicalId(stack.tables.byId[t])).sort(),
    );
  });
});
