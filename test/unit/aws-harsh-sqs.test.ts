/**
 * The harsh SQS switch (local/aws-harsh/sqs.ts): short polls that sample, a new queue that is not
 * ready for a second, OverLimit past an in-flight count. Driven with a fake engine (`next`).
 */
import { SQSClient, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { harshSqsMiddleware, harshSqsPlugins, harshSqsSettings, HarshSqsState, seededRandom } from '../../local/aws-harsh/sqs';

const URL = 'http://127.0.0.1:9/000000000000/msg_q1';

function setup(over: Partial<ReturnType<typeof harshSqsSettings>> = {}) {
  let now = 1_000_000;
  const state = new HarshSqsState({ ...harshSqsSettings({}), seed: 7, ...over }, () => now);
  const calls: string[] = [];
  let handle = 0;
  const engine = (command: string) => async (args: { input: Record<string, unknown> }) => {
    calls.push(command);
    if (command === 'ReceiveMessageCommand') {
      const n = Number(args.input.MaxNumberOfMessages ?? 1);
      return { output: { Messages: Array.from({ length: n }, () => ({ ReceiptHandle: `h${++handle}`, Body: 'b' })) }, response: {} };
    }
    const entries = (args.input.Entries ?? []) as { Id: string }[];
    return { output: { Successful: entries.map((e) => ({ Id: e.Id })), Failed: [] }, response: {} };
  };
  const send = (command: string, input: Record<string, unknown>) => harshSqsMiddleware(state)(engine(command), { commandName: command })({ input });
  return { state, calls, send, advance: (ms: number) => (now += ms) };
}

describe('settings', () => {
  it('reads the environment with AWS defaults', () => {
    expect(harshSqsSettings({ MSG_HARSH_SEED: '3' })).toEqual({ shortPollMiss: 0.5, newQueueMs: 1000, newQueuePrefix: 'msg_', maxInFlight: 120_000, seed: 3 });
    expect(harshSqsSettings({ MSG_HARSH_SQS_MAX_IN_FLIGHT: '5', MSG_HARSH_SQS_SHORT_POLL_MISS: '2', MSG_HARSH_SQS_NEW_QUEUE_MS: 'x' })).toMatchObject({
      maxInFlight: 5,
      shortPollMiss: 1,
      newQueueMs: 1000,
    });
  });
  it('samples reproducibly from a seed', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const xs = Array.from({ length: 5 }, a);
    expect(xs).toEqual(Array.from({ length: 5 }, b));
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

describe('short polls sample', () => {
  it('answers some short polls with nothing without asking the engine, and passes long polls through', async () => {
    const { send, calls } = setup({ shortPollMiss: 0.5 });
    const short = await Promise.all(Array.from({ length: 200 }, () => send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 0, MaxNumberOfMessages: 1 })));
    const empty = short.filter((o) => o.output.Messages.length === 0).length;
    expect(empty).toBeGreaterThan(50);
    expect(empty).toBeLessThan(150);
    expect(calls.length).toBe(200 - empty);
    const long = await Promise.all(Array.from({ length: 50 }, () => send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 1 })));
    expect(long.every((o) => o.output.Messages.length === 1)).toBe(true);
  });
  it('never misses with a miss rate of 0', async () => {
    const { send } = setup({ shortPollMiss: 0 });
    for (let i = 0; i < 20; i++) expect((await send('ReceiveMessageCommand', { QueueUrl: URL })).output.Messages).toHaveLength(1);
  });
});

