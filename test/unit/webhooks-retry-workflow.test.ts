/**
 * The Step Functions adapter of the retry workflow (docs/design/0017-webhook-delivery-once.md): a
 * throttled StartExecution is tried again beyond the SDK's retries, and ExecutionAlreadyExists is
 * "already started" only while that execution runs (DescribeExecution); a closed one is reported so
 * the delivery ends.
 */
import { DescribeExecutionCommand, StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { executionArn, StepFunctionsRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import type { RetryState } from '../../lambda/webhooks/rules/delivery';

const ARN = 'arn:aws:states:eu-west-1:123456789012:stateMachine:msg-webhook-retry';
const state = { job: { namespace: 'n', webhook_id: 'w', webhook_name: 'w', message_ref: { message_id: 'm' } }, attempts: 1, wait_seconds: 1, last_error: 'HTTP 500', outcome: 'retry' } as RetryState;
const err = (name: string) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: 400 } });

function fakeClient(answer: (cmd: unknown, n: number) => unknown) {
  const sent: unknown[] = [];
  const client = {
    send: async (cmd: unknown) => {
      sent.push(cmd);
      const a = answer(cmd, sent.length);
      if (a instanceof Error) throw a;
      return a;
    },
  } as unknown as SFNClient;
  return { client, sent };
}

describe('StepFunctionsRetryWorkflow', () => {
  it('names executions of the state machine by ARN', () => {
    expect(executionArn(ARN, 'abc')).toBe('arn:aws:states:eu-west-1:123456789012:execution:msg-webhook-retry:abc');
  });

  it('tries a throttled start again and reports it started', async () => {
    const { client, sent } = fakeClient((_, n) => (n < 3 ? err('ThrottlingException') : {}));
    expect(await new StepFunctionsRetryWorkflow(client, ARN).start('x', state)).toBe('started');
    expect(sent).toHaveLength(3);
  });

  it('gives up on a start throttled for seconds, so the caller can put the job back', async () => {
    const { client } = fakeClient(() => err('ThrottlingException'));
    await expect(new StepFunctionsRetryWorkflow(client, ARN).start('x', state)).rejects.toMatchObject({ name: 'ThrottlingException' });
  }, 10_000);

  it.each([
    ['RUNNING', 'running'],
    ['SUCCEEDED', 'closed'],
    ['PENDING_REDRIVE', 'running'],
    ['FAILED', 'failed'],
    ['TIMED_OUT', 'failed'],
    ['ABORTED', 'failed'],
  ])('takes ExecutionAlreadyExists of a %s execution as %s', async (status, expected) => {
    const { client, sent } = fakeClient((cmd) => (cmd instanceof StartExecutionCommand ? err('ExecutionAlreadyExists') : { status }));
    expect(await new StepFunctionsRetryWorkflow(client, ARN).start('x', state)).toBe(expected);
    expect(sent[1]).toBeInstanceOf(DescribeExecutionCommand);
    expect((sent[1] as DescribeExecutionCommand).input.executionArn).toBe(executionArn(ARN, 'x'));
  });

  it('throws anything else', async () => {
    const { client } = fakeClient(() => err('ValidationException'));
    await expect(new StepFunctionsRetryWorkflow(client, ARN).start('x', state)).rejects.toMatchObject({ name: 'ValidationException' });
  });
});
