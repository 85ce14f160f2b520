/**
 * The sweeper in AWS: lambda/handlers/sweeper.ts (every task of lambda/sweeper/tasks.ts) as a
 * function of the Functions construct, invoked every minute by an EventBridge rule.
 *
 * - One sweep at a time: a lease in the meta table (lambda/sweeper/storage/sweeper-lease.ts), taken by the
 *   handler before it sweeps; an invocation that finds it held returns at once. Two overlapping
 *   runs would read the same expired messages, purge jobs and logs, do that work twice and race
 *   each other on the queue counters they release and reconcile.
 * - No reserved concurrency by default: Lambda refuses a reservation that would leave the
 *   account's unreserved concurrency below its minimum ("decreases account's
 *   UnreservedConcurrentExecution below its minimum value of [10]" in a new account whose quota is
 *   10), and the whole first deploy rolls back. {@link SweeperProps.reservedConcurrency} opts in
 *   where the account has room (`npm run preflight` checks it).
 * - Each task's work per run is bounded (it resumes on the next run), so a run fits in
 *   {@link SWEEP_TIMEOUT}.
 * - Both asynchronous legs end in one encrypted dead-letter queue: EventBridge's delivery to
 *   Lambda (target retry policy, then the DLQ), and Lambda's asynchronous invocation (a sweep that
 *   failed or timed out, or waited longer than {@link SWEEP_MAX_EVENT_AGE} in Lambda's
 *   asynchronous queue). A sweep is never retried: the next scheduled one does the same work with
 *   fresher data. A DLQ that is not empty therefore means sweeps fail, time out or are throttled
 *   (a sweep that finds the lease held succeeds without sweeping).
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Functions } from './functions';

/** How often the sweeper runs (lambda/sweeper/tasks.ts: "every minute"). */
const SWEEP_INTERVAL = Duration.minutes(1);
/**
 * A run's bounded work (500 expired messages per queue, 2000 purged per job, trims per log) takes
 * seconds; two minutes leave room for a large backlog without letting a stuck run hold the one
 * concurrency slot for long.
 */
const SWEEP_TIMEOUT = Duration.minutes(2);
/**
 * How long an invocation may wait in Lambda's asynchronous queue (the account throttling it, or a
 * reservation being busy) before Lambda drops it to the DLQ. Lambda's minimum; by then the next
 * scheduled sweep is due anyway.
 */
const SWEEP_MAX_EVENT_AGE = Duration.minutes(1);
/** EventBridge retries of a failed delivery to Lambda (not of a failed sweep). */
const SCHEDULE_RETRY_ATTEMPTS = 2;

export interface SweeperProps {
  readonly functions: Functions;
  /** @default SWEEP_INTERVAL (1 minute) */
  readonly interval?: Duration;
  /**
   * Concurrent executions reserved for the sweeper (and allowed at most). Not needed for "one
   * sweep at a time" (the lease does that); it guarantees the sweeper a slot when the functions of
   * the API use the whole account quota. Lambda refuses it at deploy unless the account keeps its
   * minimum unreserved concurrency (100, or the whole quota when that is lower) beside it.
   * @default none
   */
  readonly reservedConcurrency?: number;
}

export class Sweeper extends Construct {
  readonly function: NodejsFunction;
  readonly rule: Rule;
  /** Sweep events that EventBridge could not deliver, and sweeps that failed or were dropped. */
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: SweeperProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself a dead-letter queue (of the sweep schedule\'s target and of the sweeper\'s asynchronous invocations); it needs no DLQ of its own.',
    });

    this.function = props.functions.add('sweeper', {
      description: 'Sweeper: expires and purges queue messages, trims stream and subscription logs, closes purge jobs (every minute)',
      timeout: SWEEP_TIMEOUT,
      reservedConcurrentExecutions: props.reservedConcurrency,
    });
    this.function.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: SWEEP_MAX_EVENT_AGE,
      onFailure: new SqsDestination(this.deadLetterQueue),
    });

    this.rule = new Rule(this, 'Schedule', {
      description: 'Runs the sweeper (lambda/sweeper/tasks.ts)',
      schedule: Schedule.rate(props.interval ?? SWEEP_INTERVAL),
      targets: [
        new LambdaFunction(this.function, {
          deadLetterQueue: this.deadLetterQueue,
          retryAttempts: SCHEDULE_RETRY_ATTEMPTS,
          // A sweep event older than this is superseded by a newer one.
          maxEventAge: Duration.minutes(5),
        }),
      ],
    });
  }
}