describe('a new queue', () => {
  it('answers QueueDoesNotExist for the grace after its CreateQueue, then works; a repeated create does not renew it', async () => {
    const { send, advance } = setup({ shortPollMiss: 0 });
    await send('CreateQueueCommand', { QueueName: 'msg_q1' });
    await expect(send('SendMessageBatchCommand', { QueueUrl: URL, Entries: [] })).rejects.toMatchObject({ name: 'QueueDoesNotExist' });
    await expect(send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1 })).rejects.toMatchObject({ name: 'QueueDoesNotExist' });
    // Other queues are not affected.
    await expect(send('ReceiveMessageCommand', { QueueUrl: URL.replace('msg_q1', 'msg_q2'), WaitTimeSeconds: 1 })).resolves.toBeDefined();
    // A queue of the local runtime itself (not a service queue) is ready at once.
    await send('CreateQueueCommand', { QueueName: 'deliveries-1' });
    await expect(send('ReceiveMessageCommand', { QueueUrl: URL.replace('msg_q1', 'deliveries-1'), WaitTimeSeconds: 1 })).resolves.toBeDefined();
    advance(600);
    await send('CreateQueueCommand', { QueueName: 'msg_q1' });
    advance(400);
    await expect(send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1 })).resolves.toBeDefined();
  });
});

describe('OverLimit', () => {
  it('refuses receives while the in-flight count is at the limit; deletes, releases and ended visibilities free room', async () => {
    const { send, advance } = setup({ shortPollMiss: 0, maxInFlight: 3 });
    const a = await send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 2, VisibilityTimeout: 10 });
    const b = await send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 1, VisibilityTimeout: 60 });
    await expect(send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1, VisibilityTimeout: 10 })).rejects.toMatchObject({ name: 'OverLimit' });
    await send('DeleteMessageBatchCommand', { QueueUrl: URL, Entries: [{ Id: '0', ReceiptHandle: a.output.Messages[0].ReceiptHandle }] });
    const c = await send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 1, VisibilityTimeout: 100 });
    await expect(send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1 })).rejects.toMatchObject({ name: 'OverLimit' });
    await send('ChangeMessageVisibilityBatchCommand', { QueueUrl: URL, Entries: [{ Id: '0', ReceiptHandle: c.output.Messages[0].ReceiptHandle, VisibilityTimeout: 0 }] });
    await send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 1, VisibilityTimeout: 100 });
    await expect(send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1 })).rejects.toMatchObject({ name: 'OverLimit' });
    advance(10_000); // the first receive's other message is visible again
    await expect(send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 1 })).resolves.toBeDefined();
    expect(b.output.Messages).toHaveLength(1);
  });
});

describe('a handle whose visibility ended', () => {
  it('cannot have its visibility changed (the engine never sees it), while current handles can', async () => {
    const { send, advance, calls } = setup({ shortPollMiss: 0 });
    const old = await send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 1, VisibilityTimeout: 1 });
    const cur = await send('ReceiveMessageCommand', { QueueUrl: URL, WaitTimeSeconds: 1, MaxNumberOfMessages: 1, VisibilityTimeout: 60 });
    advance(1_000);
    const [oldHandle, curHandle] = [old.output.Messages[0].ReceiptHandle, cur.output.Messages[0].ReceiptHandle];
    await expect(send('ChangeMessageVisibilityCommand', { QueueUrl: URL, ReceiptHandle: oldHandle, VisibilityTimeout: 30 })).rejects.toMatchObject({ name: 'MessageNotInflight' });
    expect(calls).not.toContain('ChangeMessageVisibilityCommand');
    const out = await send('ChangeMessageVisibilityBatchCommand', {
      QueueUrl: URL,
      Entries: [
        { Id: 'a', ReceiptHandle: oldHandle, VisibilityTimeout: 30 },
        { Id: 'b', ReceiptHandle: curHandle, VisibilityTimeout: 30 },
      ],
    });
    expect(out.output.Failed).toEqual([expect.objectContaining({ Id: 'a', Code: 'ReceiptHandleIsInvalid', SenderFault: true })]);
    expect(out.output.Successful).toEqual([{ Id: 'b' }]);
  });
});

describe('as a plugin of a real client', () => {
  it('sits on the SDK stack and answers a sampled short poll before any request is sent', async () => {
    const client = new SQSClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
    for (const p of harshSqsPlugins({ MSG_HARSH_SQS_SHORT_POLL_MISS: '1' })) client.middlewareStack.use(p);
    // Nothing listens on port 9: only an answer from the plugin can succeed.
    const out = await client.send(new ReceiveMessageCommand({ QueueUrl: URL, WaitTimeSeconds: 0 }));
    expect(out.Messages).toEqual([]);
    client.destroy();
  });
});
