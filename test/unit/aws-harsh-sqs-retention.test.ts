/**
 * The harsh SQS's retention (local/aws-harsh/sqs-retention.ts): messages past the queue's
 * MessageRetentionPeriod are never received again and leave SQS's counts, as in AWS. Driven with a
 * fake engine that, like fauxqs, keeps every message until it is deleted.
 */
import { retentionMiddleware, RetentionState } from '../../local/aws-harsh/sqs-retention';

const URL = 'http://127.0.0.1:9/000000000000/msg_r1';

function setup() {
  let now = 1_000_000;
  const state = new RetentionState(() => now);
  // The engine: messages by id, none ever expiring; a receive returns every message with a new handle.
  const stored = new Map<string, string>();
  let seq = 0;
  const deleted: string[] = [];
  const engine = (command: string) => async (args: { input: Record<string, unknown> }) => {
    const input = args.input;
    if (command === 'SendMessageBatchCommand') {
      const ids = (input.Entries as { Id: string }[]).map((e) => ({ Id: e.Id, MessageId: `m${++seq}` }));
      for (const i of ids) stored.set(i.MessageId, '');
      return { output: { Successful: ids, Failed: [] } };
    }
    if (command === 'ReceiveMessageCommand') {
      const messages = [...stored.keys()].map((id) => ({ MessageId: id, ReceiptHandle: `${id}-h${++seq}` }));
      for (const m of messages) stored.set(m.MessageId, m.ReceiptHandle);
      return { output: { Messages: messages } };
    }
    if (command === 'DeleteMessageBatchCommand') {
      for (const e of input.Entries as { ReceiptHandle: string }[]) {
        const id = [...stored].find(([, h]) => h === e.ReceiptHandle)?.[0];
        if (id) stored.delete(id);
      }
      return { output: { Successful: [], Failed: [] } };
    }
    if (command === 'GetQueueAttributesCommand') return { output: { Attributes: { ApproximateNumberOfMessages: String(stored.size), ApproximateNumberOfMessagesNotVisible: '0' } } };
    return { output: {} };
  };
  const send = (command: string, input: Record<string, unknown>) =>
    retentionMiddleware(state, async (url, handles) => {
      deleted.push(...handles);
      await send('DeleteMessageBatchCommand', { QueueUrl: url, Entries: handles.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle })) });
    })(engine(command), { commandName: command })({ input });
  return { send, stored, deleted, advance: (ms: number) => (now += ms) };
}

describe('retention', () => {
  it("drops messages past the queue's retention from receives and counts, deleting them from the engine", async () => {
    const { send, stored, deleted, advance } = setup();
    await send('CreateQueueCommand', { QueueName: 'msg_r1', Attributes: { MessageRetentionPeriod: '60' } });
    await send('SendMessageBatchCommand', { QueueUrl: URL, Entries: [{ Id: '0' }, { Id: '1' }] });
    advance(30_000);
    await send('SendMessageBatchCommand', { QueueUrl: URL, Entries: [{ Id: '0' }] });
    const count = async () => Number((await send('GetQueueAttributesCommand', { QueueUrl: URL })).output.Attributes.ApproximateNumberOfMessages);
    expect(await count()).toBe(3);
    advance(30_000); // the first two are 60 s old
    expect(await count()).toBe(1);
    const got = await send('ReceiveMessageCommand', { QueueUrl: URL });
    expect(got.output.Messages.map((m: { MessageId: string }) => m.MessageId)).toEqual(['m3']);
    expect(deleted).toHaveLength(2);
    expect([...stored.keys()]).toEqual(['m3']);
    expect(await count()).toBe(1);
  });

  it('forgets a message deleted with its latest handle, and keeps the default retention of 4 days otherwise', async () => {
    const { send, stored, advance } = setup();
    await send('SendMessageBatchCommand', { QueueUrl: URL, Entries: [{ Id: '0' }] });
    const first = (await send('ReceiveMessageCommand', { QueueUrl: URL })).output.Messages[0];
    const second = (await send('ReceiveMessageCommand', { QueueUrl: URL })).output.Messages[0];
    await send('DeleteMessageBatchCommand', { QueueUrl: URL, Entries: [{ Id: '0', ReceiptHandle: first.ReceiptHandle }] });
    advance(345_600_000);
    // Not deleted by the old handle: past its retention now, so not counted.
    expect((await send('GetQueueAttributesCommand', { QueueUrl: URL })).output.Attributes.ApproximateNumberOfMessages).toBe('0');
    await send('DeleteMessageBatchCommand', { QueueUrl: URL, Entries: [{ Id: '0', ReceiptHandle: second.ReceiptHandle }] });
    expect(stored.size).toBe(0);
    expect((await send('GetQueueAttributesCommand', { QueueUrl: URL })).output.Attributes.ApproximateNumberOfMessages).toBe('0');
  });
});
