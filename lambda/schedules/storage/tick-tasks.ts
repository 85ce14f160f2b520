/**
 * The queue of the tick's shard tasks: an SQS queue (the stack's, or the local runtime's on
 * fauxqs) at `MSG_TICK_TASKS_QUEUE_URL`. The minute's tick (the coordinator) sends one task per
 * due-index shard with something due, and the same scheduler function consumes them through an
 * SQS event source whose maximum concurrency is the number of shard workers at once
 * (lib/constructs/scheduler.ts; locally local/tick-tasks.ts).
 *
 * The queue's settings are declared here once, for the stack and the local runtime alike.
 */
import { config } from '../../core/config';
import { sendBatches } from '../../core/adapters/sqs';

/** The scheduler function's timeout (s): the coordinator's tick and each shard worker's. */
export const TICK_TIMEOUT_SECONDS = 60;
/**
 * The queue's visibility timeout: at least the function's timeout, or the event source mapping
 * is refused; AWS advises six times it
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html#events-sqs-queueconfig).
 * A task that failed is received again after it, and is stale by then (./../schedules/shard-tasks.ts).
 */
export const TICK_TASKS_VISIBILITY_SECONDS = TICK_TIMEOUT_SECONDS * 6;
/** Receives of a task before SQS moves it to the DLQ. */
export const TICK_TASKS_MAX_RECEIVE_COUNT = 2;
/**
 * Shard workers at once at most: the event source's maximum concurrency (2 to 1,000,
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html#events-sqs-max-concurrency),
 * one per due-index shard (lambda/core/rules/delays.ts).
 */
export const TICK_WORKERS = 64;
/** Tasks a worker invocation takes: one, so that each shard has its own invocation and deadline. */
export const TICK_TASKS_BATCH_SIZE = 1;

/** One shard's handover, as of the coordinator's clock `now` when it sent it at wall time `sent`. */
export interface ShardTask {
  kind: 'handover';
  shard: number;
  now: number;
  sent: number;
}

export const hasTickTasksQueue = () => Boolean(config().tickTasksQueueUrl);

/** Sends the tasks (10 a call, calls in parallel); throws when any was not stored. */
export async function sendShardTasks(tasks: ShardTask[]): Promise<void> {
  const url = config().tickTasksQueueUrl;
  if (!url) throw new Error('MSG_TICK_TASKS_QUEUE_URL is not set: this process has no tick tasks queue');
  await sendBatches(url, tasks.map((t) => JSON.stringify(t)));
}

/** A task from a record's body, or undefined when it is not one. */
export function parseShardTask(body: string): ShardTask | undefined {
  try {
    const t = JSON.parse(body) as Partial<ShardTask>;
    if (t.kind === 'handover' && Number.isInteger(t.shard) && typeof t.now === 'number' && typeof t.sent === 'number') return t as ShardTask;
  } catch {
    // not JSON
  }
  return undefined;
}
