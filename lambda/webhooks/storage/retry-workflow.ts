/**
 * The retry workflow of failed webhook deliveries: a Step Functions execution of
 * lambda/webhooks/workflows/webhook-retry.asl.json in AWS (StartExecution), replaced at start-up by the
 * local runtime's runner of the same file (local/stepfunctions.ts).
 */
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { isPassingDependencyFailure, withRetries } from '../../core/rules/dependency-errors';
import { config } from '../../core/config';
import { withClientPlugins } from '../../core/client-plugins';
import type { RetryState } from '../rules/delivery';
import { retryExecutionInput } from '../rules/retry-input';

/**
 * What a start did: `started`, or found an execution of that name `running` (a repeated start:
 * fine), `closed` (it ran and succeeded: nothing will run under that name again for 90 days), or
 * `failed` (it closed as failed, timed out or aborted: its retry job never reached the queue).
 */
export type StartResult = 'started' | 'running' | 'closed' | 'failed';

/**
 * What a start that met ExecutionAlreadyExists found, by the execution's DescribeExecution status
 * (RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE:
 * https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html).
 */
export const existingExecution = (status: string | undefined): StartResult =>
  status === 'RUNNING' || status === 'PENDING_REDRIVE' ? 'running' : status === 'SUCCEEDED' ? 'closed' : 'failed';

export interface RetryWorkflow {
  /**
   * Starts one execution of `input` as {@link retryExecutionInput} encodes it (the job made the
   * queue's message body); `name` makes a redelivered SQS message start it only once.
   */
  start(name: string, input: RetryState): Promise<StartResult>;
}

/**
 * A start that failed with throttling or unavailability is tried again for about 3 s beyond the
 * SDK's retries: StartExecution is limited to a few hundred starts per second per account and
 * region (token bucket, https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html#service-limits-api-action-throttling-general).
 * Beyond that the caller puts the job back on the queue (lambda/webhooks/deliver.ts).
 */
const START_RETRIES = { tries: 6, firstDelayMs: 100, retryIf: isPassingDependencyFailure };

/** The ARN of an execution of a state machine (arn:aws:states:region:account:execution:machine:name). */
export const executionArn = (stateMachineArn: string, name: string) => `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;

/**
 * Execution names: 1 to 80 characters of letters, digits, `-` and `_`. Step Functions keeps a
 * Standard workflow's name for 90 days and starts nothing under a name it has seen, so a replay
 * (extension) adds its own id: 26 + 1 + 26 + 1 + 26 = 80 characters.
 */
export const executionName = (webhookId: string, messageId: string, replayId?: string, attempts = 1) => {
  // The retries after a retry the workflow handed to the queue run in an execution of their own,
  // named by the attempts made (a Standard execution's name is taken for 90 days once used).
  const after = attempts > 1 ? `-a${attempts}` : '';
  return `${webhookId}-${messageId}${replayId ? `-${replayId}` : ''}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80 - after.length) + after;
};

export class StepFunctionsRetryWorkflow implements RetryWorkflow {
  constructor(private readonly client: SFNClient, private readonly stateMachineArn: string) {}

  async start(name: string, input: RetryState): Promise<StartResult> {
    try {
      await withRetries(() => this.client.send(new StartExecutionCommand({ stateMachineArn: this.stateMachineArn, name, input: JSON.stringify(retryExecutionInput(input)) })), START_RETRIES);
      return 'started';
    } catch (e) {
      if ((e as { name?: string }).name !== 'ExecutionAlreadyExists') throw e;
      // The name was used: by a running execution with another input (an SQS redelivery after a
      // crash: fine; one with the same input is answered as started,
      // https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html), or
      // by one that ended. Which one decides whether the delivery still has an owner.
      const out = await withRetries(() => this.client.send(new DescribeExecutionCommand({ executionArn: executionArn(this.stateMachineArn, name) })), START_RETRIES);
      return existingExecution(out.status);
    }
  }
}

let workflow: RetryWorkflow | undefined;

export function retryWorkflow(): RetryWorkflow {
  if (!workflow) {
    const arn = config().webhookRetryStateMachineArn;
    if (!arn) throw new Error('MSG_WEBHOOK_RETRY_STATE_MACHINE_ARN is not set: no webhook retry workflow');
    workflow = new StepFunctionsRetryWorkflow(withClientPlugins('sfn', new SFNClient({ region: config().region })), arn);
  }
  return workflow;
}

/** Replaces the workflow (the local runtime, tests); `undefined` restores the Step Functions default. */
export function setRetryWorkflow(w: RetryWorkflow | undefined) {
  workflow = w;
}
