/**
 * An idle consume (the default `timeout_seconds: 30`, an empty queue) waits as long as API
 * Gateway's 29 s allow less the answer's margin (lambda/queues/consume.ts, CONSUME_ANSWER_MS): about
 * 27 s, so an idle consumer makes fewer requests a month, and it still answers within the local
 * gateway's 29 s (a later answer would be its 504).
 */
import type { MiddlewareStack } from '@smithy/types';
import { registerClientPlugin } from '../../lambda/client-plugins';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { afterNewQueueDelay } from '../fixtures/harsh-waits';
import { queueApi } from '../fixtures/queues';

jest.setTimeout(180_000);

/** ReceiveMessage calls on the watched queue's SQS queue. */
const receives = { queue: '', count: 0 };
registerClientPlugin('sqs', {
  applyToStack(stack: MiddlewareStack<any, any>) {
    stack.add(
      (next, context) => async (args) => {
        const url = String((args.input as { QueueUrl?: string }).QueueUrl ?? '');
        if (context.commandName === 'ReceiveMessageCommand' && receives.queue && url.includes(receives.queue)) receives.count++;
        return next(args);
      },
      { step: 'initialize', name: 'countIdleReceives' },
    );
  },
});

let server: TestServer;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  const ns = await createTestNamespace('qiw');
  q = queueApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

it('an idle consume waits about 27 s and answers within the gateway budget', async () => {
  const { name } = await q.createOnOwnTopic();
  await afterNewQueueDelay();
  // The server's first consume is its container's first request: it gives up the time since the
  // start (up to 3 s, lambda/handlers/queues.ts), as a cold Lambda's first consume does.
  expect((await q.call('POST', `/queues/${name}/messages/consume`, { timeout_seconds: 0 })).status).toBe(200);
  receives.queue = name;
  for (let i = 0; i < 2; i++) {
    receives.count = 0;
    const started = Date.now();
    const res = await q.call('POST', `/queues/${name}/messages/consume`, {}); // timeout_seconds: the default 30
    const took = Date.now() - started;
    expect(res.status).toBe(200);
    expect(res.body.data.messages).toEqual([]);
    // About 26 to 27 s: receives stop 1.5 s before the 28.5 s answer deadline, and SQS waits are
    // whole seconds (before: 23 to 24 s, receives stopping 2 s before a 26 s deadline).
    expect(took).toBeGreaterThanOrEqual(25_500);
    expect(took).toBeLessThan(29_000);
    // Its receives: long polls of at most 20 s each (the first, unslotted second is one of them).
    expect(receives.count).toBeLessThanOrEqual(3);
  }
});
