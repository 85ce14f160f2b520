/**
 * Monitoring (lib/constructs/dashboard.ts): the dashboard's widgets and metrics, the saved Logs
 * Insights queries and the log widget, the DashboardUrl output, active tracing on every function,
 * and log retention on every log group. The alarms are in alarms.test.ts.
 */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { METRIC } from '../../lambda/core/rules/metric-names';
import { TABLES } from '../../lambda/core/storage/tables';
import { DELIVERY_FAILED_LOG } from '../../lambda/webhooks/deliver';
import { WIDGET } from '../../lib/constructs/dashboard';
import { LOG_QUERIES } from '../../lib/constructs/log-queries';
import { DASHBOARD_URL_OUTPUT } from '../../lib/stack-outputs';
import { defaultStack, serviceFunctionResources, synthesize, type Synthesized } from './stack';

type Widget = { type: string; properties: { title?: string; metrics?: unknown[][]; alarms?: string[]; query?: string } };

/**
 * The dashboard body with CloudFormation's Fn::Join resolved: each token is written as its JSON
 * with single quotes, inside the string it stands in (a whole value, or a log group name inside
 * a Logs Insights query).
 */
function dashboardBody(s: Synthesized): { widgets: Widget[] } {
  const dashboards = s.template.findResources('AWS::CloudWatch::Dashboard');
  const [d] = Object.values(dashboards) as { Properties: { DashboardBody: unknown } }[];
  const body = d.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] };
  const text = body['Fn::Join'][1].map((p) => (typeof p === 'string' ? p : JSON.stringify(p).replace(/"/g, "'"))).join('');
  return JSON.parse(text) as { widgets: Widget[] };
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
    const fnCount = Object.keys(serviceFunctionResources(s.template)).length;
    expect(metricNames(widget(s, WIDGET.groupInvocations))).toEqual(Array(fnCount).fill('Invocations'));
    expect(metricNames(widget(s, WIDGET.groupDuration))).toEqual(Array(fnCount).fill('Duration'));
    const errors = metricNames(widget(s, WIDGET.lambdaErrors));
    expect(errors.filter((n) => n === 'Errors')).toHaveLength(fnCount);
    expect(errors.filter((n) => n === 'Throttles')).toHaveLength(fnCount);
  });

  it("shows the queues' depth, in-flight, delayed and oldest age over every SQS queue of the stack's prefix (Metrics Insights)", () => {
    const expressions = (widget(s, WIDGET.queueDepth).properties.metrics ?? []).map((m) => (m.find((x) => typeof x === 'object') as { expression?: string })?.expression);
    const prefix = "FROM SCHEMA(\"AWS/SQS\", QueueName) WHERE QueueName LIKE 'Messaging_q_%'";
    expect(expressions).toEqual([
      `SELECT SUM(ApproximateNumberOfMessagesVisible) ${prefix}`,
      `SELECT SUM(ApproximateNumberOfMessagesNotVisible) ${prefix}`,
      `SELECT SUM(ApproximateNumberOfMessagesDelayed) ${prefix}`,
      `SELECT MAX(ApproximateAgeOfOldestMessage) ${prefix}`,
    ]);
  });

  it('shows the service EMF metrics: messages, dead letters, rate limits, stream lag, webhooks', () => {
    expect(metricNames(widget(s, WIDGET.messages))).toEqual([METRIC.published, METRIC.consumed, METRIC.consumed, METRIC.consumed, METRIC.acked]);
    expect(new Set(metricNames(widget(s, WIDGET.queueLeftovers)))).toEqual(new Set([METRIC.deadLettered, METRIC.dropped, METRIC.rateLimited]));
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
    expect(dlqs.map((m) => (m.at(-1) as { label: string }).label).sort()).toEqual(['Scheduler DLQ', 'Sweeper DLQ', 'Webhooks DLQ']);
  });

  it('shows the consume time without the long-poll wait, p50 and p99 per kind, beside the function durations', () => {
    const w = widget(s, WIDGET.consumeTime);
    expect(metricNames(w)).toEqual(Array(6).fill(METRIC.consumeTime));
    const series = (w.properties.metrics ?? []).map((m) => {
      const kind = m[m.indexOf('kind') + 1];
      return `${kind} ${(m.at(-1) as { stat: string }).stat}`;
    });
    expect(series).toEqual(['queue p50', 'queue p99', 'stream p50', 'stream p99', 'subscription p50', 'subscription p99']);
    // The same row as the per-function duration p99.
    const widgets = dashboardBody(s).widgets as (Widget & { y: number })[];
    const y = (title: string) => widgets.find((x) => x.properties.title === title)!.y;
    expect(y(WIDGET.consumeTime)).toBe(y(WIDGET.groupDuration));
  });

  it('shows webhook lag: the age of the oldest job in the delivery queue', () => {
    expect(metricNames(widget(s, WIDGET.webhookLag))).toEqual(['ApproximateAgeOfOldestMessage']);
  });

  it('shows throttles of every table and of every global secondary index, and consumed capacity of every table', () => {
    const tables = Object.keys(TABLES).length;
    const indexes = Object.values(TABLES).flatMap((t) => t.globalIndexes ?? []).length;
    expect(indexes).toBeGreaterThan(0);
    const throttles = widget(s, WIDGET.dynamoThrottles).properties.metrics ?? [];
    expect(throttles.map((m) => m.filter((x) => typeof x === 'string')[1])).toEqual(Array(tables + indexes).fill(['ReadThrottleEvents', 'WriteThrottleEvents']).flat());
    expect(throttles.filter((m) => m.includes('GlobalSecondaryIndexName'))).toHaveLength(2 * indexes);
    const capacity = metricNames(widget(s, WIDGET.dynamoCapacity));
    expect(capacity.filter((n) => n === 'ConsumedReadCapacityUnits')).toHaveLength(tables);
    expect(capacity.filter((n) => n === 'ConsumedWriteCapacityUnits')).toHaveLength(tables);
  });

  it('lists every alarm of the stack in the alarm widget', () => {
    const alarms = Object.keys(s.template.findResources('AWS::CloudWatch::Alarm'));
    expect(widget(s, WIDGET.alarms).properties.alarms).toHaveLength(alarms.length);
  });

  it('shows the newest unexpected errors of every function with Logs Insights', () => {
    const w = widget(s, WIDGET.unexpectedErrors);
    expect(w.type).toBe('log');
    const query = w.properties.query ?? '';
    expect(query).toContain(`| ${LOG_QUERIES.unexpectedErrors.query.toString()}`);
    // SOURCE names every function's log group.
    expect(query.match(/SOURCE/g)).toHaveLength(s.stack.functions.all.size);
    for (const fn of s.stack.functions.all.values()) expect(query).toContain(s.logicalId(fn.logGroup));
  });

  it('outputs its console URL (DashboardUrl)', () => {
    s.template.hasOutput(DASHBOARD_URL_OUTPUT, {
      Value: {
        'Fn::Join': ['', [
          'https://', { Ref: 'AWS::Region' }, '.console.aws.amazon.com/cloudwatch/home?region=', { Ref: 'AWS::Region' },
          '#dashboards:name=', { Ref: s.logicalId(s.stack.dashboard.dashboard) },
        ]],
      },
    });
  });
});

