/**
 * Runs the webhook retry workflow locally: the same ASL file the stack deploys
 * (lambda/webhooks/workflows/webhook-retry.asl.json), executed by aws-local-stepfunctions with real waits.
 * Its one Task, the SQS integration (`arn:aws:states:::sqs:sendMessage`), is bound through the
 * runner's task override to a real SendMessage on the local queue (fauxqs) with the parameters the
 * ASL evaluated, as Step Functions calls SQS with them. Like Step Functions, it refuses an
 * execution input above 256 KiB and fails a Task whose input or output is above that.
 *
 * Like Step Functions, DescribeExecution answers eventually consistently: "This operation is
 * eventually consistent. The results are best effort and may not reflect very recent updates and
 * changes." (https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html;
 * reported: a SUCCEEDED execution described without its output, https://github.com/aws/aws-sdk-js/issues/2462).
 * An execution that closed less than `MSG_AWS_HARSH_SFN_DESCRIBE_LAG_MS` ago (1000 ms by default;
 * 0 turns it off, as does `MSG_AWS_HARSH=0`) is still described RUNNING, without error and cause.
 * StartExecution's rules for a used name see the execution as it is (the name is taken at once).
 * Not emulated, as neither documented nor reported: an execution just started described as
 * ExecutionDoesNotExist.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { config } from '../lambda/core/config';
import { awsHarshEnabled } from './aws-harsh';
import { sqsClient } from '../lambda/core/adapters/sqs';
import { existingExecution, type RetryWorkflow, type StartResult } from '../lambda/webhooks/storage/retry-workflow';
import type { RetryState } from '../lambda/webhooks/rules/delivery';
import { retryExecutionInput, type RetryExecutionInput } from '../lambda/webhooks/rules/retry-input';
import type { ExecutionStatusEvent } from '../lambda/handlers/webhook-attempt';
import { DELIVERY_QUEUE_PLACEHOLDER, QUEUE_STATE, substitutedDefinition, type QueueTaskInput } from '../lambda/webhooks/workflows/definition';

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

/** An execution's status as DescribeExecution answers it (those this runner reaches). */
type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED';

interface Execution { input: string; startDate: number; status: ExecutionStatus; error?: string; cause?: string; closedAt?: number }

/** How long DescribeExecution goes on answering an execution's status before it closed, when the environment does not say. */
const DESCRIBE_LAG_DEFAULT_MS = 1000;

/** DescribeExecution's lag in ms, from `MSG_AWS_HARSH_SFN_DESCRIBE_LAG_MS` (0: off; off too when `MSG_AWS_HARSH` is). */
function describeLagMs(env: NodeJS.ProcessEnv = process.env): number {
  if (!awsHarshEnabled(env)) return 0;
  const v = env.MSG_AWS_HARSH_SFN_DESCRIBE_LAG_MS;
  if (v === undefined || v === '') return DESCRIBE_LAG_DEFAULT_MS;
  return /^\d+$/.test(v) ? Number(v) : DESCRIBE_LAG_DEFAULT_MS;
}

const alreadyExists = (name: string) => Object.assign(new Error(`Execution Already Exists: '${name}'`), { name: 'ExecutionAlreadyExists' });

