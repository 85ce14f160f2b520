/**
 * The retry workflow's execution input (lambda/webhooks/workflows/webhook-retry.asl.json): the retry job
 * already encoded as the delivery queue's message body, so the workflow passes it to SendMessage
 * as is and never serialises it again. Pure.
 *
 * Why the body travels made: SQS accepts only some characters in a body (#x9, #xA, #xD, #x20 to
 * #xD7FF, #xE000 to #xFFFD, #x10000 to #x10FFFF,
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html),
 * and JSON text need not escape the others (U+FFFF), while SQS-compatible engines refuse more
 * (fauxqs: characters outside the BMP). First attempts go on the queue as `sqsJson` (ASCII-only
 * JSON); a workflow that made its body with States.JsonToString sent plain JSON and lost the
 * retries of such payloads. The starter makes the body with the same `sqsJson`.
 */
import type { RetryState } from './delivery';
import type { DeliveryJob } from './delivery-jobs';
import { sqsJson } from '../../core/rules/queue-messages';

/** What a retry execution receives, and (ResultPath null) every state's input. */
export interface RetryExecutionInput extends Omit<RetryState, 'job'> {
  /** The retry job as the delivery queue's message body: `sqsJson(job)`. */
  body: string;
  /** The job's namespace: the message group of the SendMessage. */
  group: string;
}

/** The execution input of a retry state. */
export function retryExecutionInput(state: RetryState): RetryExecutionInput {
  const { job, ...rest } = state;
  return { ...rest, body: sqsJson(job), group: job.namespace };
}

/**
 * The retry state of an execution's input (the failed-execution rule hands it back); an input
 * carrying its `job` as an object (a state passed as is) is taken as it is.
 */
export function retryStateOf(input: unknown): RetryState {
  const i = input as Partial<RetryExecutionInput> & { job?: DeliveryJob };
  if (i.job) return i as RetryState;
  const { body, group: _, ...rest } = i;
  return { ...(rest as Omit<RetryState, 'job'>), job: JSON.parse(body ?? 'null') as DeliveryJob };
}

