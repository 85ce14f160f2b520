/**
 * A failed retry workflow execution's end (DESIGN.md section 9): the delivery ends as failed
 * unless its record says it ended, its counters and log pages are flushed, and a delivery whose
 * log page or retained copy was not written fails the Task so that it runs again. The target of
 * the stack's rule on failed executions (lambda/handlers/webhook-attempt.ts); locally, the runner
 * of the workflow (local/stepfunctions.ts) calls {@link runAction} the same way.
 */
import type { RetryState } from './rules/delivery';
import { retryStateOf } from './rules/retry-input';
import { logger } from '../core/observability';
import { finishDelivery, giveUpDelivery } from './deliver';
import { flushDeliveryWrites } from './flush';

/** An execution that failed, with its input (the state the delivery function started it with). */
export interface AttemptEvent {
  action: 'execution_failed';
  state: RetryState;
}

/**
 * What EventBridge sends when an execution of the retry workflow stops other than by success
 * (the stack's rule matches FAILED, TIMED_OUT and ABORTED): `detail.input` is the execution's
 * input as a string, absent when too large to include
 * (https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html).
 */
export interface ExecutionStatusEvent {
  'detail-type': 'Step Functions Execution Status Change';
  detail: { status: string; executionArn?: string; input?: string | null; error?: string | null; cause?: string | null };
}

async function act(event: AttemptEvent): Promise<RetryState> {
  // The delivery ends as failed unless its record says it ended (a copy of the job reached the
  // queue before the failure), and its hook runs unless it ran.
  if (event.action === 'execution_failed') return finishDelivery(await giveUpDelivery(event.state));
  throw new Error(`unknown webhook workflow action ${String((event as { action?: unknown }).action)}`);
}

/** The action of an execution status event, or undefined when its input was not included. */
function fromStatusEvent(e: ExecutionStatusEvent): AttemptEvent | undefined {
  const { status, input, error, cause, executionArn } = e.detail;
  if (!input) {
    logger.error('webhook retry execution failed and its input was not included in the event: its delivery is left retrying', { executionArn, status });
    return undefined;
  }
  return { action: 'execution_failed', state: { ...retryStateOf(JSON.parse(input)), failure: { Error: error ?? `execution ${status}`, ...(cause ? { Cause: cause } : {}) } } };
}

/** Runs the action, then writes the counters and log pages it collected (also when it threw). */
export async function runAction(event: AttemptEvent | ExecutionStatusEvent): Promise<RetryState | undefined> {
  const action = 'detail-type' in event ? fromStatusEvent(event) : event;
  if (!action) return undefined;
  let state: RetryState;
  try {
    state = await act(action);
  } finally {
    const unkept = await flushDeliveryWrites();
    // A delivery that ended in failure whose log page or retained copy could not be written: the
    // Task fails and Step Functions runs it again, which finds the record and writes them.
    if (unkept.size) throw new Error('a failed webhook delivery is not kept for replay: its delivery log page or retained copy was not written');
  }
  return state;
}

