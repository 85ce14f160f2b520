/**
 * Webhook delivery in AWS (DESIGN.md sections 1 and 9): the SQS delivery queue (SSE, TLS only)
 * with its own DLQ, the delivery Lambda on it (partial batch failures), the retry state machine
 * from the one ASL file in the repository (lambda/webhooks/workflows/webhook-retry.asl.json), which puts
 * retry jobs back on the queue, the function that ends a failed execution's delivery,
 * least-privilege grants, and alarms on the DLQ depth, on delivery failures and
 * on the workflow itself.
 *
 * Functions that publish (the publish group, anything that dead-letters or runs hooks) enqueue
 * delivery jobs: give each one to {@link WebhookDelivery.allowEnqueue}.
 */
import { CfnElement, Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { FilterPattern, LogGroup, MetricFilter, RetentionDays, type LogGroupProps } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import { DELIVERY_QUEUE_PLACEHOLDER, webhookRetryAslPath } from '../../lambda/webhooks/workflows/definition';
import {
  DELIVERY_BATCH_SIZE, DELIVERY_BATCHING_WINDOW_SECONDS, DELIVERY_MAX_CONCURRENCY_LIMIT, DELIVERY_MIN_CONCURRENCY, DELIVERY_TIMEOUT_SECONDS, defaultDeliveryConcurrency, namespaceShareFor,
} from '../../lambda/webhooks/storage/delivery-queue';
import { DEFAULT_ACCOUNT_CONCURRENCY } from '../../lambda/core/rules/long-poll-limits';
import type { Functions } from './functions';

export interface WebhookDeliveryProps {
  /**
   * Creates the delivery and attempt functions with the stack's shared settings (runtime,
   * tracing, log group, environment) and their table grants (lib/table-access.ts).
   */
  readonly functions: Functions;
  /** Retention and removal policy of the retry workflow's log group. */
  readonly logRetention?: LogGroupProps['retention'];
  readonly removalPolicy?: LogGroupProps['removalPolicy'];
  /** Namespace of the failure metric (the functions' POWERTOOLS_METRICS_NAMESPACE). @default 'Messaging' */
  readonly metricsNamespace?: string;
  /** Failed deliveries (after all retries) in 5 minutes that raise the alarm. @default 10 */
  readonly failureAlarmThreshold?: number;
  /** The account's Lambda concurrency quota (the default concurrency is a quarter of it). @default 1000 */
  readonly accountConcurrency?: number;
  /**
   * Delivery batches at once (the SQS event source's maximum concurrency, 2 to 1,000, and below
   * the account's concurrency); one namespace's share of deliveries in flight follows it (a
   * quarter of the jobs it holds). docs/performance.md "Webhook throughput on AWS" sizes it.
   * @default a quarter of `accountConcurrency` (250 for 1,000), see defaultDeliveryConcurrency
   */
  readonly maxConcurrency?: number;
}

/**
 * The delivery Lambda makes one attempt per record, all records of a batch at once; 30 s is the
 * longest webhook timeout. Declared in lambda/ (the namespace share reclaims a batch's count once
 * it is older than twice this: lambda/webhooks/share.ts).
 */
export const DELIVERY_TIMEOUT = Duration.seconds(DELIVERY_TIMEOUT_SECONDS);
/** AWS: a queue's visibility timeout should be at least six times its function's timeout. */
const QUEUE_VISIBILITY = Duration.seconds(DELIVERY_TIMEOUT.toSeconds() * 6);
/** Receives before SQS moves a job to the DLQ (only records that throw are received again). */
const MAX_RECEIVE_COUNT = 5;
/** The log line of lambda/webhooks/deliver.ts (DELIVERY_FAILED_LOG). */
const DELIVERY_FAILED_LOG = 'webhook delivery failed';

export class WebhookDelivery extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly deliveryFunction: NodejsFunction;
  readonly attemptFunction: NodejsFunction;
  readonly stateMachine: StateMachine;
  /** Failed-execution events the attempt function could not take (EventBridge's target DLQ). */
  readonly executionFailuresDeadLetterQueue: Queue;
  readonly alarms: Alarm[] = [];
  /** Delivery batches at once (the event source's maximum concurrency). */
  readonly maxConcurrency: number;

  constructor(scope: Construct, id: string, props: WebhookDeliveryProps) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE;
    const metricsNamespace = props.metricsNamespace ?? 'Messaging';
    const account = props.accountConcurrency ?? DEFAULT_ACCOUNT_CONCURRENCY;
    this.maxConcurrency = props.maxConcurrency ?? defaultDeliveryConcurrency(account);
    const c = this.maxConcurrency;
    if (!Number.isInteger(c) || c < DELIVERY_MIN_CONCURRENCY || c > DELIVERY_MAX_CONCURRENCY_LIMIT || c >= account) {
      throw new Error(`webhook delivery maxConcurrency must be a whole number from ${DELIVERY_MIN_CONCURRENCY} to ${DELIVERY_MAX_CONCURRENCY_LIMIT} and below the account's concurrency (${account}), got ${c}`);
    }

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: QUEUE_VISIBILITY,
      // Jobs stay under 200 KiB (a larger message goes by reference, lambda/webhooks/rules/delivery.ts
      // packJobs); the 1 MiB maximum is headroom, not a need.
      maxMessageSizeBytes: 1024 * 1024,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });

    const fn = (id: 'webhookAttempt' | 'webhookDelivery', description: string) => {
      const f = props.functions.add(id, { description, timeout: DELIVERY_TIMEOUT, memorySize: 512 });
      // Both publish hook messages (on_success, on_failure, send_to_dlq), and a hook may publish
      // to a topic a webhook is bound to: that enqueues delivery jobs too.
      this.allowEnqueue(f);
      new MetricFilter(this, `${id}Failures`, {
        logGroup: f.logGroup,
        metricNamespace: metricsNamespace,
        metricName: 'WebhookDeliveryFailures',
        filterPattern: FilterPattern.stringValue('$.message', '=', DELIVERY_FAILED_LOG),
        metricValue: '1',
      });
      return f;
    };

    this.attemptFunction = fn('webhookAttempt', 'ends the delivery of a failed retry workflow execution (on_failure hook, replay copy)');
    const workflowLogs = new LogGroup(this, 'RetryWorkflowLogs', {
      logGroupName: vendedLogGroupName(this, 'states', 'RetryWorkflow'),
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy,
    });
    this.stateMachine = new StateMachine(this, 'RetryWorkflow', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromFile(webhookRetryAslPath(props.functions.projectRoot)),
      definitionSubstitutions: { [DELIVERY_QUEUE_PLACEHOLDER]: this.queue.queueUrl },
      tracingEnabled: true,
      // Execution data holds message payloads: logged events carry no input or output.
      logs: { destination: workflowLogs, level: LogLevel.ALL, includeExecutionData: false },
    });
    // The definition comes from a file, so CDK cannot see the Queue Task's queue: grant it here,
    // sqs:SendMessage on the delivery queue only (the SQS integration calls SendMessage,
    // https://docs.aws.amazon.com/step-functions/latest/dg/connect-sqs.html). The queue is encrypted
    // with SQS-managed keys (SSE-SQS), which need no KMS permission.
    this.stateMachine.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
    Validations.of(this.stateMachine).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray tracing and CloudWatch Logs delivery of Step Functions (logs:CreateLogDelivery and related), which support no resource-level permissions.',
    });

    // An execution that fails (its SendMessage failing past the Queue state's retries, an abort or
    // a timeout) would leave its delivery `retrying`, its hook unrun: Step Functions sends its status change to EventBridge
    // (https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html, best-effort delivery),
    // and the attempt function ends the delivery from the execution's input (`execution_failed`).
    this.executionFailuresDeadLetterQueue = new Queue(this, 'ExecutionFailuresDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.executionFailuresDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself a dead-letter queue (of the failed-execution rule\'s target); it needs no DLQ of its own.',
    });
    // EventBridge invokes the function asynchronously: its DLQ takes only events it could not hand
    // to Lambda. An event the function then fails on is retried twice by Lambda and, past those,
    // discarded unless the function has an on-failure destination
    // (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html): it goes
    // to the same queue, so its alarm says that a delivery stays retrying, either way.
    this.attemptFunction.configureAsyncInvoke({ retryAttempts: 2, maxEventAge: Duration.hours(6), onFailure: new SqsDestination(this.executionFailuresDeadLetterQueue) });
    new Rule(this, 'RetryExecutionFailed', {
      description: 'Ends the delivery of a retry workflow execution that failed, timed out or was aborted (lambda/handlers/webhook-attempt.ts)',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: { status: ['FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [this.stateMachine.stateMachineArn] },
      },
      targets: [new LambdaTarget(this.attemptFunction, { deadLetterQueue: this.executionFailuresDeadLetterQueue, retryAttempts: 8, maxEventAge: Duration.hours(24) })],
    });

    this.deliveryFunction = fn('webhookDelivery', 'webhook delivery (first attempt of each SQS delivery job)');
    this.deliveryFunction.addEnvironment('MSG_WEBHOOK_RETRY_STATE_MACHINE_ARN', this.stateMachine.stateMachineArn);
    this.stateMachine.grantStartExecution(this.deliveryFunction);
    // A start that finds its name taken asks whether that execution still runs:
    // ExecutionAlreadyExists for a closed execution is not taken as "already started".
    this.stateMachine.grantExecution(this.deliveryFunction, 'states:DescribeExecution');
    const workflowId = Stack.of(this).getLogicalId(this.stateMachine.node.defaultChild as CfnElement);
    Validations.of(this.deliveryFunction.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"${workflowId}"}]}]}:*]`,
      reason: 'states:DescribeExecution on the executions of the retry workflow only (grantExecution: execution ARNs are the state machine name plus the execution name).',
    });
    // At most maxConcurrency batches at once: a backlog takes neither all of the account's Lambda
    // concurrency nor more of it than one namespace's share allows (lambda/webhooks/share.ts),
    // and the share is a quarter of what these batches hold.
    this.deliveryFunction.addEnvironment('MSG_WEBHOOK_NAMESPACE_SHARE', String(namespaceShareFor(c)));
    // Batches of up to DELIVERY_BATCH_SIZE, gathered within DELIVERY_BATCHING_WINDOW_SECONDS when it
    // is set (none by default: a window can delay a quiet queue's delivery by up to 20 s in AWS).
    this.deliveryFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: DELIVERY_BATCH_SIZE,
        maxBatchingWindow: DELIVERY_BATCHING_WINDOW_SECONDS > 0 ? Duration.seconds(DELIVERY_BATCHING_WINDOW_SECONDS) : undefined,
        reportBatchItemFailures: true,
        maxConcurrency: c,
      }),
    );

    this.alarms.push(
      new Alarm(this, 'DeadLetterQueueAlarm', {
        alarmDescription: 'Webhook delivery jobs reached the DLQ: the delivery function failed on them repeatedly (storage or Step Functions errors, not failing receivers).',
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, 'DeliveryFailuresAlarm', {
        alarmDescription: 'Webhook deliveries failed after all their retries.',
        // Both functions' metric filters count into this one metric.
        metric: new Metric({ namespace: metricsNamespace, metricName: 'WebhookDeliveryFailures', statistic: 'Sum', period: Duration.minutes(5) }),
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        threshold: props.failureAlarmThreshold ?? 10,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, 'ExecutionFailuresDeadLetterQueueAlarm', {
        alarmDescription: 'Failed retry workflow executions whose delivery could not be ended (the attempt function failed on their event): those deliveries stay retrying.',
        metric: this.executionFailuresDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
      new Alarm(this, 'RetryWorkflowFailedAlarm', {
        alarmDescription: 'Retry workflow executions failed (SendMessage to the delivery queue kept failing): their deliveries end as failed.',
        metric: this.stateMachine.metricFailed({ period: Duration.minutes(5) }),
        threshold: 1,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  /**
   * Lets a function enqueue delivery jobs: sqs:SendMessage on the queue (SendMessageBatch needs
   * it too) and its URL in the environment. Not grantSendMessages: that adds GetQueueAttributes
   * and GetQueueUrl, which enqueuing never calls (the URL comes from the environment).
   */
  allowEnqueue(fn: LambdaFunction) {
    fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
    fn.addEnvironment('MSG_WEBHOOK_QUEUE_URL', this.queue.queueUrl);
  }
}

/**
 * A log group name under `/aws/vendedlogs/{service}/`. Step Functions delivers logs through
 * CloudWatch Logs' vended-logs path: for a log group outside this prefix it adds a statement to
 * the account's CloudWatch Logs resource policy, which is limited to 5120 characters per account
 * and region, so in a busy account the deploy fails ("resource policy size exceeded"); under the
 * prefix no statement is needed (AWS: "Logging using CloudWatch Logs" in the Step Functions
 * developer guide).
 *
 * The name ends with the first group of the stack's id (a UUID per stack incarnation): a log group
 * kept from a deleted stack then never blocks a new stack of the same name with "already exists".
 */
function vendedLogGroupName(scope: Construct, service: 'states', name: string): string {
  const stack = Stack.of(scope);
  const incarnation = Fn.select(0, Fn.split('-', Fn.select(2, Fn.split('/', stack.stackId))));
  return Fn.join('', [`/aws/vendedlogs/${service}/`, stack.stackName, `-${name}-`, incarnation]);
}
