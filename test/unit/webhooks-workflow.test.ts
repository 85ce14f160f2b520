/**
 * The retry workflow's ASL file, executed by aws-local-stepfunctions (as the local runtime does)
 * with its Queue Task bound to a function that records the SendMessage parameters the ASL
 * evaluated: the computed wait (real seconds), the retry job as the message body in its
 * namespace's group, the end after one send, and the Task's retries of a failing send.
 */
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { RetryState } from '../../lambda/webhooks/rules/delivery';
import { retryExecutionInput, type RetryExecutionInput } from '../../lambda/webhooks/rules/retry-input';
import { DELIVERY_QUEUE_PLACEHOLDER, QUEUE_STATE, SQS_SEND_RESOURCE, substitutedDefinition, type QueueTaskInput } from '../../lambda/webhooks/workflows/definition';

const URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/deliveries';
const definition = substitutedDefinition({ [DELIVERY_QUEUE_PLACEHOLDER]: URL }) as StateMachineDefinition & { States: Record<string, any> };

// Constructing validates the definition (about a second), so once, as the local runtime does.
const machine = new StateMachine(definition);

/** The execution input the service starts with: the job already encoded as the message body. */
const start = (p: Partial<RetryState>): RetryExecutionInput => retryExecutionInput({
  job: { namespace: 'ns', webhook_id: 'id', webhook_name: 'w', message: { message_id: 'M', topic: 't', payload: 'é', content_type: 'text/plain', properties: {}, published_at: 0, size: 2 }, retry: { attempts: 1, last_error: 'HTTP 500' } },
  attempts: 1, wait_seconds: 1, last_error: 'HTTP 500', outcome: 'retry', ...p,
});

/** Runs the workflow; the first `failures` sends throw. */
async function run(input: RetryExecutionInput, failures = 0) {
  const sends: { at: number; input: QueueTaskInput }[] = [];
  const t0 = Date.now();
  const handler = async (e: unknown) => {
    sends.push({ at: Date.now() - t0, input: e as QueueTaskInput });
    if (sends.length <= failures) throw Object.assign(new Error('throttled'), { name: 'SQS.ThrottlingException' });
    return { MessageId: 'm1' };
  };
  const exec = machine.run(input as never, { overrides: { taskResourceLocalHandlers: { [QUEUE_STATE]: handler }, retryIntervalOverrides: { [QUEUE_STATE]: 10 } } });
  const result = (await exec.result) as unknown as RetryExecutionInput;
  return { sends, result };
}

describe('webhook-retry.asl.json', () => {
  it('substitutes the delivery queue URL into its one Task, the SQS integration', () => {
    expect(definition.States[QUEUE_STATE]).toMatchObject({ Type: 'Task', Resource: SQS_SEND_RESOURCE, End: true });
    expect(definition.States[QUEUE_STATE].Parameters.QueueUrl).toBe(URL);
    expect(definition.States.Wait.SecondsPath).toBe('$.wait_seconds');
  });

  it('waits the computed seconds, then sends the retry job once, in its namespace\'s message group', async () => {
    const input = start({ wait_seconds: 2 });
    const { sends, result } = await run(input);
    expect(sends).toHaveLength(1);
    expect(sends[0].at).toBeGreaterThanOrEqual(1950);
    expect(sends[0].input).toEqual({ QueueUrl: URL, MessageBody: expect.any(String), MessageGroupId: 'ns' });
    // The body as the starter made it (ASCII JSON, `é` escaped), never serialised again.
    expect(sends[0].input.MessageBody).toBe(input.body);
    expect(sends[0].input.MessageBody).toContain('\\u00e9');
    // ResultPath null: the execution's output is its input.
    expect(result).toEqual(input);
  }, 15000);

  it('does not wait for a zero wait (retry_delay 0)', async () => {
    const { sends } = await run(start({ wait_seconds: 0 }));
    expect(sends[0].at).toBeLessThan(500);
  });

  it('sends again when SendMessage fails, up to the Task\'s retries, then the execution fails', async () => {
    const retried = await run(start({ wait_seconds: 0 }), 3);
    expect(retried.sends).toHaveLength(4);
    const attempts = 1 + definition.States[QUEUE_STATE].Retry[0].MaxAttempts;
    await expect(run(start({ wait_seconds: 0 }), attempts)).rejects.toThrow(/throttled/);
  });
});
