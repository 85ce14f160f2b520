/**
 * The operator's view of a deployment: one CloudWatch dashboard and the alarms that page.
 *
 * Sources, all bounded in number whatever the tenants do:
 * - API Gateway's API-wide metrics (requests, 4xx, 5xx, latency). Per endpoint group the
 *   dashboard uses the group's Lambda function (invocations, errors, duration): API Gateway's
 *   per-method "detailed metrics" would bill one custom metric per route and metric.
 * - The service's EMF metrics (lambda/core/observability.ts, namespace `metricsNamespace`, dimension
 *   `service`): published, consumed by kind, acked, dead-lettered, dropped, rate-limited, webhook
 *   outcomes, consume time without the long-poll wait, stream consumer lag.
 * - SQS: the queues behind service queues (made at runtime, so not resources of the stack) through
 *   Metrics Insights queries over `AWS/SQS` for the stack's queue-name prefix: depth, in flight,
 *   age of the oldest message, summed or maxed over all of them (one series whatever the number of
 *   queues); the webhook delivery queue and every DLQ by their own metrics.
 * - Step Functions (the retry workflow), Lambda and DynamoDB metrics of the stack's own resources.
 *
 * Alarms: API 5xx rate, errors of each function (M of N periods), DynamoDB throttles of each
 * table and its indexes, DLQ depths, webhook delivery failure rate and lag, plus any alarm handed
 * in (e.g. the webhook construct's own). With `alarmEmail` every alarm notifies an encrypted SNS
 * topic subscribed by that address (./alarm-topic.ts).
 *
 * Alarm thresholds and the metric math that keeps them able to fire: ./alarm-thresholds.ts.
 *
 * Saved Logs Insights queries (./log-queries.ts) and a log widget with the unexpected errors.
 */
