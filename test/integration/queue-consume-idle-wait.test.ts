/**
 * An idle consume (the default `timeout_seconds: 30`, an empty queue) waits as long as API
 * Gateway's 29 s allow less the answer's margin (lambda/queues/consume.ts, CONSUME_ANSWER_MS): about
 * 27 s, so an idle consumer makes fewer requests a month, and it still answers within the local
 * gateway's 29 s (a later answer would be its 504). Its container keeps the slot of an empty
 * consume (lambda/long-poll/bulkhead.ts): the next idle consume moves it with one write per slot
 * item (no give-back, no take) and skips the unslotted first second: two long polls, two writes.
 */
import { randomUUID } from 'node:crypto';
import { resetConfig } from '../../lambda/config';
import { ddb } from '../../lambda/storage/client';
import { getQueue } from '../../lambda/storage/queues';
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

/** UpdateItems on the long-poll slot items while `watching`. */
const slotWrites = { watching: false, keys: [] as string[] };
ddb().middlewareStack.add(
  (next, context) => async (args) => {
    const pk = String((args.input as { Key?: { pk?: unknown } }).Key?.pk ?? '');
    if (slotWrites.watching && /^Update(Item)?Command$/.test(context.commandName ?? '') && pk.includes('LONGPOLL')) slotWrites.keys.push(pk);
    return next(args);
  },
  { step: 'initialize', name: 'countIdleSlotWrites' },
);

const savedPool = process.env.MSG_LONG_POLL_POOL;
let server: TestServer;
let q: ReturnType<typeof queueApi>;
let ns: string;
beforeAll(async () => {
  // A pool of this file's own: files running beside it write the default pool's shards.
  process.env.MSG_LONG_POLL_POOL = `idle-wait-${randomUUID()}`;
  resetConfig();
  server = await startTestServer();
  const created = await createTestNamespace('qiw');
  ns = created.name;
  q = queueApi(client(server.baseUrl, created.key));
});
afterAll(async () => {
  await server.close();
  if (savedPool === undefined) delete process.env.MSG_LONG_POLL_POOL;
  else process.env.MSG_LONG_POLL_POOL = savedPool;
  resetConfig();
});

it('an idle consume waits about 27 s and answers within the gateway budget', async () => {
  const { name } = await q.createOnOwnTopic();
  await afterNewQueueDelay();
  // The server's first consume is its container's first request: it gives up the time since the
  // start (up to 3 s, lambda/handlers/queues.ts), as a cold Lambda's first consume does.
  expect((await q.call('POST', `/queues/${name}/messages/consume`, { timeout_seconds: 0 })).status).toBe(200);
  receives.queue = (await getQueue(ns, name))!.sqs_queue;
  for (let i = 0; i < 2; i++) {
    receives.count = 0;
    slotWrites.keys = [];
    slotWrites.watching = true;
    const started = Date.now();
    const res = await q.call('POST', `/queues/${name}/messages/consume`, {}); // timeout_seconds: the default 30
    const took = Date.now() - started;
    slotWrites.watching = false;
    expect(res.status).toBe(200);
    expect(res.body.data.messages).toEqual([]);
    // About 26 to 27 s: receives stop 1.5 s before the 28.5 s answer deadline, and SQS waits are
    // whole seconds (before: 23 to 24 s, receives stopping 2 s before a 26 s deadline).
    expect(took).toBeGreaterThanOrEqual(25_500);
    expect(took).toBeLessThan(29_000);
    if (i === 0) {
      // The unslotted first second, then 20 s and the rest in a slot it takes and keeps.
      expect(receives.count).toBe(3);
      continue;
    }
    // The queue was idle: the kept slot moved (one write on the namespace's item, one on the
    // pool's shard; a take and a give-back were four), and two long polls (20 s and the rest).
    expect(slotWrites.keys).toHaveLength(2);
    expect(receives.count).toBe(2);
  }
});
