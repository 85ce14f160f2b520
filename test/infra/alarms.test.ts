/**
 * The alarms (lib/constructs/dashboard.ts, thresholds in alarm-thresholds.ts) and where they notify (lib/constructs/alarm-topic.ts):
 * each alarm watches what its description says, its metric math can actually fire (FILL around
 * every operand; evaluated with the model of test/infra/metric-math.ts), no
 * alarm exceeds CloudWatch's 10 metrics per math alarm, and with alarmEmail every alarm notifies a
 * topic CloudWatch is allowed to publish to (docs/operate.md).
 */
import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { METRIC } from '../../lambda/core/rules/metric-names';
import { TABLES, type TableId } from '../../lambda/core/storage/tables';
import {
  DELIVERY_FAILURE_RATE_PERCENT, DYNAMO_THROTTLE_THRESHOLD, failureRateExpression, filled, FUNCTION_ERRORS_PERIODS, MAX_ALARM_METRICS,
  QUEUE_AGE_THRESHOLD_SECONDS, WEBHOOK_LAG_THRESHOLD_SECONDS,
} from '../../lib/constructs/alarm-thresholds';
import { evaluate, referencedIds } from './metric-math';
import { defaultStack, serviceFunctionResources, synthesize, type Synthesized } from './stack';

interface MetricQuery {
  Id: string;
  Expression?: string;
  ReturnData?: boolean;
  MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] }; Stat: string; Period: number };
}
interface AlarmResource {
  Properties: Record<string, unknown> & { Metrics?: MetricQuery[]; AlarmActions?: unknown[]; OKActions?: unknown[] };
}

const alarmsOf = (s: Synthesized) => Object.values(s.template.findResources('AWS::CloudWatch::Alarm')) as AlarmResource[];
const mathAlarms = (s: Synthesized) => alarmsOf(s).filter((a) => a.Properties.Metrics);
/** The expression an alarm watches (the query with ReturnData true). */
const watched = (a: AlarmResource) => a.Properties.Metrics!.find((m) => m.ReturnData !== false && m.Expression)!.Expression!;
const metricStats = (a: AlarmResource) => a.Properties.Metrics!.filter((m) => m.MetricStat);

