/**
 * `GET /queues/{name}/stats` when IAM denies SQS's counts (a deployment whose grants lag behind
 * the code, as the queues role did before it got sqs:GetQueueAttributes on the service queues):
 * the envelope's 500 says what was refused and what the operator does about it, not "retry
 * later". The denial is injected on the SDK's middleware stack, as SQS answers it in AWS (HTTP
 * 403, error code AccessDenied).
 */
import type { MiddlewareStack } from '@smithy/types';
import { registerClientPlugin } from '../../lambda/core/client-plugins';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';

jest.setTimeout(60_000);

const denyCounts = { on: false };
registerClientPlugin('sqs', {
  applyToStack(stack: MiddlewareStack<any, any>) {
    stack.add(
      (next, context) => async (args) => {
        if (denyCounts.on && context.commandName === 'GetQueueAttributesCommand') {
          throw Object.assign(new Error('User: arn:aws:sts::123456789012:assumed-role/QueuesRole/fn is not authorized to perform: sqs:getqueueattributes on resource: arn:aws:sqs:us-east-1:123456789012:Messaging_q_x because no identity-based policy allows the sqs:getqueueattributes action'), {
            name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 },
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'denyQueueCounts' },
    );
  },
});

let server: TestServer;
let api: ReturnType<typeof client>;
beforeAll(async () => {
  server = await startTestServer();
  api = client(server.baseUrl, (await createTestNamespace('qsd')).key);
  expect((await api('POST', '/queues', { name: 'q', topic_filter: 'q/#' })).status).toBe(201);
});
afterAll(() => server.close());

it('answers 500 INTERNAL_ERROR naming the refused permission and the fix when IAM denies the counts', async () => {
  expect((await api('GET', '/queues/q/stats')).status).toBe(200);
  denyCounts.on = true;
  try {
    const res = await api('GET', '/queues/q/stats');
    expect(res.status).toBe(500);
    expect(res.body.error?.code).toBe('INTERNAL_ERROR');
    expect(res.body.error?.message).toMatch(/sqs:GetQueueAttributes/);
    expect(res.body.error?.message).toMatch(/deploy/i);
    expect(res.body.error?.message).not.toMatch(/arn:aws/); // no internals
  } finally {
    denyCounts.on = false;
  }
});
