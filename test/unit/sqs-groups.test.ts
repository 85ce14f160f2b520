/**
 * Message groups through fauxqs (local/sqs-groups.ts): a standard queue's MessageGroupId, which
 * fauxqs drops, reaches the consumer as the MessageGroupId system attribute. Driven with a fake
 * engine (`next`) that keeps message attributes and drops groups, as fauxqs does.
 */
import { GROUP_ATTRIBUTE, sqsGroupsMiddleware } from '../../local/sqs-groups';

const URL = 'http://127.0.0.1:9/000000000000/msg-webhook-deliveries';

function engine() {
  const stored: { Body: string; MessageAttributes?: Record<string, { DataType: string; StringValue?: string }> }[] = [];
  const seen: Record<string, unknown>[] = [];
  const next = (command: string) => async (args: { input: Record<string, unknown> }) => {
    seen.push(args.input);
    if (command === 'SendMessageBatchCommand') {
      for (const e of args.input.Entries as { MessageBody: string; MessageAttributes?: never }[]) stored.push({ Body: e.MessageBody, ...(e.MessageAttributes ? { MessageAttributes: e.MessageAttributes } : {}) });
      return { output: {}, response: {} };
    }
    if (command === 'SendMessageCommand') {
      stored.push({ Body: args.input.MessageBody as string, MessageAttributes: args.input.MessageAttributes as never });
      return { output: {}, response: {} };
    }
    const names = (args.input.MessageAttributeNames as string[]) ?? [];
    const messages = stored.splice(0).map((m) => ({
      Body: m.Body,
      ...(m.MessageAttributes ? { MessageAttributes: Object.fromEntries(Object.entries(m.MessageAttributes).filter(([k]) => names.includes(k) || names.includes('All'))), MD5OfMessageAttributes: 'x' } : {}),
    }));
    return { output: { Messages: messages }, response: {} };
  };
  const send = (command: string, input: Record<string, unknown>) => sqsGroupsMiddleware()(next(command), { commandName: command })({ input });
  return { send, seen };
}

describe('message groups on a standard queue', () => {
  it('carries each message group to the receive as the MessageGroupId attribute, and only there', async () => {
    const e = engine();
    await e.send('SendMessageBatchCommand', { QueueUrl: URL, Entries: [{ Id: '0', MessageBody: 'a', MessageGroupId: 'ns-a' }, { Id: '1', MessageBody: 'b' }] });
    await e.send('SendMessageCommand', { QueueUrl: URL, MessageBody: 'c', MessageGroupId: 'ns-c', MessageAttributes: { k: { DataType: 'String', StringValue: 'v' } } });
    // The engine never sees a group on a standard queue.
    expect(JSON.stringify(e.seen)).not.toContain('"MessageGroupId"');
    const out = await e.send('ReceiveMessageCommand', { QueueUrl: URL, MessageSystemAttributeNames: ['All'] });
    expect(out.output.Messages).toEqual([
      { Body: 'a', Attributes: { MessageGroupId: 'ns-a' } },
      { Body: 'b' },
      { Body: 'c', Attributes: { MessageGroupId: 'ns-c' } },
    ]);
  });

  it('gives the group only to a receive that asks for it, and never the carrying attribute', async () => {
    const e = engine();
    await e.send('SendMessageBatchCommand', { QueueUrl: URL, Entries: [{ Id: '0', MessageBody: 'a', MessageGroupId: 'g' }] });
    const out = await e.send('ReceiveMessageCommand', { QueueUrl: URL, MessageAttributeNames: ['All'] });
    expect(out.output.Messages).toEqual([{ Body: 'a' }]);
    expect(JSON.stringify(out.output)).not.toContain(GROUP_ATTRIBUTE);
  });

  it('leaves FIFO queues to the engine, which keeps their groups', async () => {
    const e = engine();
    await e.send('SendMessageBatchCommand', { QueueUrl: `${URL}.fifo`, Entries: [{ Id: '0', MessageBody: 'a', MessageGroupId: 'g' }] });
    expect(e.seen[0]).toMatchObject({ Entries: [{ MessageGroupId: 'g' }] });
  });
});
