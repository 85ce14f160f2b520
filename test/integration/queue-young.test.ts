/**
 * A queue right after its create, while SQS may still answer QueueDoesNotExist (AWS: "wait at
 * least one second after the queue is created to be able to use the queue"; the harsh SQS layer,
 * local/aws-harsh/sqs.ts, refuses a new queue for `newQueueMs`): a consume waits for it within
 * the service's grace of 2 s from the queue's `created_at` (lambda/queues/storage/service-queues.ts
 * receiveFromSqsQueue), as a publish sent with it does, whatever the consuming container's clock
 * says, and its deadline coming first answers no messages rather than "not found".
 */
import { harshSqsSharedState } from '../../local/aws-harsh/sqs';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { queueApi, unique } from '../fixtures/queues';

jest.setTimeout(60_000);

let server: TestServer;
let ns: TestNamespace;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('qy');
  q = queueApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

function harsh() {
  const state = harshSqsSharedState();
  if (!state) throw new Error('the harsh SQS layer is off in this test (MSG_AWS_HARSH): it refuses new queues for a while, as SQS does');
  return state;
}

/** A new queue and its SQS queue's name (its id, from the store). */
async function newQueue(): Promise<{ name: string; sqsName: string }> {
  const name = unique('q');
  await q.create({ name, topic_filter: `${name}/#` });
  const { getQueue } = await import('../../lambda/queues/storage/queues');
  return { name, sqsName: (await getQueue(ns.name, name))!.sqs_queue };
}

it('a consume right after the create finds a queue SQS refuses for 1.8 s, as a publish sent with it stores its message', async () => {
  // Within the 2 s grace: the receives used to stop at about 1.7 s, when the next backoff would
  // have ended past the grace, and the consume answered 404 while the publish answered 201.
  const state = harsh();
  const before = state.settings.newQueueMs;
  state.settings.newQueueMs = 1800;
  try {
    const { name } = await newQueue();
    const [consumed, published] = await Promise.all([
      q.call('POST', `/queues/${name}/messages/consume`, { timeout_seconds: 5 }),
      q.call('POST', `/topics/${name}/t/messages`, { payload: 'young' }),
    ]);
    expect({ publish: published.status, consume: consumed.status, code: consumed.body.error?.code, count: consumed.body.data?.count }).toEqual({
      publish: 201,
      consume: 200,
      code: undefined,
      count: 1,
    });
  } finally {
    state.settings.newQueueMs = before;
  }
});

it('a receive waits at most the young queue\'s second whatever the gap between the creating and the consuming clock', async () => {
  // The stamp is the creating container's clock: a consumer whose clock is 5 s behind used to
  // wait 5 s more than the queue needed. Driven at the module, as the local runtime has one clock.
  const { receiveFromSqsQueue } = await import('../../lambda/queues/storage/service-queues');
  const { sqsName } = await newQueue();
  const t0 = Date.now();
  const got = await receiveFromSqsQueue(sqsName, { max: 1, waitSeconds: 1, visibilitySeconds: 30, createdAt: t0 + 5_000, notAfter: t0 + 24_000 });
  const ms = Date.now() - t0;
  // The young queue's second, then a long poll of 1 s on the empty queue (7 s with the 5 s skew added).
  expect({ messages: got.length, withinTheSecondAndAPoll: ms <= 5_000 }).toEqual({ messages: 0, withinTheSecondAndAPoll: true });
});

it('a receive whose deadline comes before the young queue is usable answers no messages, not a queue gone', async () => {
  const { receiveFromSqsQueue } = await import('../../lambda/queues/storage/service-queues');
  const { sqsName } = await newQueue();
  const t0 = Date.now();
  await expect(receiveFromSqsQueue(sqsName, { max: 1, waitSeconds: 1, visibilitySeconds: 30, createdAt: t0, notAfter: t0 + 300 })).resolves.toEqual([]);
});
