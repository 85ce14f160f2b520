/**
 * The retry workflow's ASL file, executed by aws-local-stepfunctions (as the local runtime does)
 * with its Task states bound to scripted attempt functions: the loop, the computed waits (real
 * seconds), and the hand-over to Finish.
 */
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { RetryState } from '../../lambda/domain/delivery';
import type { AttemptEvent } from '../../lambda/handlers/webhook-attempt';
import { ATTEMPT_FUNCTION_PLACEHOLDER, substitutedDefinition, TASK_STATES } from '../../lambda/workflows/definition';

const ARN = 'arn:aws:lambda:us-east-1:123456789012:function:attempt';
const definition = substitutedDefinition({ [ATTEMPT_FUNCTION_PLACEHOLDER]: ARN }) as StateMachineDefinition & { States: Record<string, any> };

// Constructing validates the definition (about a second), so once, as the local runtime does.
const machine = new StateMachine(definition);

const start = (p: Partial<RetryState>): RetryState => ({
  job: { namespace: 'ns', webhook_id: 'id', webhook_name: 'w', message: {} as never }, attempts: 1, wait_seconds: 1, last_error: 'HTTP 500', outcome: 'retry', ...p,
});

/** Runs the workflow; `outcomes` scripts each attempt, `waits` the wait each retry asks for next. */
async function run(input: RetryState, outcomes: RetryState['outcome'][], waits: number[] = []) {
  const calls: { action: string; at: number; state: RetryState }[] = [];
  const t0 = Date.now();
  const handler = async (e: unknown) => {
    const { action, state } = e as AttemptEvent;
    calls.push({ action, at: Date.now() - t0, state });
    if (action === 'finish') return state as never;
    const i = calls.filter((c) => c.action === 'attempt').length - 1;
    return { ...state, attempts: state.attempts + 1, outcome: outcomes[i], wait_seconds: waits[i] ?? 0 } as never;
  };
  const exec = machine.run(input as never, {
    overrides: { taskResourceLocalHandlers: { [TASK_STATES.attempt]: handler, [TASK_STATES.finish]: handler, [TASK_STATES.giveUp]: handler } },
  });
  const result = (await exec.result) as unknown as RetryState;
  return { calls, result };
}

describe('webhook-retry.asl.json', () => {
  it('substitutes the attempt function ARN into both Task states', () => {
    expect(definition.States.Attempt.Resource).toBe(ARN);
    expect(definition.States.Finish.Resource).toBe(ARN);
    expect(definition.States.Wait.SecondsPath).toBe('$.wait_seconds');
  });

  it('waits the computed seconds before each attempt and loops until success, then finishes once', async () => {
    const { calls, result } = await run(start({ wait_seconds: 1 }), ['retry', 'success'], [2]);
    expect(calls.map((c) => c.action)).toEqual(['attempt', 'attempt', 'finish']);
    expect(calls[0].at).toBeGreaterThanOrEqual(950);
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(1950);
    expect(calls[1].at - calls[0].at).toBeLessThan(3500);
    expect(result).toMatchObject({ outcome: 'success', attempts: 3 });
  }, 15000);

  it('finishes with the failure once the attempts say retries are exhausted', async () => {
    const { calls, result } = await run(start({ wait_seconds: 0 }), ['failed']);
    expect(calls.map((c) => c.action)).toEqual(['attempt', 'finish']);
    expect(calls[1].state.outcome).toBe('failed');
    expect(result.outcome).toBe('failed');
  });

  it('does not wait for a zero wait (retry_delay 0)', async () => {
    const { calls } = await run(start({ wait_seconds: 0 }), ['retry', 'success'], [0]);
    expect(calls[1].at).toBeLessThan(500);
  });

  it('ends without Finish when the webhook went away', async () => {
    const { calls, result } = await run(start({ wait_seconds: 0 }), ['dropped']);
    expect(calls.map((c) => c.action)).toEqual(['attempt']);
    expect(result.outcome).toBe('dropped');
  });
});
