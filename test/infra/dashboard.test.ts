/**
 * Monitoring (lib/constructs/dashboard.ts): the dashboard's widgets and metrics, the alarms and
 * their optional encrypted SNS topic, active tracing on every function, and log retention on every
 * log group.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { METRIC } from '../../lambda/domain/metric-names';
import { TABLES } from '../../lambda/storage/tables';
import { WIDGET } from '../../lib/constructs/dashboard';
import { defaultStack, synthesize, type Synthesized } from './stack';

type Widget = { type: string; properties: { title?: string; metrics?: unknown[][]; alarms?: string[] } };

/** The dashboard body with CloudFormation's Fn::Join resolved (tokens kept as their JSON). */
function dashboardBody(s: Synthesized): { widgets: Widget[] } {
  const dashboards = s.template.findResources('AWS::CloudWatch::Dashboard');
  const [d] = Object.values(dashboards) as { Properties: { DashboardBody: unknown } }[];
  const body = d.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] };
  const text = body['Fn::Join'][1].map((p) => (typeof p === 'string' ? p : `"${JSON.stringify(p).replace(/"/g, "'")}"`)).join('');
  return JSON.parse(text.replace(/""/g, '"')) as { widgets: Widget[] };
}

const widget = (s: Synthesized, title: string) => {
  const w = dashboardBody(s).widgets.find((x) => x.properties.title === title);
  if (!w) throw new Error(`no widget "${title}"`);
  return w;
};
/** Metric names of a widget (the name is the second item of each metric array, or after `...`). */
const metricNames = (w: Widget) => (w.properties.metrics ?? []).map((m) => m.filter((x) => typeof x === 'string')[1]);

describe('dashboard', () => {
  const s = defaultStack();

  it('is one dashboard named after the stack and the environment', () => {
    s.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    s.template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'Messaging-production' });
  });

  it('has every widget', () => {
    const titles = dashboardBody(s).widgets.map((w) => w.properties.title).filter(Boolean);
    expect(titles).toEqual(expect.arrayContaining(Object.values(WIDGET)));
  });

  it('shows API requests, 4xx/5xx and latency from API Gateway', () => {
    expect(metricNames(widget(s, WIDGET.apiRequests))).toEqual(['Count']);
    expect(metricNames(widget(s, WIDGET.apiErrors))).toEqual(['4XXError', '5XXError']);
    expect(metricNames(widget(s, WIDGET.apiLatency))).toEqual(['Latency', 'Latency', 'IntegrationLatency']);
  });

  it('shows invocations and duration of every function (endpoint groups, authorizer, webhooks, sweeper)', () => {
    const fnCount = Object.keys(s.template.findResources('AWS::Lambda::Function')).length;
    expect(metricNames(widget(s, WIDGET.groupInvocations))).toEqual(Array(fnCount).fill('Invocations'));
    expect(metricNames(widget(s, WIDGET.groupDuration))).toEqual(Array(fnCount).fill('Duration'));
    const errors = metricNames(widget(s, WIDGET.lambdaErrors));
    expect(errors.filter((n) => n === 'Errors')).toHaveLength(fnCount);
    expect(errors.filter((n) => n === 'Throttles')).toHaveLength(fnCount);
  });

  it('shows the service EMF metrics: messages, dead letters, rate limits, queue depth and age, webhooks', () => {
    expect(metricNames(widget(s, WIDGET.messages))).toEqual([METRIC.published, METRIC.consumed, METRIC.consumed, METRIC.consumed, METRIC.acked]);
    expect(new Set(metricNames(widget(s, WIDGET.queueLeftovers)))).toEqual(new Set([METRIC.deadLettered, METRIC.dropped, METRIC.rateLimited]));
    expect(metricNames(widget(s, WIDGET.queueDepth))).toEqual([METRIC.queueDepth, METRIC.queueOldestMessageAge]);
    expect(metricNames(widget(s, WIDGET.streamLag))).toEqual([METRIC.streamLag]);
    expect(metricNames(widget(s, WIDGET.webhooks))).toEqual([METRIC.webhookDelivered, METRIC.webhookFailed, METRIC.webhookRetried]);
    const consumed = widget(s, WIDGET.messages).properties.metrics?.[1] as unknown[];
    expect(consumed).toEqual(expect.arrayContaining(['Messaging', METRIC.consumed, 'kind', 'queue', 'service', 'messaging']));
  });

  it('shows the webhook backlog (delivery queue, retry workflow) and every dead-letter queue', () => {
    expect(metricNames(widget(s, WIDGET.webhookBacklog))).toEqual([
      'ApproximateNumberOfMessagesVisible', 'ApproximateNumberOfMessagesNotVisible', 'ExecutionsStarted', 'ExecutionsSucceeded', 'ExecutionsFailed',
    ]);
    const dlqs = widget(s, WIDGET.deadLetters).properties.metrics ?? [];
    expect(dlqs.map((m) => (m.at(-1) as { label: string }).label).sort()).toEqual(['Sweeper DLQ', 'Webhooks DLQ']);
  });

  it('shows throttles and consumed capacity of every table', () => {
    const tables = Object.keys(TABLES).length;
    expect(metricNames(widget(s, WIDGET.dynamoThrottles))).toEqual(Array(tables).fill(['ReadThrottleEvents', 'WriteThrottleEvents']).flat());
    const capacity = metricNames(widget(s, WIDGET.dynamoCapacity));
    expect(capacity.filter((n) => n === 'ConsumedReadCapacityUnits')).toHaveLength(tables);
    expect(capacity.filter((n) => n === 'ConsumedWriteCapacityUnits')).toHaveLength(tables);
  });

  it('lists every alarm of the stack in the alarm widget', () => {
    const alarms = Object.keys(s.template.findResources('AWS::CloudWatch::Alarm'));
    expect(widget(s, WIDGET.alarms).properties.alarms).toHaveLength(alarms.length);
  });
});

