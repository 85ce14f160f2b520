/**
 * A consume answers within its budget (docs/design/0006-bounded-consume.md) whatever it finds, and
 * what it finds too late is carried to a later consume, not lost.
 *
 * A consume with the default `timeout_seconds: 30` long-polls up to MAX_LONG_POLL_SECONDS (25 s).
 * Ten exhausted messages (`max_retries: 0`, delivered once already) become visible again about
 * 24.5 s into it, and dead-lettering them is slow (a 5 s latency spike on the dead-letter
 * publish's SQS send, injected on the SDK's middleware stack where the harsh switch and the fault
 * injector sit). A consume that receives until 25 s meets them and answers after about 30 s, past
 * API Gateway's 29 s cut (the client gets a 504, the messages stay hidden for the receive's
 * visibility). Receives stop SETTLE_RESERVE_MS before the 26 s answer deadline, so the consume
 * answers within CONSUME_ANSWER_MS, and the late messages are dead-lettered by a later consume,
 * each exactly once.
 */
import type { MiddlewareStack } from '@smithy/types';
import { registerClientPlugin } from '../../lambda/core/client-plugins';
import { CONSUME_ANSWER_MS } from '../../lambda/queues/rules/queues';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { afterNewQueueDelay } from '../fixtures/harsh-waits';
import { queueApi } from '../fixtures/queues';
import { slowDynamoAnswers } from '../fixtures/dynamo-calls';
import { scaled } from '../fixtures/time-scale';
import { consume } from '../../lambda/queues/consume';

jest.setTimeout(240_000);

/** While on, every SQS send of a dead-lettered message (its body names its source queue) takes `ms` longer. */
const slowDeadLetters = { on: false, ms: 5000, delayed: 0 };
registerClientPlugin('sqs', {
  applyToStack(stack: MiddlewareStack<any, any>) {
    stack.add(
      (next, context) => async (args) => {
        const input = args.input as { MessageBody?: string; Entries?: { MessageBody?: string }[] };
        const bodies = [input.MessageBody, ...(input.Entries ?? []).map((e) => e.MessageBody)];
        if (slowDeadLetters.on && /^SendMessage(Batch)?Command$/.test(context.commandName ?? '') && bodies.some((b) => b?.includes('dlq_source_queue'))) {
          slowDeadLetters.delayed++;
          await sleep(slowDeadLetters.ms);
        }
        return next(args);
      },
      { step: 'initialize', name: 'slowDeadLetterSends' },
    );
  },
});

