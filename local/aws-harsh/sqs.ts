/**
 * SQS as AWS runs it, where fauxqs is kinder: see ./index.ts. These behaviours, each an SDK
 * middleware in front of the real engine (so the service code never knows), and retention
 * (./sqs-retention.ts):
 *
 * - **Short polls sample.** A ReceiveMessage with `WaitTimeSeconds: 0` asks only a subset of
 *   SQS's servers, so it may answer nothing while the queue holds messages: "Amazon SQS samples a
 *   subset of its servers (based on a weighted random distribution) and returns messages from only
 *   those servers. Thus, a particular ReceiveMessage request might not return all of your messages
 *   [...] If you have fewer than 1,000 messages in your queue, a particular request might not
 *   return any messages"
 *   (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html).
 *   fauxqs always returns them. Here a short poll answers empty with probability
 *   `MSG_HARSH_SQS_SHORT_POLL_MISS` (default 0.5), drawn from a seeded generator
 *   (`MSG_HARSH_SEED`, else random). Long polls (`WaitTimeSeconds` ≥ 1) query every server and are
 *   passed through.
 * - **A new queue is not ready at once.** "After you create a queue, you must wait at least one
 *   second after the queue is created to be able to use the queue"
 *   (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html).
 *   For `MSG_HARSH_SQS_NEW_QUEUE_MS` (default 1000) after a CreateQueue that made a service queue
 *   (named with `MSG_SQS_QUEUE_PREFIX`), every call naming its URL fails with `QueueDoesNotExist`,
 *   as SQS may answer meanwhile.
 * - **OverLimit past an in-flight count.** "For most standard queues [...] there can be a maximum
 *   of approximately 120,000 in flight messages [...] If you reach this quota while using short
 *   polling, Amazon SQS returns the OverLimit error message"
 *   (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html),
 *   and the API reference lists `OverLimit` for ReceiveMessage "if the maximum number of in-flight
 *   messages is reached" (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html).
 *   The plugin counts the messages this process received and neither deleted nor made visible
 *   again (nor whose visibility ended), per queue, and answers a ReceiveMessage with `OverLimit`
 *   once `MSG_HARSH_SQS_MAX_IN_FLIGHT` (default 120,000) are in flight, long polls included (the
 *   API reference does not promise that a long poll never gets it; the harsher reading).
 * - **A handle past its visibility cannot be extended.** "any attempt to change the visibility
 *   timeout or to delete that message [after its visibility timeout] might result in an error"
 *   (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html,
 *   errors `MessageNotInflight` and, per batch entry, `ReceiptHandleIsInvalid`). fauxqs refuses
 *   only once its timer has put the message back (every 20 ms, or at the next receive); here a
 *   ChangeMessageVisibility(Batch) with a handle whose visibility has ended by the plugin's count
 *   is refused without reaching the engine (the harsher reading of "might").
 */
import { MessageNotInflight, OverLimit, QueueDoesNotExist } from '@aws-sdk/client-sqs';
import { seededRandom } from '../seeded-random';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { deleteWith, RetentionState, retentionMiddleware } from './sqs-retention';
import type { Pluggable } from '@smithy/types';

/** Settings of the harsh SQS, from the environment. */
export interface HarshSqsSettings {
  /** Probability that a short poll answers nothing although messages may be there. */
  shortPollMiss: number;
  /** How long a new queue answers QueueDoesNotExist. */
  newQueueMs: number;
  /**
   * Only queues whose name starts with this are made late: the service queues the API creates at
   * runtime (`MSG_SQS_QUEUE_PREFIX`). The local runtime's own queues (the webhook delivery queue)
   * stand for CloudFormation resources that in AWS exist long before any request.
   */
  newQueuePrefix: string;
  /** In-flight messages per queue past which ReceiveMessage answers OverLimit. */
  maxInFlight: number;
  /** Seed of the sampling (a run can be replayed). */
  seed: number;
}

const num = (v: string | undefined, dflt: number) => (v === undefined || v === '' || !Number.isFinite(Number(v)) ? dflt : Number(v));