describe('saved Logs Insights queries', () => {
  const s = defaultStack();
  const definitions = () => Object.values(s.template.findResources('AWS::Logs::QueryDefinition')) as {
    Properties: { Name: string; QueryString: string; LogGroupNames: unknown[] };
  }[];
  const named = (id: keyof typeof LOG_QUERIES) => definitions().find((d) => d.Properties.Name === `Messaging/${LOG_QUERIES[id].title}`);

  it('saves every query of the README under the stack\'s name', () => {
    expect(definitions().map((d) => d.Properties.Name).sort()).toEqual(Object.values(LOG_QUERIES).map((q) => `Messaging/${q.title}`).sort());
  });

  it.each(Object.entries(LOG_QUERIES).filter(([, q]) => q.logs === 'functions').map(([id]) => [id]))('%s runs over the log group of every function', (id) => {
    const d = named(id as keyof typeof LOG_QUERIES)!;
    expect(d.Properties.LogGroupNames).toHaveLength(s.stack.functions.all.size);
    expect(d.Properties.LogGroupNames).toEqual(expect.arrayContaining([...s.stack.functions.all.values()].map((fn) => ({ Ref: s.logicalId(fn.logGroup) }))));
  });

  it('breaks the EMF counts down by tenant namespace, which is never a metric dimension', () => {
    expect(named('publishedByNamespace')!.Properties.QueryString).toBe(
      `filter ispresent(${METRIC.published})\n| stats sum(${METRIC.published}) as published by namespace\n| sort published desc`,
    );
    expect(named('rateLimitedByNamespace')!.Properties.QueryString).toContain(`stats sum(${METRIC.rateLimited}) as refused by namespace, category`);
  });

  it('finds unexpected errors and failed webhook deliveries by the log lines the functions write', () => {
    expect(named('unexpectedErrors')!.Properties.QueryString).toContain('filter level = "ERROR"');
    expect(named('webhookFailures')!.Properties.QueryString).toContain(`filter message = "${DELIVERY_FAILED_LOG}"`);
  });

  it('lists the slowest requests from the API access log, long polls left out', () => {
    const d = named('slowestRequests')!;
    expect(d.Properties.LogGroupNames).toEqual([{ Ref: s.logicalId(s.stack.api.accessLogs) }]);
    expect(d.Properties.QueryString).toContain('filter resource not like /consume/');
    expect(d.Properties.QueryString).toContain('sort latency desc');
  });
});

describe('tracing and log retention', () => {
  const s = defaultStack();

  it('turns on active X-Ray tracing on every function, the API stage and the retry workflow', () => {
    const fns = Object.values(serviceFunctionResources(s.template)) as { Properties: { TracingConfig?: { Mode: string } } }[];
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
