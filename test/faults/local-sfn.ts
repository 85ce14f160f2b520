/**
 * A real SFNClient whose transport is the local Step Functions runner (local/stepfunctions.ts,
 * the same ASL file on aws-local-stepfunctions) instead of the network. The product's own
 * StepFunctionsRetryWorkflow sends StartExecution through it, so the SDK's whole middleware stack
 * runs (serialization, retries, deserialization, and the fault injector), and the request that
 * reaches the end is handed to the local engine: `npm start` calls that engine directly, which
 * leaves no SDK call to fail.
 *
 * StartExecution and DescribeExecution are served (the calls the service makes), in the AWS JSON
 * 1.0 protocol (`X-Amz-Target: AWSStepFunctions.<operation>`, errors as `{"__type", "message"}`),
 * with the runner's rules, which are Step Functions': a name used before starts nothing, and is
 * answered with success only while its execution is open and the input is the same
 * (ExecutionAlreadyExists otherwise,
 * https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html); the
 * service then asks DescribeExecution whether it runs or how it closed.
 */
import { Readable } from 'node:stream';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { LocalRetryWorkflow } from '../../local/stepfunctions';
import { executionArn } from '../../lambda/webhooks/storage/retry-workflow';

export const LOCAL_STATE_MACHINE_ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:msg-webhook-retry';

const answer = (status: number, value: object) => {
  const body = JSON.stringify(value);
  return {
    response: {
      statusCode: status,
      headers: { 'content-type': 'application/x-amz-json-1.0', 'content-length': String(Buffer.byteLength(body)), 'x-amzn-requestid': 'local' },
      body: Readable.from([Buffer.from(body)]),
    },
  };
};

export function localSfnClient(workflow: LocalRetryWorkflow): SFNClient {
  const requestHandler = {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle(request: { headers: Record<string, string>; body?: unknown }) {
      const target = Object.entries(request.headers).find(([k]) => k.toLowerCase() === 'x-amz-target')?.[1] ?? '';
      const text = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body as Uint8Array);
      try {
        if (target === 'AWSStepFunctions.StartExecution') {
          const input = JSON.parse(text) as { stateMachineArn: string; name: string; input: string };
          const { startDate } = workflow.startExecution(input.name, input.input);
          return answer(200, { executionArn: executionArn(input.stateMachineArn, input.name), startDate: startDate / 1000 });
        }
        if (target === 'AWSStepFunctions.DescribeExecution') {
          const { executionArn: arn } = JSON.parse(text) as { executionArn: string };
          const name = arn.slice(arn.lastIndexOf(':') + 1);
          const e = workflow.describeExecution(name);
          const stateMachineArn = arn.replace(':execution:', ':stateMachine:').slice(0, -(name.length + 1));
          return answer(200, { executionArn: arn, stateMachineArn, name, status: e.status, startDate: e.startDate / 1000, input: e.input, ...(e.error ? { error: e.error, cause: e.cause } : {}) });
        }
      } catch (e) {
        return answer(400, { __type: (e as Error).name, message: (e as Error).message });
      }
      return answer(400, { __type: 'UnknownOperationException', message: `${target} is not served locally` });
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
  return new SFNClient({
    region: 'us-east-1',
    endpoint: 'http://stepfunctions.local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: requestHandler as never,
  });
}
