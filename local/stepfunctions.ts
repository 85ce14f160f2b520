/**
 * Runs the webhook retry workflow locally: the same ASL file the stack deploys
 * (lambda/workflows/webhook-retry.asl.json), executed by aws-local-stepfunctions with real waits
 * and its Task states bound to the same handler function the attempt Lambda runs. Like Step
 * Functions, it refuses an execution input above 256 KiB and fails a Task whose input or output
 * is above that.
 */
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { RetryWorkflow, StartResult } from '../lambda/adapters/retry-workflow';
import type { RetryState } from '../lambda/domain/delivery';
import type { AttemptEvent, ExecutionStatusEvent } from '../lambda/handlers/webhook-attempt';
import { ATTEMPT_FUNCTION_PLACEHOLDER, substitutedDefinition, TASK_STATES } from '../lambda/workflows/definition';

/** Step Functions' limit on an execution's input and on every state's input and output (UTF-8 bytes). */
export const STATE_DATA_LIMIT_BYTES = 256 * 1024;

const dataBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

/** Stands in for the attempt function's ARN, which the local handlers replace. */
export const LOCAL_ATTEMPT_FUNCTION_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:msg-webhook-attempt';

export class LocalRetryWorkflow implements RetryWorkflow {
  private readonly machine: StateMachine;
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

  constructor(
    private readonly runAction: (event: AttemptEvent | ExecutionStatusEvent) => Promise<RetryState | undefined>,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    const definition = substitutedDefinition({ [ATTEMPT_FUNCTION_PLACEHOLDER]: LOCAL_ATTEMPT_FUNCTION_ARN }) as StateMachineDefinition;
    this.machine = new StateMachine(definition);
  }

  async start(name: string, input: RetryState): Promise<StartResult> {
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
      const out = await this.runAction(i as AttemptEvent);
      if (dataBytes(out) > STATE_DATA_LIMIT_BYTES) throw Object.assign(new Error(`task output of ${dataBytes(out)} bytes exceeds ${STATE_DATA_LIMIT_BYTES} bytes`), { name: 'States.DataLimitExceeded' });
      return out as never;
    };
    const exec = this.machine.run(input as never, {
      overrides: { taskResourceLocalHandlers: { [TASK_STATES.attempt]: handler, [TASK_STATES.finish]: handler, [TASK_STATES.giveUp]: handler } },
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
  private async executionFailed(name: string, input: RetryState, e: Error) {
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
