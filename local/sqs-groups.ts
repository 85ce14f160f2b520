/**
 * Message groups on standard queues, which fauxqs accepts and drops: SendMessage(Batch) with a
 * `MessageGroupId` on a standard queue succeeds, but the message is stored without it, so a
 * consumer never sees the group a fair queue orders by (./fair-queues.ts). In AWS "in standard
 * queues, using MessageGroupId enables fair queues"
 * (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagegroupid-property.html),
 * and ReceiveMessage returns it as the `MessageGroupId` system attribute.
 *
 * One SDK middleware, in front of the engine as local/aws-harsh/ is (the service code never
 * knows): a send to a standard queue carries the group in a message attribute of its own
 * ({@link GROUP_ATTRIBUTE}) instead; a receive asks for that attribute and gives it back as the
 * `MessageGroupId` system attribute (when asked for, as AWS does) and removes it. The attribute
 * survives a restart of a persisted fauxqs and a move to the DLQ, as the group does in AWS. Its
 * few bytes count toward the message's size, which AWS does not do for a group; the delivery
 * queue's jobs stay far below its 1 MiB.
 */
import type { Pluggable } from '@smithy/types';
import { registerClientPlugin } from '../lambda/core/client-plugins';
import { sqsClient } from '../lambda/core/adapters/sqs';

/** The message attribute that carries a standard-queue message's group through fauxqs. */
export const GROUP_ATTRIBUTE = 'local.MessageGroupId';

type Input = Record<string, unknown>;
interface Attr {
  DataType: string;
  StringValue?: string;
}
interface Received {
  Attributes?: Record<string, string>;
  MessageAttributes?: Record<string, Attr>;
  MD5OfMessageAttributes?: string;
}

const standard = (url: unknown) => typeof url === 'string' && !url.endsWith('.fifo');

/** A send entry (or SendMessage input) with its group moved into {@link GROUP_ATTRIBUTE}. */
function carried<T extends Input>(e: T): T {
  const g = e.MessageGroupId;
  if (typeof g !== 'string' || !g) return e;
  const { MessageGroupId: _, ...rest } = e;
  return { ...rest, MessageAttributes: { ...((e.MessageAttributes as Record<string, Attr>) ?? {}), [GROUP_ATTRIBUTE]: { DataType: 'String', StringValue: g } } } as unknown as T;
}

/** The middleware (initialize step). Exported for the unit tests, which drive it with a fake `next`. */
export function sqsGroupsMiddleware() {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (next: (args: any) => Promise<any>, context: { commandName?: string }) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async (args: { input: Input }): Promise<any> => {
      const command = context.commandName ?? '';
      const input = args.input ?? {};
      if (!standard(input.QueueUrl)) return next(args);
      if (command === 'SendMessageCommand') return next({ ...args, input: carried(input) });
      if (command === 'SendMessageBatchCommand') return next({ ...args, input: { ...input, Entries: ((input.Entries as Input[]) ?? []).map(carried) } });
      if (command !== 'ReceiveMessageCommand') return next(args);
      const names = (input.MessageAttributeNames as string[] | undefined) ?? [];
      const asked = names.some((n) => n === 'All' || n === '.*');
      const system = [...((input.MessageSystemAttributeNames as string[] | undefined) ?? []), ...((input.AttributeNames as string[] | undefined) ?? [])];
      const wantsGroup = system.includes('All') || system.includes('MessageGroupId');
      const out = await next(asked ? args : { ...args, input: { ...input, MessageAttributeNames: [...names, GROUP_ATTRIBUTE] } });
      for (const m of (out?.output?.Messages ?? []) as Received[]) {
        const g = m.MessageAttributes?.[GROUP_ATTRIBUTE]?.StringValue;
        if (g === undefined) continue;
        delete m.MessageAttributes![GROUP_ATTRIBUTE];
        if (!Object.keys(m.MessageAttributes!).length) {
          delete m.MessageAttributes;
          delete m.MD5OfMessageAttributes;
        }
        if (wantsGroup) m.Attributes = { ...(m.Attributes ?? {}), MessageGroupId: g };
      }
      return out;
    };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const plugin: Pluggable<any, any> = {
  applyToStack: (stack) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    stack.add(sqsGroupsMiddleware() as any, { step: 'initialize', priority: 'low', name: 'localSqsGroups' });
  },
};

let installed = false;

/**
 * Adds the middleware to this process's SQS client and registers it for every client made later
 * (once). Called wherever the local delivery queue is made (./webhooks.ts), before its event
 * source starts.
 */
export function installSqsGroups(): void {
  if (installed) return;
  installed = true;
  sqsClient().middlewareStack.use(plugin);
  registerClientPlugin('sqs', plugin);
}
