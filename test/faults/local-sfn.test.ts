/**
 * The fault suite's Step Functions transport (./local-sfn.ts) answers a reused execution name as
 * Step Functions does
 * (https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html, `name`):
 * success with the same executionArn only while the execution is open and the input is the same;
 * ExecutionAlreadyExists for another input, or once it closed; and DescribeExecution tells its
 * status, eventually consistently
 * (https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html): a
 * close shows only after the runner's lag. Through a real SFNClient and the service's adapter, as
 * the fault suite sends them.
 */
import { randomUUID } from 'node:crypto';
import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { executionArn, StepFunctionsRetryWorkflow } from '../../lambda/webhooks/storage/retry-workflow';
import { queueUrl } from '../../lambda/core/adapters/sqs';
import type { RetryState } from '../../lambda/webhooks/rules/delivery';
import { retryExecutionInput } from '../../lambda/webhooks/rules/retry-input';
import { LocalRetryWorkflow } from '../../local/stepfunctions';
import { until } from '../fixtures/receiver';
import { scaled } from '../fixtures/time-scale';
import { LOCAL_STATE_MACHINE_ARN, localSfnClient } from './local-sfn';

jest.setTimeout(30_000);

const state = (wait: number, error = 'HTTP 500'): RetryState => ({
  job: { namespace: 'sfn', webhook_id: 'w', webhook_name: 'w', message: { message_id: randomUUID(), topic: 't', payload: 'p', content_type: 'text/plain', properties: {}, published_at: 0, size: 1 }, retry: { attempts: 1, last_error: error } },
  attempts: 1, wait_seconds: wait, last_error: error, outcome: 'retry',
});

// Executions send to a queue that does not exist: each fails once its Wait is over (the Queue
// state's retries 1 ms apart), and the failed-execution rule is a no-op here.
const workflow = new LocalRetryWorkflow(async () => undefined, () => undefined, { queueUrl: queueUrl(`missing-${randomUUID()}`), retryIntervalMs: 1 });
const client = localSfnClient(workflow);
afterAll(() => workflow.stop());

const start = (name: string, s: RetryState) => client.send(new StartExecutionCommand({ stateMachineArn: LOCAL_STATE_MACHINE_ARN, name, input: JSON.stringify(retryExecutionInput(s)) }));
const status = async (name: string) => (await client.send(new DescribeExecutionCommand({ executionArn: executionArn(LOCAL_STATE_MACHINE_ARN, name) }))).status;

it('answers a reused name with the same input while open as started, another input with ExecutionAlreadyExists, and describes it RUNNING', async () => {
  const name = `open-${randomUUID()}`;
  const s = state(60);
  const first = await start(name, s);
  expect(first.executionArn).toBe(executionArn(LOCAL_STATE_MACHINE_ARN, name));
  expect((await start(name, s)).executionArn).toBe(first.executionArn);
  await expect(start(name, state(60, 'HTTP 503'))).rejects.toMatchObject({ name: 'ExecutionAlreadyExists' });
  expect(await status(name)).toBe('RUNNING');
  expect(await new StepFunctionsRetryWorkflow(client, LOCAL_STATE_MACHINE_ARN).start(name, state(60, 'HTTP 503'))).toBe('running');
});

it('answers a closed execution\'s name with ExecutionAlreadyExists whatever the input, and describes it FAILED', async () => {
  const name = `closed-${randomUUID()}`;
  const s = state(0);
  await start(name, s);
  await until(async () => (await status(name)) !== 'RUNNING', 20_000, 'the execution closed');
  expect(await status(name)).toBe('FAILED');
  await expect(start(name, s)).rejects.toMatchObject({ name: 'ExecutionAlreadyExists' });
  expect(await new StepFunctionsRetryWorkflow(client, LOCAL_STATE_MACHINE_ARN).start(name, s)).toBe('failed');
});

it('answers DescribeExecution of a name never started with ExecutionDoesNotExist', async () => {
  await expect(status(`never-${randomUUID()}`)).rejects.toMatchObject({ name: 'ExecutionDoesNotExist' });
});

it('describes an execution that closed as RUNNING until the lag is over, then as it closed', async () => {
  // 5 s at the suite's time scale: the run to its close, the poll that sees it and the two calls
  // below come within it (a CI run on loaded cores took longer than 5 s from the start to them).
  const LAG = scaled(5000);
  const lagged = new LocalRetryWorkflow(async () => undefined, () => undefined, { queueUrl: queueUrl(`missing-${randomUUID()}`), retryIntervalMs: 1, describeLagMs: LAG });
  const lc = localSfnClient(lagged);
  const describe = async (name: string) => lc.send(new DescribeExecutionCommand({ executionArn: executionArn(LOCAL_STATE_MACHINE_ARN, name) }));
  const startIt = (name: string) => lc.send(new StartExecutionCommand({ stateMachineArn: LOCAL_STATE_MACHINE_ARN, name, input: JSON.stringify(retryExecutionInput(state(0))) }));
  try {
    const name = `lagged-${randomUUID()}`;
    // It closes after its start: a close shows no sooner than LAG after the start.
    const startedAt = Date.now();
    await startIt(name);
    await until(async () => lagged.running === 0, 20_000, 'the execution closed');
    // Closed: StartExecution's rules see it at once, DescribeExecution not yet, nor the service's adapter.
    await expect(startIt(name)).rejects.toMatchObject({ name: 'ExecutionAlreadyExists' });
    const early = await describe(name);
    const adapter = await new StepFunctionsRetryWorkflow(lc, LOCAL_STATE_MACHINE_ARN).start(name, state(0));
    expect({ status: early.status, error: early.error, adapter, within: Date.now() - startedAt < LAG }).toEqual({ status: 'RUNNING', error: undefined, adapter: 'running', within: true });
    await until(async () => (await describe(name)).status !== 'RUNNING', 20_000, 'the close became visible');
    const late = await describe(name);
    expect({ status: late.status, error: late.error, after: Date.now() - startedAt >= LAG }).toEqual({ status: 'FAILED', error: expect.any(String), after: true });
    expect(await new StepFunctionsRetryWorkflow(lc, LOCAL_STATE_MACHINE_ARN).start(name, state(0))).toBe('failed');
  } finally {
    await lagged.stop();
  }
});
