/**
 * Runs the webhook retry workflow locally: the same ASL file the stack deploys
 * (lambda/workflows/webhook-retry.asl.json), executed by aws-local-stepfunctions with real waits.
 * Its one Task, the SQS integration (`arn:aws:states:::sqs:sendMessage`), is bound through the
 * runner's task override to a real SendMessage on the local queue (fauxqs) with the parameters the
 * ASL evaluated, as Step Functions calls SQS with them. Like Step Functions, it refuses an
 * execution input above 256 KiB and fails a Task whose input or output is above that.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { config } from '../lambda/config';
import { sqsClient } from '../lambda/adapters/sqs';
import type { RetryWorkflow, StartResult } from '../lambda/adapters/retry-workflow';
import type { RetryState } from '../lambda/domain/delivery';
import { retryExecutionInput, type RetryExecutionInput } from '../lambda/domain/retry-input';
import type { ExecutionStatusEvent } from '../lambda/handlers/webhook-attempt';
import { DELIVERY_QUEUE_PLACEHOLDER, QUEUE_STATE, substitutedDefinition, type QueueTaskInput } from '../lambda/workflows/definition';

/** Step Functions' limit on an execution's input and on every state's input and output (UTF-8 bytes). */
export const STATE_DATA_LIMIT_BYTES = 256 * 1024;

const dataBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

/**
 * The Queue state's SendMessage, made on the local queue: Step Functions passes the evaluated
 * Parameters to SQS and, on success, the state's result is SendMessage's response
 * (https://docs.aws.amazon.com/step-functions/latest/dg/connect-sqs.html). An error (a queue that
 * does not exist, a body SQS refuses) fails the Task, which the ASL's Retry then runs again.
 */
async function sendMessage(p: QueueTaskInput) {
  const out = await sqsClient().send(new SendMessageCommand({ QueueUrl: p.QueueUrl, MessageBody: p.MessageBody, ...(p.MessageGroupId ? { MessageGroupId: p.MessageGroupId } : {}) }));
  return { MessageId: out.MessageId, MD5OfMessageBody: out.MD5OfMessageBody };
}

export class LocalRetryWorkflow implements RetryWorkflow {
  private machineOf?: StateMachine;
  private readonly executions = new Map<string, { abort: () => void; result: Promise<unknown> }>();
  /**
   * Names of finished executions: Step Functions keeps a Standard workflow's name for 90 days and
   * starts nothing under it again (the adapter takes ExecutionAlreadyExists as "already started"),
   * so neither does this runner; a second delivery of one message (a replay) needs its own name.
   */
  private readonly finished = new Set<string>();
  /**
   * State transitions of every execution so far, as Step Functions Standard bills them: each
   * state entered, and each Retry of a Task (https://aws.amazon.com/step-functions/pricing/:
   * "including retries"). The bench prices a dead endpoint's way to disabled with it.
   */
  transitions = 0;

  /**
   * `runAction` is the attempt function's handler, run as the stack's rule on failed executions
   * runs it. Options: `queueUrl`, the delivery queue's (by default the process's
   * MSG_WEBHOOK_QUEUE_URL when the first execution starts), substituted into the definition as the
   * stack does; `retryIntervalMs`, the wait between the Queue state's retries instead of the
   * ASL's backoff (tests of a failing send; the number of retries stays the ASL's).
   */
  constructor(
    private readonly runAction: (event: ExecutionStatusEvent) => Promise<RetryState | undefined>,
    private readonly log: (line: string) => void = () => undefined,
    private readonly opts: { queueUrl?: string; retryIntervalMs?: number } = {},
  ) {}

  private get machine(): StateMachine {
    if (!this.machineOf) {
      const url = this.opts.queueUrl ?? config().webhookQueueUrl;
      if (!url) throw new Error('MSG_WEBHOOK_QUEUE_URL is not set: the local retry workflow has no delivery queue');
      const definition = substitutedDefinition({ [DELIVERY_QUEUE_PLACEHOLDER]: url }) as StateMachineDefinition;
      this.machineOf = new StateMachine(definition);
    }
    return this.machineOf;
  }

