/**
 * The scheduler tick in the stack (docs/design/0016-schedule-runs.md): its own function on an
 * EventBridge rule every minute with a DLQ, least-privilege grants (exactly its TABLE_ACCESS row,
 * SendMessage on the service queues and the delivery queue), a lag alarm, dashboard widgets, and
 * the scheduler table with its sparse KEYS_ONLY due index.
 */
import { TABLE_ACCESS, SERVICE_QUEUE_ACCESS } from '../../lib/table-access';
import { METRIC } from '../../lambda/core/rules/metric-names';
import { LAG_ALARM_SECONDS } from '../../lib/constructs/scheduler';
import { actions, defaultStack, synthesize } from './stack';
import { SCHEDULER_MEMORY_MB } from '../../lib/function-memory';
import { TICK_TASKS_VISIBILITY_SECONDS, TICK_WORKERS } from '../../lambda/schedules/storage/tick-tasks';
import { DUE_SHARDS } from '../../lambda/core/rules/delays';

const { stack, template, logicalId, statementsOf } = defaultStack();
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>;
const scheduler = stack.scheduler;
const fnId = logicalId(scheduler.function);
const dlqId = logicalId(scheduler.deadLetterQueue);
const ruleId = logicalId(scheduler.rule);

describe('scheduler tick', () => {
  it('is its own function of the Functions construct, invoked every minute by an EventBridge rule with retries and a DLQ', () => {
    expect(stack.functions.all.get('scheduler')).toBe(scheduler.function);
    expect(resources[fnId].Properties).toMatchObject({ Runtime: 'nodejs22.x', Timeout: 60 });
    expect(resources[ruleId].Properties).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [{ Arn: { 'Fn::GetAtt': [fnId, 'Arn'] }, DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlqId, 'Arn'] } }, RetryPolicy: { MaximumRetryAttempts: 2 } }],
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fnId },
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [dlqId, 'Arn'] } } },
    });
  });

  it('reaches only what its row grants: the scheduler table, meta and the logs (no idempotency, no delivery log)', () => {
    expect(TABLE_ACCESS.scheduler).toEqual({ meta: 'readWrite', streamLog: 'readWrite', subscriptionLog: 'readWrite', scheduler: 'readWrite' });
    expect(SERVICE_QUEUE_ACCESS.scheduler).toEqual(['sqs:SendMessage']);
    const statements = statementsOf('scheduler');
    const all = statements.flatMap(actions);
    expect(all).not.toContain('sqs:DeleteQueue');
    // It receives its shard tasks only (the event source's statement), on their queue only.
    const tasksId = logicalId(scheduler.tasksQueue);
    for (const s of statements.filter((x) => actions(x).some((a) => a === 'sqs:ReceiveMessage' || a === 'sqs:DeleteMessage'))) expect(s.Resource).toEqual({ 'Fn::GetAtt': [tasksId, 'Arn'] });
    expect(all).not.toContain('states:StartExecution');
    const tableRefs = JSON.stringify(statements.filter((s) => actions(s).some((a) => a.startsWith('dynamodb:'))).map((s) => s.Resource));
    expect(tableRefs).toContain(logicalId(stack.tables.byId.scheduler));
    expect(tableRefs).not.toContain(logicalId(stack.tables.byId.idempotency));
    expect(tableRefs).not.toContain(logicalId(stack.tables.byId.deliveryLog));
    // It enqueues webhook deliveries of held messages.
    expect(JSON.stringify(statements)).toContain(logicalId(stack.webhooks.queue));
  });

  it('scales out: its tick sends shard tasks to a queue that the same function consumes, at most TICK_WORKERS at once, one task an invocation, with 1,769 MB', () => {
    const tasksId = logicalId(scheduler.tasksQueue);
    expect(resources[fnId].Properties).toMatchObject({ MemorySize: SCHEDULER_MEMORY_MB });
    expect(SCHEDULER_MEMORY_MB).toBe(1769);
    expect(resources[fnId].Properties.Environment.Variables.MSG_TICK_TASKS_QUEUE_URL).toEqual({ Ref: tasksId });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId },
      EventSourceArn: { 'Fn::GetAtt': [tasksId, 'Arn'] },
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: TICK_WORKERS },
    });
    expect(TICK_WORKERS).toBe(DUE_SHARDS);
    // The visibility timeout at least the function's timeout (AWS refuses the mapping otherwise); a
    // task that failed twice goes to the tick's DLQ; encrypted, TLS only.
    expect(resources[tasksId].Properties).toMatchObject({
      VisibilityTimeout: TICK_TASKS_VISIBILITY_SECONDS,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 2 },
    });
    expect(TICK_TASKS_VISIBILITY_SECONDS).toBeGreaterThanOrEqual(resources[fnId].Properties.Timeout);
    // It may send to the tasks queue (SendMessage on it alone among its statements naming it).
    const statements = statementsOf('scheduler');
    const naming = statements.filter((x) => JSON.stringify(x.Resource).includes(tasksId));
    expect(naming.flatMap(actions).sort()).toEqual(expect.arrayContaining(['sqs:SendMessage', 'sqs:ReceiveMessage', 'sqs:DeleteMessage']));
    expect(naming.flatMap(actions)).not.toContain('sqs:PurgeQueue');
    expect(naming.flatMap(actions)).not.toContain('sqs:*');
  });

  /** The EMF namespace and `service` dimension the tick function writes its metrics under. */
  const emfOf = () => {
    const env = resources[fnId].Properties.Environment.Variables as Record<string, string>;
    return { namespace: env.POWERTOOLS_METRICS_NAMESPACE, service: env.POWERTOOLS_SERVICE_NAME };
  };

  it('alarms when a handover or run is more than 60 s late in two minutes running, or no tick reports, on the metric the tick writes', () => {
    const { namespace, service } = emfOf();
    expect(namespace).toBeTruthy();
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: namespace,
      MetricName: METRIC.schedulerLag,
      Dimensions: [{ Name: 'service', Value: service }],
      Statistic: 'Maximum',
      Period: 60,
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
      Threshold: LAG_ALARM_SECONDS,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'breaching',
    });
    expect(LAG_ALARM_SECONDS).toBe(60);
  });

  it('notifies the alarm topic with alarmEmail, and shows the lag alarm in the dashboard\'s alarm status widget', () => {
    const withEmail = synthesize({ alarmEmail: 'ops@example.com' });
    const alarm = withEmail.template.toJSON().Resources[withEmail.logicalId(withEmail.stack.scheduler.lagAlarm)] as { Properties: Record<string, unknown> };
    const topic = { Ref: withEmail.logicalId(withEmail.stack.dashboard.alarmTopic!) };
    expect(alarm.Properties).toMatchObject({ AlarmActions: [topic], OKActions: [topic] });
    const body = JSON.stringify(resources[logicalId(stack.dashboard.dashboard)].Properties.DashboardBody);
    expect(body).toContain(logicalId(scheduler.lagAlarm));
  });

  it('adds its widgets to the dashboard: handovers, drops, runs and refused runs per minute, and the lag against the alarm line', () => {
    const { namespace, service } = emfOf();
    const body = JSON.stringify(resources[logicalId(stack.dashboard.dashboard)].Properties.DashboardBody);
    expect(body).toContain('Scheduler: held messages and schedule runs per minute');
    expect(body).toContain('Scheduler: lag of the latest handover or run (s)');
    for (const name of [METRIC.delayedHandedOver, METRIC.delayedDropped, METRIC.scheduleRuns, METRIC.scheduleRunsRefused, METRIC.schedulerLag]) {
      // Each widget metric is [namespace, name, "service", service, {...}] in the dashboard body.
      expect(body).toContain(`[\\"${namespace}\\",\\"${name}\\",\\"service\\",\\"${service}\\"`);
    }
    expect(body).toContain(`\\"value\\":${LAG_ALARM_SECONDS}`);
    expect(scheduler.widgets).toHaveLength(2);
  });

  it('has the scheduler table with a KEYS_ONLY due index', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [{ IndexName: 'due', Projection: { ProjectionType: 'KEYS_ONLY' }, KeySchema: [{ AttributeName: 'due_shard', KeyType: 'HASH' }, { AttributeName: 'due_sk', KeyType: 'RANGE' }] }],
    });
  });
});