let server: TestServer;
let q: ReturnType<typeof queueApi>;
let nsName: string;
beforeAll(async () => {
  server = await startTestServer();
  const ns = await createTestNamespace('qdl');
  nsName = ns.name;
  q = queueApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('answers within the budget when exhausted messages reappear late in a long poll; a later consume dead-letters each exactly once', async () => {
  const EXHAUSTED = 10; // one receive's worth
  const VISIBILITY_S = 30;
  const REAPPEAR_AT_MS = 24_500;
  const dead = await q.createOnOwnTopic();
  const { name, topic } = await q.createOnOwnTopic({ max_retries: 0, dead_letter_topic: dead.topic });
  await afterNewQueueDelay();
  const old = (await q.publishBatch(topic, Array.from({ length: EXHAUSTED }, (_, i) => ({ payload: `old-${i}` })))).message_ids;

  // Their one delivery, not acked: they reappear VISIBILITY_S later, exhausted.
  const seen = new Set<string>();
  let receivedAt = 0;
  for (let i = 0; i < 20 && seen.size < EXHAUSTED; i++) {
    const got = await q.consume(name, { max_messages: 10, visibility_timeout_seconds: VISIBILITY_S });
    if (got.length && seen.size === 0) receivedAt = Date.now();
    for (const m of got) seen.add(m.message_id);
  }
  expect([...seen].sort()).toEqual([...old].sort());
  if (seen.size !== EXHAUSTED || Date.now() - receivedAt > 1000) throw new Error('the first delivery took more than one receive; the timing below needs one');

  await sleep(receivedAt + VISIBILITY_S * 1000 - REAPPEAR_AT_MS - Date.now());
  slowDeadLetters.on = true;
  const started = Date.now();
  const res = await q.call('POST', `/queues/${name}/messages/consume`, { max_messages: 10, visibility_timeout_seconds: 60 }); // timeout_seconds: the default 30
  const tookMs = Date.now() - started;
  slowDeadLetters.on = false;

  expect(res.status).toBe(200);
  expect(res.body.data.messages).toEqual([]);
  expect(tookMs).toBeLessThan(CONSUME_ANSWER_MS);

  // A later consume meets them and dead-letters each exactly once; nothing is lost.
  const deadLettered = new Map<string, number>();
  const drainEnd = Date.now() + 120_000;
  while (Date.now() < drainEnd && deadLettered.size < EXHAUSTED) {
    expect(await q.consume(name, { max_messages: 10, timeout_seconds: 2 })).toEqual([]);
    for (const m of await q.consume(dead.name, { max_messages: 100, timeout_seconds: 1 })) {
      deadLettered.set(m.payload, (deadLettered.get(m.payload) ?? 0) + 1);
      expect((await q.ack(dead.name, m.message_id, m.receipt_handle)).status).toBe(200);
    }
  }
  expect([...deadLettered.keys()].sort()).toEqual(Array.from({ length: EXHAUSTED }, (_, i) => `old-${i}`).sort());
  expect([...deadLettered.values()].every((n) => n === 1)).toBe(true);
  // No copy arrives later, and the counters agree: both queues are empty.
  await sleep(2000);
  expect(await q.consume(dead.name, { max_messages: 100, timeout_seconds: 1 })).toEqual([]);
  expect((await q.get(name)).message_count).toBe(0);
  expect((await q.get(dead.name)).message_count).toBe(0);
});

it('answers by its deadline when settling what it received meets slow storage, and the messages it answered with stay its own', async () => {
  // Every DynamoDB write 2.5 s late (a throttled table under the SDK's backoff): settling an
  // exhausted message writes its claim, the dead-letter publish's counters, the claim's finish
  // and the counters in turn, about 12 s, far past a deadline 4 s away.
  const dead = await q.createOnOwnTopic();
  const { name, topic } = await q.createOnOwnTopic({ max_retries: 0, dead_letter_topic: dead.topic });
  await afterNewQueueDelay();
  const [poison] = (await q.publishBatch(topic, [{ payload: 'exhausted' }])).message_ids;
  expect((await q.consume(name, { visibility_timeout_seconds: 1 })).map((m) => m.message_id)).toEqual([poison]);
  const { message_id: fresh } = await q.publish(topic, { payload: 'fresh' });
  await sleep(1200);
  const slow = slowDynamoAnswers({ when: (c) => /^(Put|Update|Delete|TransactWrite)(Item)?Command$/.test(c.command), ms: 2500 });
  slow.arm();
  const started = Date.now();
  let got;
  try {
    got = await consume(nsName, name, { max_messages: 10, timeout_seconds: 0, visibility_timeout_seconds: 30, consumer: 'deadline-test', deadlineMs: started + 4000 });
  } finally {
    slow.disarm();
  }
  const tookMs = Date.now() - started;
  slow.stop();
  // The deadline, and half a second for the process to run what answers after it, scaled on a
  // shared machine (test/fixtures/time-scale.ts): a loaded local CI run took 5.18 s against 4.5.
  // Without the deadline the settles take about 12 s, far beyond either.
  expect(tookMs).toBeLessThan(4000 + scaled(500));
  // The fresh message is answered (its handle current); the exhausted one is not returned.
  expect(got.map((m) => m.message_id)).toEqual([fresh]);
  expect((await q.ack(name, fresh, got[0].receipt_handle)).status).toBe(200);
});