  /** Starts an execution with the input the service's adapter sends (lambda/adapters/retry-workflow.ts). */
  async start(name: string, state: RetryState): Promise<StartResult> {
    return this.startExecution(name, retryExecutionInput(state));
  }

  /** Starts an execution of an input as StartExecution carries it (the fault suite's SFN transport). */
  async startExecution(name: string, input: RetryExecutionInput): Promise<StartResult> {
    // Like StartExecution with a running or recent execution's name: nothing new starts, and
    // DescribeExecution tells running from closed.
    if (this.executions.has(name)) return 'running';
    if (this.finished.has(name)) return 'closed';
    // Like StartExecution, which refuses an input above the limit.
    if (dataBytes(input) > STATE_DATA_LIMIT_BYTES) {
      throw Object.assign(new Error(`execution input of ${dataBytes(input)} bytes exceeds ${STATE_DATA_LIMIT_BYTES} bytes`), { name: 'ValidationException' });
    }
    // Like a Task whose input or result is above the limit: States.DataLimitExceeded.
    const handler = async (i: unknown) => {
      if (dataBytes(i) > STATE_DATA_LIMIT_BYTES) throw Object.assign(new Error(`task input of ${dataBytes(i)} bytes exceeds ${STATE_DATA_LIMIT_BYTES} bytes`), { name: 'States.DataLimitExceeded' });
      const out = await sendMessage(i as unknown as QueueTaskInput);
      if (dataBytes(out) > STATE_DATA_LIMIT_BYTES) throw Object.assign(new Error(`task output of ${dataBytes(out)} bytes exceeds ${STATE_DATA_LIMIT_BYTES} bytes`), { name: 'States.DataLimitExceeded' });
      return out as never;
    };
    const exec = this.machine.run(input as never, {
      overrides: {
        taskResourceLocalHandlers: { [QUEUE_STATE]: handler },
        ...(this.opts.retryIntervalMs !== undefined ? { retryIntervalOverrides: { [QUEUE_STATE]: this.opts.retryIntervalMs } } : {}),
      },
      noThrowOnAbort: true,
    });
    const result = exec.result
      .catch(async (e: Error) => {
        this.log(`local stepfunctions: execution ${name} failed: ${e.message}`);
        await this.executionFailed(name, input, e);
      })
      .finally(() => {
        this.executions.delete(name);
        if (this.finished.size >= 100_000) this.finished.clear();
        this.finished.add(name);
      });
    void (async () => {
      for await (const e of exec.eventLogs) if (e.type === 'StateEntered' || e.type === 'StateRetried') this.transitions++;
    })().catch(() => undefined);
    this.executions.set(name, { abort: exec.abort, result });
    return 'started';
  }

  /**
   * What the stack's EventBridge rule on failed executions does (lib/constructs/webhook-delivery.ts):
   * the attempt function gets the execution's input and ends its delivery. EventBridge retries a
   * target that failed (the rule's retry policy); so does this, 3 times, 2 s apart.
   */
  private async executionFailed(name: string, input: unknown, e: Error) {
    const event: ExecutionStatusEvent = {
      'detail-type': 'Step Functions Execution Status Change',
      detail: { status: 'FAILED', executionArn: name, input: JSON.stringify(input), error: e.name, cause: e.message },
    };
    for (let attempt = 1; attempt <= 4; attempt++) {
      try {
        await this.runAction(event);
        return;
      } catch (err) {
        this.log(`local stepfunctions: failed execution ${name} not ended (try ${attempt}): ${(err as Error).message}`);
        if (attempt < 4) await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }

  /** Executions running now. */
  get running() {
    return this.executions.size;
  }

  /** Aborts every running execution (their waits would otherwise keep the process alive). */
  async stop() {
    const all = [...this.executions.values()];
    for (const e of all) e.abort();
    await Promise.allSettled(all.map((e) => e.result));
  }
}
