/**
 * A real SFNClient whose transport is the local Step Functions runner (local/stepfunctions.ts,
 * the same ASL file on aws-local-stepfunctions) instead of the network. The product's own
 * StepFunctionsRetryWorkflow sends StartExecution through it, so the SDK's whole middleware stack
 * runs (serialization, retries, deserialization, and the fault injector), and the request that
 * reaches the end is handed to the local engine: `npm start` calls that engine directly, which
 * leaves no SDK call to fail.
 *
 * Only StartExecution is served (the only call the service makes), in the AWS JSON 1.0 protocol:
 * `X-Amz-Target: AWSStepFunctions.StartExecution`, errors as `{"__type", "message"}`.
 */
import { Readable } from 'node:stream';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { LocalRetryWorkflow } from '../../local/stepfunctions';

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
      if (target !== 'AWSStepFunctions.StartExecution') return answer(400, { __type: 'UnknownOperationException', message: `${target} is not served locally` });
      const text = typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body as Uint8Array);
      const input = JSON.parse(text) as { stateMachineArn: string; name: string; input: string };
      try {
        await workflow.startExecution(input.name, JSON.parse(input.input));
      } catch (e) {
        return answer(400, { __type: (e as Error).name, message: (e as Error).message });
      }
      return answer(200, { executionArn: `${input.stateMachineArn.replace(':stateMachine:', ':execution:')}:${input.name}`, startDate: Date.now() / 1000 });
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