export function harshSqsSettings(env: NodeJS.ProcessEnv): HarshSqsSettings {
  return {
    shortPollMiss: Math.min(1, Math.max(0, num(env.MSG_HARSH_SQS_SHORT_POLL_MISS, 0.5))),
    newQueueMs: Math.max(0, num(env.MSG_HARSH_SQS_NEW_QUEUE_MS, 1000)),
    newQueuePrefix: env.MSG_SQS_QUEUE_PREFIX || 'msg_',
    maxInFlight: Math.max(1, num(env.MSG_HARSH_SQS_MAX_IN_FLIGHT, 120_000)),
    seed: num(env.MSG_HARSH_SEED, Math.floor(Math.random() * 2 ** 31)),
  };
}

export { seededRandom } from '../seeded-random';

/** The queue name in a queue URL (its last path segment). */
const nameOf = (url: unknown) => (typeof url === 'string' ? url.slice(url.lastIndexOf('/') + 1) : undefined);

/**
 * The state the plugins share in one process (every SQS client of the process sees the same
 * queues): when each queue was made, and the messages in flight per queue.
 */
export class HarshSqsState {
  readonly createdAt = new Map<string, number>();
  /** Per queue: receipt handle → epoch ms its visibility ends. */
  readonly inFlight = new Map<string, Map<string, number>>();
  readonly random: () => number;

  constructor(
    readonly settings: HarshSqsSettings,
    readonly clock: () => number = Date.now,
  ) {
    this.random = seededRandom(settings.seed);
  }

  /** Messages of `queue` in flight now (received, not deleted, visibility not ended). */
  inFlightCount(queue: string): number {
    const m = this.inFlight.get(queue);
    if (!m) return 0;
    const now = this.clock();
    for (const [h, until] of m) if (until <= now) m.delete(h);
    return m.size;
  }

  /** Whether `queue` was created less than the grace ago (it answers QueueDoesNotExist). */
  notReady(queue: string): boolean {
    const at = this.createdAt.get(queue);
    return at !== undefined && this.clock() - at < this.settings.newQueueMs;
  }
}

type Input = Record<string, unknown>;
interface Entry {
  Id?: string;
  ReceiptHandle?: string;
  VisibilityTimeout?: number;
}

/** Default VisibilityTimeout of an SQS queue when a receive gives none (the service always does). */
const DEFAULT_VISIBILITY_SECONDS = 30;

/**
 * The harsh SQS as one middleware (initialize step: it sees the command's input and its output).
 * Exported for the unit tests, which drive it with a fake `next`.
 */
