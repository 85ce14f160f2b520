/**
 * The retry workflow of failed webhook deliveries: a Step Functions execution of
 * lambda/workflows/webhook-retry.asl.json in AWS (StartExecution), replaced at start-up by the
 * local runtime's runner of the same file (local/stepfunctions.ts).
 */
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { config } from '../config';
import { withClientPlugins } from '../client-plugins';
import type { RetryState } from '../domain/delivery';

export interface RetryWorkflow {
  /** Starts one execution; `name` makes a redelivered SQS message start it only once. */
  start(name: string, input: RetryState): Promise<void>;
}

/**
 * Execution names: 1 to 80 characters of letters, digits, `-` and `_`. Step Functions keeps a
 * Standard workflow's name for 90 days and starts nothing under a name it has seen, so a replay
 * (extension) adds its own id: 26 + 1 + 26 + 1 + 26 = 80 characters.
 */
export const executionName = (webhookId: string, messageId: string, replayId?: string) =>
  `${webhookId}-${messageId}${replayId ? `-${replayId}` : ''}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80);

export class StepFunctionsRetryWorkflow implements RetryWorkflow {
  constructor(private readonly client: SFNClient, private readonly stateMachineArn: string) {}

  async start(name: string, input: RetryState): Promise<void> {
    try {
      await this.client.send(new StartExecutionCommand({ stateMachineArn: this.stateMachineArn, name, input: JSON.stringify(input) }));
    } catch (e) {
      // The same name and input again (an SQS redelivery after a crash) is already running: fine.
      if ((e as { name?: string }).name === 'ExecutionAlreadyExists') return;
      throw e;
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