describe('alarms', () => {
  const s = defaultStack();
  const alarms = () => Object.values(s.template.findResources('AWS::CloudWatch::Alarm')) as { Properties: Record<string, unknown> }[];

  it('alarms on the API 5xx rate', () => {
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway', MetricName: '5XXError', Statistic: 'Average', Threshold: 0.01, ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms on the errors of every function', () => {
    const fnCount = Object.keys(s.template.findResources('AWS::Lambda::Function')).length;
    expect(alarms().filter((a) => a.Properties.MetricName === 'Errors' && a.Properties.Namespace === 'AWS/Lambda')).toHaveLength(fnCount);
  });

  it('alarms on DynamoDB throttles of every table, read and write', () => {
    const throttles = alarms().find((a) => JSON.stringify(a.Properties.Metrics ?? '').includes('ThrottleEvents'));
    expect(throttles).toBeDefined();
    const names = (throttles?.Properties.Metrics as { MetricStat?: { Metric: { MetricName: string } } }[]).flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : []));
    expect(names).toHaveLength(2 * Object.keys(TABLES).length);
  });

  it('alarms on the depth of the webhook and sweeper DLQs', () => {
    const dlqAlarms = alarms().filter((a) => a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible');
    // The dashboard's alarm per DLQ, plus the webhook construct's own on its DLQ.
    expect(dlqAlarms.length).toBeGreaterThanOrEqual(2);
  });

  it('alarms on the webhook delivery failure rate from the EMF metrics', () => {
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: Match.stringLikeRegexp('100 \\* failed / \\(ok \\+ failed\\)') }),
        Match.objectLike({ MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: METRIC.webhookFailed }) }) }),
      ]),
    });
  });

  it('has no notification topic and no alarm actions without alarmEmail', () => {
    s.template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const a of alarms()) expect(a.Properties.AlarmActions).toBeUndefined();
  });

  describe('with alarmEmail', () => {
    const withEmail = synthesize({ alarmEmail: 'ops@example.com' });

    it('subscribes the address to an encrypted topic that every alarm notifies', () => {
      withEmail.template.resourceCountIs('AWS::SNS::Topic', 1);
      withEmail.template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
      withEmail.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
      withEmail.template.hasResourceProperties('AWS::KMS::Key', {
        EnableKeyRotation: true,
        KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' } })]) },
      });
      const all = Object.values(withEmail.template.findResources('AWS::CloudWatch::Alarm')) as { Properties: { AlarmActions?: unknown[] } }[];
      expect(all.length).toBeGreaterThan(0);
      for (const a of all) expect(a.Properties.AlarmActions).toHaveLength(1);
    });

    it('stays clean under cdk-nag', () => {
      const { violations } = new AwsSolutionsChecks(withEmail.app, { verbose: true }).validateScope(withEmail.stack);
      expect(violations.map((v) => v.ruleName)).toEqual([]);
    });
  });
});

describe('tracing and log retention', () => {
  const s = defaultStack();

  it('turns on active X-Ray tracing on every function, the API stage and the retry workflow', () => {
    const fns = Object.values(s.template.findResources('AWS::Lambda::Function')) as { Properties: { TracingConfig?: { Mode: string } } }[];
    expect(fns.length).toBeGreaterThan(0);
    for (const f of fns) expect(f.Properties.TracingConfig).toEqual({ Mode: 'Active' });
    s.template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
    s.template.hasResourceProperties('AWS::StepFunctions::StateMachine', { TracingConfiguration: { Enabled: true } });
  });

  it('gives every log group the stack retention (30 days by default)', () => {
    const groups = Object.values(s.template.findResources('AWS::Logs::LogGroup')) as { Properties: { RetentionInDays?: number } }[];
    expect(groups.length).toBeGreaterThan(0);
    for (const g of groups) expect(g.Properties.RetentionInDays).toBe(30);
  });

  it('applies a configured retention to every log group', () => {
    const t = synthesize({ logRetention: RetentionDays.ONE_YEAR }).template;
    const groups = Object.values(t.findResources('AWS::Logs::LogGroup')) as { Properties: { RetentionInDays?: number } }[];
    for (const g of groups) expect(g.Properties.RetentionInDays).toBe(365);
  });
});