import { Aws, Duration, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm, AlarmStatusWidget, ComparisonOperator, Dashboard as CwDashboard, GraphWidget, LogQueryWidget, MathExpression, Metric,
  TextWidget, TreatMissingData, type IMetric, type IWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { METRIC, type MetricName } from '../../lambda/core/rules/metric-names';
import {
  DELIVERY_FAILURE_RATE_PERCENT, DELIVERY_RATE_MIN_ENDED, DYNAMO_THROTTLE_THRESHOLD, failureRateExpression, filled, FUNCTION_ERRORS_PERIODS,
  MAX_ALARM_METRICS, QUEUE_AGE_THRESHOLD_SECONDS, SERVER_ERROR_RATE_THRESHOLD, sqsInsights, WEBHOOK_LAG_THRESHOLD_SECONDS,
} from './alarm-thresholds';
import { AlarmTopic } from './alarm-topic';
import { LOG_QUERIES, LogQueries } from './log-queries';

export interface DashboardProps {
  readonly restApi: RestApi;
  /** Every Lambda function of the stack, by a short name shown in legends. */
  readonly functions: ReadonlyMap<string, LambdaFunction>;
  readonly tables: Readonly<Record<string, Table>>;
  /** Global secondary index names by table (key of `tables`): their throttles count too. */
  readonly globalIndexes?: Readonly<Record<string, readonly string[]>>;
  /** The API's access log group (saved queries). */
  readonly accessLogs?: ILogGroup;
  /** The webhook delivery queue (first attempts waiting). */
  readonly deliveryQueue?: IQueue;
  /** The webhook retry workflow (retries waiting). */
  readonly retryWorkflow?: IStateMachine;
  /** Dead-letter queues by title, each with a depth widget and alarm. */
  readonly deadLetterQueues?: ReadonlyMap<string, IQueue>;
  /** Alarms defined elsewhere that should show on the dashboard and notify too. */
  readonly extraAlarms?: readonly Alarm[];
  /** Subscribed to the alarm topic; no topic without it. */
  readonly alarmEmail?: string;
  /** CloudWatch namespace of the EMF metrics. @default 'Messaging' */
  readonly metricsNamespace?: string;
  /** POWERTOOLS_SERVICE_NAME (the EMF `service` dimension). @default 'messaging' */
  readonly serviceName?: string;
  /** Dashboard name. @default `{stack name}` */
  readonly dashboardName?: string;
  /** Name prefix of the SQS queues behind service queues (lib/stack-outputs.ts `sqsQueuePrefix`). */
  readonly sqsQueuePrefix?: string;
  /**
   * The oldest message of any service queue older than this, in two consecutive 5-minute
   * periods, raises an alarm (consumers are not keeping up). @default QUEUE_AGE_THRESHOLD_SECONDS
   */
  readonly queueAgeAlarmSeconds?: number;
}

/** Widget titles (the infra tests find widgets by these). */
export const WIDGET = {
  apiRequests: 'API requests',
  apiErrors: 'API 4xx and 5xx',
  apiLatency: 'API latency (ms)',
  groupInvocations: 'Requests per endpoint group (Lambda invocations)',
  groupDuration: 'Duration per function, p99 (ms)',
  consumeTime: 'Consume handler time without the long-poll wait (ms)',
  messages: 'Messages per minute',
  queueLeftovers: 'Dead-lettered, dropped, rate-limited per minute',
  queueDepth: 'Queues (SQS, all of the stack): messages visible and in flight, age of the oldest (s)',
  streamLag: 'Stream consumer lag (furthest-behind group, messages)',
  webhooks: 'Webhook deliveries per minute',
  webhookBacklog: 'Webhook backlog',
  webhookLag: 'Webhook lag: age of the oldest delivery job (s)',
  deadLetters: 'Dead-letter queues (messages)',
  lambdaErrors: 'Lambda errors and throttles',
  dynamoThrottles: 'DynamoDB throttle events',
  dynamoCapacity: 'DynamoDB consumed capacity units',
  alarms: 'Alarms',
  unexpectedErrors: 'Unexpected errors (Logs Insights)',
} as const;

const MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

export class Dashboard extends Construct {
  readonly dashboard: CwDashboard;
  /** The alarms this construct created. */
  readonly alarms: Alarm[] = [];
  readonly alarmTopic?: Topic;
  readonly logQueries: LogQueries;

  private readonly props: DashboardProps;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    this.props = props;
    const api = props.restApi;
    const fns = [...props.functions];
    const tables = Object.entries(props.tables);
    const dlqs = [...(props.deadLetterQueues ?? new Map<string, IQueue>())];

    // --- alarms
    this.alarms.push(
      new Alarm(this, 'ApiServerErrorRateAlarm', {
        alarmDescription: `More than ${SERVER_ERROR_RATE_THRESHOLD * 100}% of API requests answered 5xx in 2 of 3 five-minute periods.`,
        // 5XXError is 0 or 1 per request: its average is the share of requests that failed.
        metric: api.metricServerError({ statistic: 'Average', period: FIVE_MINUTES }),
        threshold: SERVER_ERROR_RATE_THRESHOLD,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    for (const [name, fn] of fns) {
      this.alarms.push(
        new Alarm(this, `${pascal(name)}ErrorsAlarm`, {
          alarmDescription: `The ${name} function failed (threw, timed out or ran out of memory) in ${FUNCTION_ERRORS_PERIODS.datapointsToAlarm} of the last ${FUNCTION_ERRORS_PERIODS.evaluationPeriods} five-minute periods. Handled API errors answer 500 without counting here.`,
          metric: fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          ...FUNCTION_ERRORS_PERIODS,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    for (const [name, table] of tables) {
      const usingMetrics: Record<string, IMetric> = {
        r: dynamo('ReadThrottleEvents', table, FIVE_MINUTES),
        w: dynamo('WriteThrottleEvents', table, FIVE_MINUTES),
      };
      // Index throttles are their own series (dimension GlobalSecondaryIndexName); a throttled
      // GSI write also throttles the table write that caused it.
      (props.globalIndexes?.[name] ?? []).forEach((index, i) => {
        usingMetrics[`ir${i}`] = dynamo('ReadThrottleEvents', table, FIVE_MINUTES, undefined, index);
        usingMetrics[`iw${i}`] = dynamo('WriteThrottleEvents', table, FIVE_MINUTES, undefined, index);
      });
      if (Object.keys(usingMetrics).length > MAX_ALARM_METRICS) {
        throw new Error(`the ${name} table has too many indexes for one throttle alarm (${Object.keys(usingMetrics).length} metrics, CloudWatch allows ${MAX_ALARM_METRICS})`);
      }
      this.alarms.push(
        new Alarm(this, `${pascal(name)}ThrottlesAlarm`, {
          alarmDescription: `More than ${DYNAMO_THROTTLE_THRESHOLD} DynamoDB read or write throttle events in 5 minutes on the ${name} table and its indexes.`,
          metric: new MathExpression({ expression: filled(Object.keys(usingMetrics)), usingMetrics, period: FIVE_MINUTES, label: `${name} throttle events` }),
          threshold: DYNAMO_THROTTLE_THRESHOLD,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    for (const [title, q] of dlqs) {
      this.alarms.push(
        new Alarm(this, `${pascal(title)}DepthAlarm`, {
          alarmDescription: `${title} holds messages: see README "Operate" for what to do.`,
          metric: q.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    const window = Duration.minutes(15);
    this.alarms.push(
      new Alarm(this, 'WebhookFailureRateAlarm', {
        alarmDescription: `More than ${DELIVERY_FAILURE_RATE_PERCENT}% of the webhook deliveries that ended in 15 minutes failed after all their retries (at least ${DELIVERY_RATE_MIN_ENDED} ended).`,
        metric: new MathExpression({
          expression: failureRateExpression(DELIVERY_RATE_MIN_ENDED),
          usingMetrics: { ok: this.emf(METRIC.webhookDelivered, window), failed: this.emf(METRIC.webhookFailed, window) },
          period: window,
          label: 'Failed deliveries (%)',
        }),
        threshold: DELIVERY_FAILURE_RATE_PERCENT,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    if (props.deliveryQueue) {
      this.alarms.push(
        new Alarm(this, 'WebhookLagAlarm', {
          alarmDescription: `The oldest webhook delivery job has waited over ${WEBHOOK_LAG_THRESHOLD_SECONDS / 60} minutes in the delivery queue in two consecutive 5-minute periods: deliveries are late.`,
          metric: props.deliveryQueue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
          threshold: WEBHOOK_LAG_THRESHOLD_SECONDS,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 2,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    if (props.sqsQueuePrefix) {
      this.alarms.push(
        new Alarm(this, 'QueueMessageAgeAlarm', {
          alarmDescription: `The oldest message of the stack's queues has waited over ${(props.queueAgeAlarmSeconds ?? QUEUE_AGE_THRESHOLD_SECONDS) / 60} minutes in two consecutive 5-minute periods: a queue's consumers stopped or fall behind (GET /queues shows message_count; the SQS console shows each queue by name, prefix ${props.sqsQueuePrefix}).`,
          metric: new MathExpression({ expression: sqsInsights('MAX', 'ApproximateAgeOfOldestMessage', props.sqsQueuePrefix), usingMetrics: {}, period: FIVE_MINUTES, label: 'oldest queue message (s)' }),
          threshold: props.queueAgeAlarmSeconds ?? QUEUE_AGE_THRESHOLD_SECONDS,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 2,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    const allAlarms = [...this.alarms, ...(props.extraAlarms ?? [])];
    if (props.alarmEmail) {
      this.alarmTopic = new AlarmTopic(this, 'Alarms', { email: props.alarmEmail }).topic;
      const action = new SnsAction(this.alarmTopic);
      for (const a of allAlarms) {
        a.addAlarmAction(action);
        a.addOkAction(action);
      }
    }

    // --- dashboard
    this.dashboard = new CwDashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName ?? Stack.of(this).stackName,
      defaultInterval: Duration.hours(3),
    });
    const graph = (title: string, left: IMetric[], opts: { right?: IMetric[]; width?: number; stacked?: boolean } = {}): IWidget =>
      new GraphWidget({ title, left, right: opts.right, width: opts.width ?? 8, height: 6, stacked: opts.stacked });
    const sum = (m: Metric, label: string, period = MINUTE) => m.with({ statistic: 'Sum', period, label });

    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# ${Stack.of(this).stackName}\nAPI, messages, queues, webhooks, dead letters, Lambda and DynamoDB. Runbook: README "Operate".`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph(WIDGET.apiRequests, [sum(api.metricCount(), 'Requests')]),
      graph(WIDGET.apiErrors, [sum(api.metricClientError(), '4xx'), sum(api.metricServerError(), '5xx')]),
      graph(WIDGET.apiLatency, [
        api.metricLatency({ statistic: 'p50', period: MINUTE, label: 'p50' }),
        api.metricLatency({ statistic: 'p99', period: MINUTE, label: 'p99' }),
      ], { right: [api.metricIntegrationLatency({ statistic: 'p99', period: MINUTE, label: 'integration p99' })] }),
    );
    // Long polls (up to 25 s) dominate the API latency p99 and the consume functions' duration
    // p99: the consume time without the wait (an EMF metric) shows the work beside them.
    this.dashboard.addWidgets(
      graph(WIDGET.groupInvocations, fns.map(([name, fn]) => fn.metricInvocations({ period: MINUTE, statistic: 'Sum', label: name }))),
      graph(WIDGET.groupDuration, fns.map(([name, fn]) => fn.metricDuration({ period: MINUTE, statistic: 'p99', label: name }))),
      graph(WIDGET.consumeTime, (['queue', 'stream', 'subscription'] as const).flatMap((kind) => [
        this.emf(METRIC.consumeTime, MINUTE, `${kind} p50`, { kind }, 'p50'),
        this.emf(METRIC.consumeTime, MINUTE, `${kind} p99`, { kind }, 'p99'),
      ])),
    );
    this.dashboard.addWidgets(
      graph(WIDGET.messages, [
        this.emf(METRIC.published, MINUTE, 'published'),
        this.emf(METRIC.consumed, MINUTE, 'consumed from queues', { kind: 'queue' }),
        this.emf(METRIC.consumed, MINUTE, 'consumed from streams', { kind: 'stream' }),
        this.emf(METRIC.consumed, MINUTE, 'consumed from subscriptions', { kind: 'subscription' }),
        this.emf(METRIC.acked, MINUTE, 'acked'),
      ]),
      graph(WIDGET.queueLeftovers, [
        this.emf(METRIC.deadLettered, MINUTE, 'dead-lettered (max_retries)', { reason: 'max_retries' }),
        this.emf(METRIC.deadLettered, MINUTE, 'dead-lettered (queue full)', { reason: 'queue_full' }),
        this.emf(METRIC.dropped, MINUTE, 'dropped (max_retries)', { reason: 'max_retries' }),
        this.emf(METRIC.dropped, MINUTE, 'dropped (queue full)', { reason: 'queue_full' }),
        ...['publish', 'consume', 'management'].map((c) => this.emf(METRIC.rateLimited, MINUTE, `429 ${c}`, { category: c })),
      ]),
      graph(WIDGET.queueDepth, props.sqsQueuePrefix ? [
        new MathExpression({ expression: sqsInsights('SUM', 'ApproximateNumberOfMessagesVisible', props.sqsQueuePrefix), usingMetrics: {}, period: MINUTE, label: 'visible' }),
        new MathExpression({ expression: sqsInsights('SUM', 'ApproximateNumberOfMessagesNotVisible', props.sqsQueuePrefix), usingMetrics: {}, period: MINUTE, label: 'in flight' }),
        new MathExpression({ expression: sqsInsights('SUM', 'ApproximateNumberOfMessagesDelayed', props.sqsQueuePrefix), usingMetrics: {}, period: MINUTE, label: 'delayed' }),
      ] : [], {
        right: props.sqsQueuePrefix ? [new MathExpression({ expression: sqsInsights('MAX', 'ApproximateAgeOfOldestMessage', props.sqsQueuePrefix), usingMetrics: {}, period: MINUTE, label: 'oldest message (s)' })] : [],
      }),
      graph(WIDGET.streamLag, [this.emf(METRIC.streamLag, MINUTE, 'lag after a consume (max)', {}, 'Maximum')]),
    );
    const backlog: IMetric[] = [];
    if (props.deliveryQueue) {
      backlog.push(
        props.deliveryQueue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum', label: 'first attempts waiting' }),
        props.deliveryQueue.metricApproximateNumberOfMessagesNotVisible({ period: MINUTE, statistic: 'Maximum', label: 'first attempts in flight' }),
      );
    }
    const workflow: IMetric[] = props.retryWorkflow
      ? [
          props.retryWorkflow.metricStarted({ period: MINUTE, label: 'retry workflows started' }),
          props.retryWorkflow.metricSucceeded({ period: MINUTE, label: 'retry workflows ended' }),
          props.retryWorkflow.metricFailed({ period: MINUTE, label: 'retry workflows failed' }),
        ]
      : [];
    const lag = props.deliveryQueue
      ? [props.deliveryQueue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum', label: 'oldest delivery job (s)' })]
      : [];
    this.dashboard.addWidgets(
      graph(WIDGET.webhooks, [
        this.emf(METRIC.webhookDelivered, MINUTE, 'delivered'),
        this.emf(METRIC.webhookFailed, MINUTE, 'failed (retries used up)'),
        this.emf(METRIC.webhookRetried, MINUTE, 'retries scheduled'),
      ]),
      graph(WIDGET.webhookBacklog, backlog, { right: workflow }),
      graph(WIDGET.webhookLag, lag),
    );
    this.dashboard.addWidgets(
      graph(WIDGET.deadLetters, dlqs.map(([title, q]) => q.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum', label: title })), { width: 6 }),
      graph(WIDGET.lambdaErrors, fns.map(([name, fn]) => fn.metricErrors({ period: MINUTE, statistic: 'Sum', label: `${name} errors` })), {
        right: fns.map(([name, fn]) => fn.metricThrottles({ period: MINUTE, statistic: 'Sum', label: `${name} throttles` })),
        width: 6,
      }),
      graph(WIDGET.dynamoThrottles, tables.flatMap(([name, t]) => [
        dynamo('ReadThrottleEvents', t, MINUTE, `${name} read`),
        dynamo('WriteThrottleEvents', t, MINUTE, `${name} write`),
        ...(props.globalIndexes?.[name] ?? []).flatMap((index) => [
          dynamo('ReadThrottleEvents', t, MINUTE, `${name}/${index} read`, index),
          dynamo('WriteThrottleEvents', t, MINUTE, `${name}/${index} write`, index),
        ]),
      ]), { width: 6 }),
      graph(WIDGET.dynamoCapacity, tables.map(([name, t]) => t.metricConsumedReadCapacityUnits({ period: MINUTE, statistic: 'Sum', label: `${name} read` })), {
        right: tables.map(([name, t]) => t.metricConsumedWriteCapacityUnits({ period: MINUTE, statistic: 'Sum', label: `${name} write` })),
        width: 6,
      }),
    );
    this.dashboard.addWidgets(new AlarmStatusWidget({ title: WIDGET.alarms, alarms: allAlarms, width: 24, height: Math.max(3, Math.ceil(allAlarms.length / 4) + 1) }));

    // --- logs: the saved queries, and the newest unexpected errors on the dashboard
    const functionLogs = fns.map(([, fn]) => fn.logGroup);
    this.logQueries = new LogQueries(this, 'LogQueries', { functionLogs, accessLogs: props.accessLogs });
    this.dashboard.addWidgets(
      new LogQueryWidget({
        title: WIDGET.unexpectedErrors,
        logGroupNames: functionLogs.map((g) => g.logGroupName),
        queryString: LOG_QUERIES.unexpectedErrors.query.toString(),
        width: 24,
        height: 6,
      }),
    );
  }

  /** Console address of the dashboard (the stack's `DashboardUrl` output). */
  get url(): string {
    return `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${this.dashboard.dashboardName}`;
  }

  /** One of the service's EMF metrics (dimension `service`, plus `dims`). */
  private emf(name: MetricName, period: Duration, label?: string, dims: Record<string, string> = {}, statistic = 'Sum'): Metric {
    return new Metric({
      namespace: this.props.metricsNamespace ?? 'Messaging',
      metricName: name,
      dimensionsMap: { service: this.props.serviceName ?? 'messaging', ...dims },
      statistic,
      period,
      label,
    });
  }
}

function dynamo(metricName: string, table: Table, period: Duration, label?: string, globalIndex?: string): Metric {
  const dimensionsMap = { TableName: table.tableName, ...(globalIndex ? { GlobalSecondaryIndexName: globalIndex } : {}) };
  return new Metric({ namespace: 'AWS/DynamoDB', metricName, dimensionsMap, statistic: 'Sum', period, label });
}

const pascal = (s: string) => s.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, _s, c: string) => c.toUpperCase());