describe('alarms', () => {
  const s = defaultStack();

  it('alarms on the API 5xx rate', () => {
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway', MetricName: '5XXError', Statistic: 'Average', Threshold: 0.01, ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms on the errors of every function in M of N five-minute periods, not on one bad invocation', () => {
    const fnCount = Object.keys(serviceFunctionResources(s.template)).length;
    const errors = alarmsOf(s).filter((a) => a.Properties.MetricName === 'Errors' && a.Properties.Namespace === 'AWS/Lambda');
    expect(errors).toHaveLength(fnCount);
    expect(FUNCTION_ERRORS_PERIODS.datapointsToAlarm).toBeLessThan(FUNCTION_ERRORS_PERIODS.evaluationPeriods);
    for (const a of errors) {
      expect(a.Properties).toMatchObject({
        Period: 300,
        Statistic: 'Sum',
        Threshold: 1,
        DatapointsToAlarm: FUNCTION_ERRORS_PERIODS.datapointsToAlarm,
        EvaluationPeriods: FUNCTION_ERRORS_PERIODS.evaluationPeriods,
      });
    }
  });

  it('alarms on the depth of the webhook and sweeper DLQs', () => {
    const dlqAlarms = alarmsOf(s).filter((a) => a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible');
    // The dashboard's alarm per DLQ, plus the webhook construct's own on its DLQ.
    expect(dlqAlarms.length).toBeGreaterThanOrEqual(3);
  });

  it('alarms on webhook lag: the age of the oldest job in the delivery queue', () => {
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [s.logicalId(s.stack.webhooks.queue), 'QueueName'] } }],
      Statistic: 'Maximum',
      Threshold: WEBHOOK_LAG_THRESHOLD_SECONDS,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 2,
      TreatMissingData: 'notBreaching',
    });
  });

  describe('DynamoDB throttles', () => {
    const tableOf = (a: AlarmResource) => {
      const refs = new Set(metricStats(a).map((m) => JSON.stringify(m.MetricStat!.Metric.Dimensions!.find((d) => d.Name === 'TableName')!.Value)));
      return refs.size === 1 ? [...refs][0] : undefined;
    };
    const throttleAlarms = () => mathAlarms(s).filter((a) => metricStats(a).some((m) => m.MetricStat!.Metric.MetricName.endsWith('ThrottleEvents')));

    it.each(Object.values(TABLES).map((t) => [t.id, t]))('alarms on the %s table and each of its global secondary indexes, reads and writes', (id) => {
      const ref = JSON.stringify({ Ref: s.logicalId(s.stack.tables.byId[id as TableId]) });
      const alarm = throttleAlarms().find((a) => tableOf(a) === ref);
      expect(alarm).toBeDefined();
      const indexes = (TABLES[id as TableId].globalIndexes ?? []).map((i) => i.indexName);
      const series = metricStats(alarm!).map((m) => {
        const index = m.MetricStat!.Metric.Dimensions!.find((d) => d.Name === 'GlobalSecondaryIndexName')?.Value;
        return `${index ?? 'table'} ${m.MetricStat!.Metric.MetricName} ${m.MetricStat!.Stat}`;
      });
      expect(series.sort()).toEqual(
        ['table', ...indexes].flatMap((x) => [`${x} ReadThrottleEvents Sum`, `${x} WriteThrottleEvents Sum`]).sort(),
      );
      expect(alarm!.Properties).toMatchObject({ Threshold: DYNAMO_THROTTLE_THRESHOLD, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
      expect(watched(alarm!)).toBe(filled(metricStats(alarm!).map((m) => m.Id)));
    });

    it('covers the meta table\'s resourcesByKind index and the delivery log\'s attemptsByTime index (dimension GlobalSecondaryIndexName)', () => {
      const indexed = throttleAlarms().flatMap(metricStats).filter((m) => m.MetricStat!.Metric.Dimensions!.some((d) => d.Name === 'GlobalSecondaryIndexName'));
      const names = indexed.map((m) => m.MetricStat!.Metric.Dimensions!.find((d) => d.Name === 'GlobalSecondaryIndexName')!.Value);
      // A delivery log index throttled by one webhook's attempts (lambda/webhooks/rules/delivery-log.ts LOG_SHARDS) shows here.
      expect(names.sort()).toEqual(['attemptsByTime', 'attemptsByTime', 'due', 'due', 'resourcesByKind', 'resourcesByKind']);
    });

    it('fires on read throttles alone, which the unFILLed sum never did', () => {
      const alarm = throttleAlarms()[0];
      const ids = metricStats(alarm).map((m) => m.Id);
      // Writes did not throttle: DynamoDB publishes no WriteThrottleEvents datapoint at all.
      const onlyReads = { [ids[0]]: DYNAMO_THROTTLE_THRESHOLD + 2 };
      expect(evaluate(ids.join(' + '), onlyReads)).toBeUndefined();
      expect(evaluate(watched(alarm), onlyReads)).toBe(DYNAMO_THROTTLE_THRESHOLD + 2);
      expect(evaluate(watched(alarm), {})).toBe(0);
    });
  });

  describe('webhook failure rate', () => {
    const alarm = () => mathAlarms(s).find((a) => metricStats(a).some((m) => m.MetricStat!.Metric.MetricName === METRIC.webhookFailed))!;

    it('watches FILLed EMF counts of ended deliveries', () => {
      expect(watched(alarm())).toBe(failureRateExpression(10));
      expect(watched(alarm())).toBe('IF(FILL(ok, 0) + FILL(failed, 0) >= 10, 100 * FILL(failed, 0) / (FILL(ok, 0) + FILL(failed, 0)), 0)');
      const byId = Object.fromEntries(metricStats(alarm()).map((m) => [m.Id, m.MetricStat!.Metric]));
      expect(byId.ok).toMatchObject({ Namespace: 'Messaging', MetricName: METRIC.webhookDelivered });
      expect(byId.failed).toMatchObject({ Namespace: 'Messaging', MetricName: METRIC.webhookFailed });
      expect(alarm().Properties).toMatchObject({ Threshold: DELIVERY_FAILURE_RATE_PERCENT, ComparisonOperator: 'GreaterThanThreshold' });
    });

    it.each([
      ['every delivery failing (no successes: no `ok` datapoint)', { failed: 12 }, 100],
      ['a quarter failing', { ok: 30, failed: 10 }, 25],
      ['too few ended to judge', { ok: 1, failed: 3 }, 0],
      ['all delivered (no `failed` datapoint)', { ok: 50 }, 0],
      ['nothing ended', {}, 0],
    ])('yields a rate with %s', (_case, datapoints, rate) => {
      expect(evaluate(watched(alarm()), datapoints)).toBe(rate);
    });

    it('would never have fired on total failure without FILL', () => {
      expect(evaluate('IF(ok + failed >= 10, 100 * failed / (ok + failed), 0)', { failed: 12 })).toBeUndefined();
    });
  });

  it("alarms when the oldest message of the stack's SQS queues has waited over an hour, through one Metrics Insights query over the prefix", () => {
    const [age] = mathAlarms(s).filter((a) => watched(a).includes('ApproximateAgeOfOldestMessage'));
    expect(watched(age)).toBe(`SELECT MAX(ApproximateAgeOfOldestMessage) FROM SCHEMA("AWS/SQS", QueueName) WHERE QueueName LIKE 'Messaging_q_%'`);
    // A Metrics Insights alarm needs the period on its query and returns one series.
    expect(age.Properties.Metrics).toEqual([expect.objectContaining({ Period: 300, ReturnData: true })]);
    expect(age.Properties).toMatchObject({ Threshold: QUEUE_AGE_THRESHOLD_SECONDS, EvaluationPeriods: 2, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
  });

  it('FILLs every metric an alarm expression adds up, in every math alarm of the stack', () => {
    for (const a of mathAlarms(s)) {
      const expression = watched(a);
      for (const id of metricStats(a).map((m) => m.Id)) {
        expect({ expression, id, bare: referencedIds(expression.replace(new RegExp(`FILL\\(${id}, 0\\)`, 'g'), '')).includes(id) }).toEqual({ expression, id, bare: false });
      }
    }
  });

  it(`keeps every alarm within CloudWatch's ${MAX_ALARM_METRICS} metrics per metric math alarm (a hard limit: the deploy fails above it)`, () => {
    for (const a of mathAlarms(s)) expect(metricStats(a).length).toBeLessThanOrEqual(MAX_ALARM_METRICS);
  });

  it('has no notification topic and no alarm actions without alarmEmail', () => {
    s.template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const a of alarmsOf(s)) expect(a.Properties.AlarmActions).toBeUndefined();
  });
});

describe('with alarmEmail', () => {
  const withEmail = synthesize({ alarmEmail: 'ops@example.com' });
  const topicId = withEmail.logicalId(withEmail.stack.dashboard.alarmTopic!);
  const topicPolicy = () => {
    const [policy] = Object.values(withEmail.template.findResources('AWS::SNS::TopicPolicy')) as { Properties: { Topics: unknown[]; PolicyDocument: { Statement: any[] } } }[];
    expect(policy.Properties.Topics).toEqual([{ Ref: topicId }]);
    return policy.Properties.PolicyDocument.Statement;
  };
  const fromOurAlarms = {
    StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
    ArnLike: { 'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':alarm:*']] } },
  };

  it('subscribes the address to an encrypted topic that every alarm notifies, on alarm and on recovery', () => {
    withEmail.template.resourceCountIs('AWS::SNS::Topic', 1);
    withEmail.template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    withEmail.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topicId } });
    const all = alarmsOf(withEmail);
    expect(all.length).toBeGreaterThan(0);
    for (const a of all) {
      expect(a.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(a.Properties.OKActions).toEqual([{ Ref: topicId }]);
    }
  });

  it('lets CloudWatch alarms of this account and region publish to the topic (enforceSSL replaced SNS\'s default policy)', () => {
    expect(topicPolicy()).toContainEqual({
      Sid: 'AllowCloudWatchAlarmsToPublish',
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
      Resource: { Ref: topicId },
      Condition: fromOurAlarms,
    });
  });

  it('still refuses publishing without TLS', () => {
    expect(topicPolicy()).toContainEqual(expect.objectContaining({
      Effect: 'Deny',
      Action: 'sns:Publish',
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    }));
  });

  it('lets CloudWatch use the topic\'s key under the same conditions, and deletes the key with the stack', () => {
    // The topic's own key (the stack's other key encrypts webhook secrets: docs/security.md).
    const keys = withEmail.template.findResources('AWS::KMS::Key', { Properties: { Description: 'Encrypts the alarm notification topic' } });
    expect(Object.values(keys)).toHaveLength(1);
    const [key] = Object.values(keys) as { DeletionPolicy: string; Properties: { EnableKeyRotation: boolean; PendingWindowInDays: number; KeyPolicy: { Statement: any[] } } }[];
    expect(key).toMatchObject({ DeletionPolicy: 'Delete', Properties: { EnableKeyRotation: true, PendingWindowInDays: 7 } });
    expect(key.Properties.KeyPolicy.Statement).toContainEqual(expect.objectContaining({
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      Condition: fromOurAlarms,
    }));
  });

  it('stays clean under cdk-nag', () => {
    const { violations } = new AwsSolutionsChecks(withEmail.app, { verbose: true }).validateScope(withEmail.stack);
    expect(violations.map((v) => v.ruleName)).toEqual([]);
  });
});
