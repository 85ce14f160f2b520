/**
 * The tick's shard workers in the local runtime: the tick tasks queue and its DLQ on fauxqs with
 * the stack's settings (lambda/schedules/storage/tick-tasks.ts), and a local event source in front of the
 * same scheduler handler, as the stack's SQS event source runs it (lib/constructs/scheduler.ts):
 * one task a batch, each batch with a Lambda context of the function's timeout.
 */
import { randomUUID } from 'node:crypto';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { resetConfig } from '../lambda/core/config';
import { queueUrl, sqsClient } from '../lambda/core/adapters/sqs';
import { TICK_TASKS_BATCH_SIZE, TICK_TASKS_MAX_RECEIVE_COUNT, TICK_TASKS_VISIBILITY_SECONDS, TICK_TIMEOUT_SECONDS } from '../lambda/schedules/storage/tick-tasks';
import { lambdaContext } from './lambda-context';
import { LocalSqsEventSource } from './event-source';

/** Name of the local tick tasks queue (its DLQ adds `-dlq`); outside the service queues' `msg_` prefix. */
const LOCAL_TICK_TASKS_QUEUE = 'msg-tick-tasks';
/** Shard workers at once locally: the machine's cores, not the stack's 64 (one Node process here). */
const LOCAL_TICK_WORKERS = 4;

async function arnOf(url: string | undefined): Promise<string> {
  return (await sqsClient().send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn ?? '';
}

export interface LocalTickTasks {
  queueUrl: string;
  events: LocalSqsEventSource;
  stop(): Promise<void>;
}

/**
 * Creates the queue if missing, points MSG_TICK_TASKS_QUEUE_URL at it (the tick in this process
 * then fans out) and starts the workers. `stop` stops them and unsets the variable.
 */
export async function startLocalTickTasks(o: { queueName?: string; workers?: number; log?: (line: string) => void } = {}): Promise<LocalTickTasks> {
  const name = o.queueName ?? LOCAL_TICK_TASKS_QUEUE;
  const dlq = await sqsClient().send(new CreateQueueCommand({ QueueName: `${name}-dlq`, Attributes: { MessageRetentionPeriod: String(14 * 86400) } }));
  const main = await sqsClient().send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(TICK_TASKS_VISIBILITY_SECONDS),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: await arnOf(dlq.QueueUrl), maxReceiveCount: TICK_TASKS_MAX_RECEIVE_COUNT }),
      },
    }),
  );
  const url = queueUrl(name);
  process.env.MSG_TICK_TASKS_QUEUE_URL = url;
  resetConfig();
  const { handler } = await import('../lambda/handlers/scheduler');
  const work = async (event: Parameters<typeof handler>[0]) => {
    await handler(event, lambdaContext('msg-scheduler', randomUUID(), TICK_TIMEOUT_SECONDS * 1000));
  };
  const events = new LocalSqsEventSource(work, { queueUrl: url, queueArn: await arnOf(main.QueueUrl), batchSize: TICK_TASKS_BATCH_SIZE, concurrency: o.workers ?? LOCAL_TICK_WORKERS, log: o.log }).start();
  return {
    queueUrl: url,
    events,
    async stop() {
      await events.stop();
      if (process.env.MSG_TICK_TASKS_QUEUE_URL === url) delete process.env.MSG_TICK_TASKS_QUEUE_URL;
      resetConfig();
    },
  };
}