export function harshSqsMiddleware(state: HarshSqsState) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (next: (args: any) => Promise<any>, context: { commandName?: string }) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async (args: { input: Input }): Promise<any> => {
      const command = context.commandName ?? '';
      const input = args.input ?? {};
      const queue = command === 'CreateQueueCommand' ? (input.QueueName as string | undefined) : nameOf(input.QueueUrl);

      if (queue && command !== 'CreateQueueCommand' && command !== 'DeleteQueueCommand' && state.notReady(queue)) {
        throw new QueueDoesNotExist({ message: 'The specified queue does not exist (harsh SQS: created less than a second ago).', $metadata: { httpStatusCode: 400 } });
      }
      if (command === 'ReceiveMessageCommand' && queue) {
        if (state.inFlightCount(queue) >= state.settings.maxInFlight) {
          throw new OverLimit({
            message: `Too many messages in flight (harsh SQS: ${state.settings.maxInFlight}, MSG_HARSH_SQS_MAX_IN_FLIGHT).`,
            $metadata: { httpStatusCode: 403 },
          });
        }
        const wait = Number(input.WaitTimeSeconds ?? 0);
        if (wait <= 0 && state.random() < state.settings.shortPollMiss) {
          return { output: { $metadata: { httpStatusCode: 200 }, Messages: [] }, response: {} };
        }
      }

      let refused: { Id?: string; SenderFault: boolean; Code: string; Message: string }[] = [];
      if (queue && (command === 'ChangeMessageVisibilityCommand' || command === 'ChangeMessageVisibilityBatchCommand')) {
        const ended = (h: unknown) => typeof h === 'string' && (state.inFlight.get(queue)?.get(h) ?? Infinity) <= state.clock();
        if (command === 'ChangeMessageVisibilityCommand' && ended(input.ReceiptHandle)) {
          throw new MessageNotInflight({ message: 'Message does not exist or is not available for visibility timeout change (harsh SQS: its visibility ended).', $metadata: { httpStatusCode: 400 } });
        }
        const entries = (input.Entries as Entry[] | undefined) ?? [];
        if (command === 'ChangeMessageVisibilityBatchCommand' && entries.some((e) => ended(e.ReceiptHandle))) {
          refused = entries.filter((e) => ended(e.ReceiptHandle)).map((e) => ({ Id: e.Id, SenderFault: true, Code: 'ReceiptHandleIsInvalid', Message: 'The input receipt handle is invalid (harsh SQS: its visibility ended).' }));
          const rest = entries.filter((e) => !ended(e.ReceiptHandle));
          if (!rest.length) return { output: { $metadata: { httpStatusCode: 200 }, Successful: [], Failed: refused }, response: {} };
          args = { ...args, input: { ...input, Entries: rest } };
        }
      }

      const out = await next(args);
      if (refused.length && out?.output) out.output.Failed = [...(out.output.Failed ?? []), ...refused];

      if (!queue) return out;
      const now = state.clock();
      if (command === 'CreateQueueCommand') {
        // A repeated CreateQueue of an existing queue (idempotent) does not make it new again.
        if (!state.createdAt.has(queue) && queue.startsWith(state.settings.newQueuePrefix)) state.createdAt.set(queue, now);
      } else if (command === 'DeleteQueueCommand') {
        state.createdAt.delete(queue);
        state.inFlight.delete(queue);
      } else if (command === 'ReceiveMessageCommand') {
        const messages = (out?.output?.Messages ?? []) as { ReceiptHandle?: string }[];
        if (messages.length) {
          const m = state.inFlight.get(queue) ?? new Map<string, number>();
          state.inFlight.set(queue, m);
          const until = now + Number(input.VisibilityTimeout ?? DEFAULT_VISIBILITY_SECONDS) * 1000;
          for (const msg of messages) if (msg.ReceiptHandle) m.set(msg.ReceiptHandle, until);
        }
      } else {
        const m = state.inFlight.get(queue);
        if (m) {
          const entries: Entry[] =
            command === 'DeleteMessageCommand' || command === 'ChangeMessageVisibilityCommand' ? [input as Entry] : ((input.Entries as Entry[] | undefined) ?? []);
          const failed = new Set(((out?.output?.Failed ?? []) as { Id?: string }[]).map((f) => f.Id));
          for (const e of entries) {
            if (!e.ReceiptHandle || (e.Id !== undefined && failed.has(e.Id))) continue;
            if (command.startsWith('DeleteMessage')) m.delete(e.ReceiptHandle);
            else if (command.startsWith('ChangeMessageVisibility') && m.has(e.ReceiptHandle)) {
              const v = Number(e.VisibilityTimeout ?? 0);
              if (v <= 0) m.delete(e.ReceiptHandle);
              else m.set(e.ReceiptHandle, now + v * 1000);
            }
          }
        }
      }
      return out;
    };
}

let shared: HarshSqsState | undefined;
let retention: RetentionState | undefined;

/** The harsh SQS plugins for `env` (one shared state per process). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function harshSqsPlugins(env: NodeJS.ProcessEnv): Pluggable<any, any>[] {
  shared ??= new HarshSqsState(harshSqsSettings(env));
  const state = shared;
  retention ??= new RetentionState();
  const kept = retention;
  // Expired messages are deleted through the service's own SQS client (this plugin is on it too).
  const deleter = deleteWith((c) => sqsClient().send(c));
  return [
    {
      applyToStack: (stack) => {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        stack.add(harshSqsMiddleware(state) as any, { step: 'initialize', priority: 'low', name: 'harshSqs' });
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        stack.add(retentionMiddleware(kept, deleter) as any, { step: 'initialize', priority: 'low', name: 'harshSqsRetention' });
      },
    },
  ];
}

/** The process's harsh SQS state once the switch is installed (tests adjust its settings). */
export const harshSqsSharedState = (): HarshSqsState | undefined => shared;
