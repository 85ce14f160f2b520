/**
 * The scheduler tick in AWS: lambda/handlers/scheduler.ts as its own function of
 * the Functions construct (table and SQS grants from lib/table-access.ts: least privilege),
 * invoked every minute by its own EventBridge rule, like the sweeper's. It hands held messages
 * (delays beyond 900 s) to SQS and makes due schedule runs.
 *
 * - No lease and no reserved concurrency: overlapping ticks are safe (every handover and run is
 *   a conditional claim), and a tick that fails is simply followed by the next one a minute later
 *   (a held message is handed over 13 to 14 minutes before its time, so a dozen failed ticks
 *   still deliver it on time).
 * - The tick scales out (lambda/schedules/shard-tasks.ts): it sends one task per due-index shard
 *   with something due to the tick tasks queue, and the same function's SQS event source runs
 *   each task in an invocation of its own, at most TICK_WORKERS at once (the event source's
 *   maximum concurrency), one task a batch. The function may send to that queue only; the event
 *   source's role statement receives and deletes on it only.
 * - Both asynchronous legs (EventBridge's delivery, Lambda's asynchronous invocation) end in one
 *   encrypted DLQ (its depth alarm comes with the dashboard, which picks up every `DeadLetterQueue`).
 * - The lag alarm: `SchedulerLagSeconds` (the latest handover or run of a tick against its time)
 *   above 60 s, or no tick reporting at all for the period (missing data breaches: nothing is
 *   delivered when no tick runs).
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, GraphWidget, Metric, TreatMissingData, type IWidget } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, type MetricName } from '../../lambda/core/rules/metric-names';
import type { Functions } from './functions';
import { SCHEDULER_MEMORY_MB } from '../function-memory';
import { TICK_TASKS_BATCH_SIZE, TICK_TASKS_MAX_RECEIVE_COUNT, TICK_TASKS_VISIBILITY_SECONDS, TICK_TIMEOUT_SECONDS, TICK_WORKERS } from '../../lambda/schedules/storage/tick-tasks';

const TICK_INTERVAL = Duration.minutes(1);
/** A tick's or a shard worker's work is bounded by its deadline (the handler keeps 15 s back), so a minute covers it. */
export const TICK_TIMEOUT = Duration.seconds(TICK_TIMEOUT_SECONDS);
/** A handover or run later than this raises the lag alarm. */
export const LAG_ALARM_SECONDS = 60;

export interface SchedulerProps {
  readonly functions: Functions;
  /** @default 'Messaging' (the Functions construct's POWERTOOLS_METRICS_NAMESPACE) */
  readonly metricsNamespace?: string;
  /** @default 'messaging' */
  readonly serviceName?: string;
}

export class Scheduler extends Construct {
  readonly function: NodejsFunction;
  readonly rule: Rule;
  readonly deadLetterQueue: Queue;
  /** The shard tasks the tick sends to its workers. */
  readonly tasksQueue: Queue;
  readonly lagAlarm: Alarm;
  /** The dashboard's widgets of the tick (lib/messaging-stack.ts adds them). */
  readonly widgets: IWidget[];

  constructor(scope: Construct, id: string, props: SchedulerProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    // A dead-letter queue itself (of the rule's target, the asynchronous invocations and the shard
    // tasks): cdk-nag sees it as the tasks queue's DLQ, so it needs no acknowledgement.
    this.function = props.functions.add('scheduler', {
      description: 'Scheduler tick: hands messages held beyond 900 s to SQS and makes due schedule runs (every minute)',
      timeout: TICK_TIMEOUT,
      memorySize: SCHEDULER_MEMORY_MB,
    });
    this.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1), onFailure: new SqsDestination(this.deadLetterQueue) });

    // Shard tasks: a task that failed twice goes to the DLQ (its depth alarm comes with the
    // dashboard); the worker reports none as failed, so only an invocation that crashed or timed
    // out twice puts one there.
    this.tasksQueue = new Queue(this, 'TasksQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(TICK_TASKS_VISIBILITY_SECONDS),
      retentionPeriod: Duration.hours(1),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: TICK_TASKS_MAX_RECEIVE_COUNT },
    });
    this.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.tasksQueue.queueArn] }));
    this.function.addEnvironment('MSG_TICK_TASKS_QUEUE_URL', this.tasksQueue.queueUrl);
    this.function.addEventSource(new SqsEventSource(this.tasksQueue, { batchSize: TICK_TASKS_BATCH_SIZE, maxConcurrency: TICK_WORKERS }));

    this.rule = new Rule(this, 'Schedule', {
      description: 'Runs the scheduler tick (lambda/schedules/tick.ts)',
      schedule: Schedule.rate(TICK_INTERVAL),
      targets: [new LambdaFunction(this.function, { deadLetterQueue: this.deadLetterQueue, retryAttempts: 2, maxEventAge: Duration.minutes(5) })],
    });

    const emf = (name: MetricName, label: string | undefined, statistic = 'Sum') =>
      new Metric({ namespace: props.metricsNamespace ?? 'Messaging', metricName: name, dimensionsMap: { service: props.serviceName ?? 'messaging' }, statistic, period: Duration.minutes(1), label });

    this.lagAlarm = new Alarm(this, 'LagAlarm', {
      alarmDescription: `A held message or a schedule run was handed over more than ${LAG_ALARM_SECONDS} s after its time, or no scheduler tick ran in the minute (check the scheduler function's errors and its DLQ).`,
      metric: emf(METRIC.schedulerLag, undefined, 'Maximum'),
      threshold: LAG_ALARM_SECONDS,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.BREACHING,
    });

    this.widgets = [
      new GraphWidget({
        title: 'Scheduler: held messages and schedule runs per minute',
        width: 12,
        left: [
          emf(METRIC.delayedHandedOver, 'held messages handed over'),
          emf(METRIC.delayedDropped, 'held messages dropped (target deleted)'),
          emf(METRIC.scheduleRuns, 'schedule runs'),
          emf(METRIC.scheduleRunsRefused, 'schedule runs refused (last_error)'),
        ],
      }),
      new GraphWidget({
        title: 'Scheduler: lag of the latest handover or run (s)',
        width: 12,
        left: [emf(METRIC.schedulerLag, 'lag (max)', 'Maximum')],
        leftAnnotations: [{ value: LAG_ALARM_SECONDS, label: 'alarm' }],
      }),
    ];
  }
}