export class LocalRetryWorkflow implements RetryWorkflow {
  private machineOf?: StateMachine;
  /** Open executions, with their abort. */
  private readonly open = new Map<string, { abort: () => void }>();
  /**
   * Every execution by name, open or closed: Step Functions keeps a Standard workflow's name for
   * 90 days and starts nothing under it again, so neither does this runner (a second delivery of
   * one message, a replay, needs its own name).
   */
  private readonly byName = new Map<string, Execution>();
  /** What each execution still does (its run, and the failed-execution rule's), for {@link stop}. */
  private readonly settling = new Set<Promise<unknown>>();
  private stopping = false;
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
   * ASL's backoff (tests of a failing send; the number of retries stays the ASL's);
   * `describeLagMs`, DescribeExecution's lag instead of the environment's ({@link describeLagMs}).
   */
  constructor(
    private readonly runAction: (event: ExecutionStatusEvent) => Promise<RetryState | undefined>,
    private readonly log: (line: string) => void = () => undefined,
    private readonly opts: { queueUrl?: string; retryIntervalMs?: number; describeLagMs?: number } = {},
  ) {
    this.describeLag = opts.describeLagMs ?? describeLagMs();
  }

  /** DescribeExecution's lag in ms (0: it answers the status as it is). */
  readonly describeLag: number;

  private get machine(): StateMachine {
    if (!this.machineOf) {
      const url = this.opts.queueUrl ?? config().webhookQueueUrl;
      if (!url) throw new Error('MSG_WEBHOOK_QUEUE_URL is not set: the local retry workflow has no delivery queue');
      const definition = substitutedDefinition({ [DELIVERY_QUEUE_PLACEHOLDER]: url }) as StateMachineDefinition;
      this.machineOf = new StateMachine(definition);
    }
    return this.machineOf;
  }

  /**
   * Starts an execution with the input the service's adapter sends, and takes the answer as that
   * adapter takes StartExecution's and DescribeExecution's (lambda/webhooks/storage/retry-workflow.ts).
   */
  async start(name: string, state: RetryState): Promise<StartResult> {
    try {
      this.startExecution(name, JSON.stringify(retryExecutionInput(state)));
      return 'started';
    } catch (e) {
      if ((e as Error).name !== 'ExecutionAlreadyExists') throw e;
      return existingExecution(this.describeExecution(name).status);
    }
  }

  /**
   * StartExecution of an input as its request carries it (a JSON string; the fault suite's SFN
   * transport serves it), with its rules for a name used before
   * (https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html,
   * `name`): the new execution does not run; while the original is open, the same input is
   * answered with success and the original's start, another input with ExecutionAlreadyExists;
   * once it closed, ExecutionAlreadyExists whatever the input.
   */
  startExecution(name: string, inputText: string): { startDate: number } {
    const seen = this.byName.get(name);
    if (seen) {
      if (seen.status === 'RUNNING' && seen.input === inputText) return { startDate: seen.startDate };
      throw alreadyExists(name);
    }
    const input = JSON.parse(inputText) as RetryExecutionInput;
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
    if (this.byName.size >= 100_000) for (const [n, e] of this.byName) if (e.status !== 'RUNNING') this.byName.delete(n);
    const execution: Execution = { input: inputText, startDate: Date.now(), status: 'RUNNING' };
    this.byName.set(name, execution);
    this.open.set(name, { abort: exec.abort });
    // Closed first, as Step Functions closes an execution before EventBridge carries its status
    // change: a start meeting the name meanwhile finds it closed.
    const result = exec.result.then(
      () => {
        Object.assign(execution, { status: this.stopping ? 'ABORTED' : 'SUCCEEDED', closedAt: Date.now() });
        this.open.delete(name);
      },
      async (e: Error) => {
        Object.assign(execution, { status: 'FAILED', error: e.name, cause: e.message, closedAt: Date.now() });
        this.open.delete(name);
        this.log(`local stepfunctions: execution ${name} failed: ${e.message}`);
        await this.executionFailed(name, input, e);
      },
    );
    this.settling.add(result);
    void result.finally(() => this.settling.delete(result));
    void (async () => {
      for await (const e of exec.eventLogs) if (e.type === 'StateEntered' || e.type === 'StateRetried') this.transitions++;
    })().catch(() => undefined);
    return { startDate: execution.startDate };
  }

  /**
   * DescribeExecution of an execution by name: its status, input and start, as they were
   * {@link describeLag} ms ago (one that closed since is still RUNNING); ExecutionDoesNotExist for
   * a name never started.
   */
  describeExecution(name: string): Readonly<Execution> {
    const e = this.byName.get(name);
    if (!e) throw Object.assign(new Error(`Execution Does Not Exist: '${name}'`), { name: 'ExecutionDoesNotExist' });
    if (e.closedAt !== undefined && Date.now() - e.closedAt < this.describeLag) return { input: e.input, startDate: e.startDate, status: 'RUNNING' };
    return e;
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
    return this.open.size;
  }

  /** Aborts every running execution (their waits would otherwise keep the process alive). */
  async stop() {
    this.stopping = true;
    for (const e of this.open.values()) e.abort();
    await Promise.allSettled([...this.settling]);
  }
}
