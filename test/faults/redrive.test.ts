/**
 * Redrive under faults (lambda/queues/redrive.ts, POST /queues/{name}/redrive): a call that fails
 * midway leaves no message hidden for long. A batch whose publish failed is visible again at once,
 * so the next call moves it; a batch whose receive answer was lost (SQS hid it, the SDK's retry
 * got nothing) comes back after the redrive's short visibility. Either way every dead letter
 * arrives at the topic.
 */
import { releaseToSqsQueue, sqsQueueCounts } from '../../lambda/queues/storage/service-queues';
import { sqsClient } from '../../lambda/core/adapters/sqs';
import { getQueue } from '../../lambda/queues/storage/queues';
import { afterNewQueueDelay } from '../fixtures/harsh-waits';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';

jest.setTimeout(120_000);

const t = placedFaults({ namespace: 'fault-redrive', seed: 33, services: ['sqs'] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A source queue (max_retries 0) whose 3 messages are dead-lettered to a queue of its own, and a target queue on the redrive's topic. */
async function deadLetters() {
  const n = unique('rd');
  const names = { source: `${n}-s`, dead: `${n}-d`, target: `${n}-t` };
  for (const [name, body] of [
    [names.source, { topic_filter: `${n}/s/#`, max_retries: 0, dead_letter_topic: `${n}/d/x` }],
    [names.dead, { topic_filter: `${n}/d/#` }],
    [names.target, { topic_filter: `${n}/t/#` }],
  ] as const) {
    expect((await t.api.call('POST', '/queues', { name, ...body })).status).toBe(201);
  }
  await afterNewQueueDelay();
  expect((await t.api.call('POST', `/topics/${n}/s/x/messages/batch`, { messages: ['a', 'b', 'c'].map((payload) => ({ payload })) })).status).toBe(201);
  // One delivery, visible again at once; the next consume finds the deliveries used up.
  expect((await t.api.call('POST', `/queues/${names.source}/messages/consume`, { max_messages: 10, timeout_seconds: 1, visibility_timeout_seconds: 0 })).body?.data.count).toBe(3);
  for (let i = 0; i < 10 && (await t.api.call('GET', `/queues/${names.dead}`)).body?.data.message_count < 3; i++) {
    await t.api.call('POST', `/queues/${names.source}/messages/consume`, { max_messages: 10, timeout_seconds: 1 });
  }
  expect((await t.api.call('GET', `/queues/${names.dead}`)).body?.data.message_count).toBe(3);
  const url = async (name: string) => `/${(await getQueue(t.namespace, name))!.sqs_queue}`;
  return { ...names, topic: `${n}/t/x`, deadUrl: await url(names.dead), targetUrl: await url(names.target) };
}

const redrive = async (q: Awaited<ReturnType<typeof deadLetters>>) => t.api.call('POST', `/queues/${q.dead}/redrive`, { to_topic: q.topic });
const inSqs = async (name: string) => {
  const c = (await sqsQueueCounts((await getQueue(t.namespace, name))!.sqs_queue))!;
  return c.visible + c.inFlight + c.delayed;
};

it('makes a batch whose publish failed visible again at once: the next call moves it', async () => {
  const q = await deadLetters();
  t.injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before', attempts: Number.POSITIVE_INFINITY, matches: (i) => String(i.QueueUrl).endsWith(q.targetUrl) });
  const failed = await redrive(q);
  expect(t.injector.unused).toBe(0);
  expect(failed.status).toBe(503);
  const again = await redrive(q);
  expect(again.body?.data).toMatchObject({ moved: 3, published_not_removed: 0 });
  expect(await inSqs(q.target)).toBe(3);
  expect(await inSqs(q.dead)).toBe(0);
});

it('gets back a batch whose receive answer was lost within the redrive visibility', async () => {
  const q = await deadLetters();
  t.injector.failNext({ service: 'sqs', command: 'ReceiveMessageCommand', kind: { code: 'InternalError', status: 500 }, timing: 'after', attempts: 1, matches: (i) => String(i.QueueUrl).endsWith(q.deadUrl) });
  const first = await redrive(q);
  expect(t.injector.unused).toBe(0);
  expect(first.status).toBe(200);
  let moved = first.body?.data.moved as number;
  expect(moved).toBeLessThan(3); // the lost receive's messages are hidden
  // A redrive's visibility (REDRIVE_VISIBILITY_SECONDS) and some: not 5 minutes.
  const until = Date.now() + 45_000;
  while (moved < 3 && Date.now() < until) {
    await sleep(2000);
    moved += (await redrive(q)).body?.data.moved ?? 0;
  }
  expect(moved).toBe(3);
  expect(await inSqs(q.target)).toBe(3);
});

it('moves two SQS copies of one dead letter as one message: the same id twice', async () => {
  const n = unique('rd');
  const names = { dead: `${n}-d`, target: `${n}-t` };
  expect((await t.api.call('POST', '/queues', { name: names.dead, topic_filter: `${n}/d/#` })).status).toBe(201);
  expect((await t.api.call('POST', '/queues', { name: names.target, topic_filter: `${n}/t/#` })).status).toBe(201);
  await afterNewQueueDelay();
  // The send is applied but its answer lost; the SDK's retry stores the message a second time.
  const deadUrl = `/${(await getQueue(t.namespace, names.dead))!.sqs_queue}`;
  t.injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: { code: 'InternalError', status: 500 }, timing: 'after', attempts: 1, matches: (i) => String(i.QueueUrl).endsWith(deadUrl) });
  expect((await t.api.call('POST', `/topics/${n}/d/x/messages`, { payload: 'dead' })).status).toBe(201);
  expect(t.injector.unused).toBe(0);
  expect(await inSqs(names.dead)).toBe(2);

  expect((await t.api.call('POST', `/queues/${names.dead}/redrive`, { to_topic: `${n}/t/x` })).body?.data).toMatchObject({ moved: 2 });
  expect(await inSqs(names.target)).toBe(2);
  // Both copies arrive with one id (a consume returns an id once).
  const got = (await t.api.call('POST', `/queues/${names.target}/messages/consume`, { max_messages: 10, timeout_seconds: 2, visibility_timeout_seconds: 300 })).body?.data.messages as { message_id: string }[];
  expect(got).toHaveLength(1);
});

it('does not count again what a consumer received and acknowledged while the redrive\'s publish outlasted its visibility', async () => {
  const q = await deadLetters();
  const deadSqs = (await getQueue(t.namespace, q.dead))!.sqs_queue;
  // The redrive's receive is captured; its publish to the target then outlasts the receive's
  // visibility (here: the batch is made visible again while the publish waits), and a consumer
  // receives and acknowledges the three messages meanwhile, counting them once.
  let handles: string[] = [];
  let acked = 0;
  let slowed = false;
  const name = 'redrive-outlasted';
  sqsClient().middlewareStack.add(
    (next, context) => async (args) => {
      const url = String((args.input as { QueueUrl?: string }).QueueUrl ?? '');
      if (context.commandName === 'ReceiveMessageCommand' && url.endsWith(q.deadUrl) && !slowed) {
        const out = await next(args);
        handles = ((out.output as { Messages?: { ReceiptHandle?: string }[] }).Messages ?? []).map((m) => m.ReceiptHandle ?? '');
        return out;
      }
      if (context.commandName === 'SendMessageBatchCommand' && url.endsWith(q.targetUrl) && !slowed) {
        slowed = true;
        await releaseToSqsQueue(deadSqs, handles);
        const got = (await t.api.call('POST', `/queues/${q.dead}/messages/consume`, { max_messages: 10, timeout_seconds: 2, visibility_timeout_seconds: 60 })).body?.data.messages as { message_id: string; receipt_handle: string }[];
        for (const m of got) if ((await t.api.call('POST', `/queues/${q.dead}/messages/${m.message_id}/ack`, { receipt_handle: m.receipt_handle })).status === 200) acked++;
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  let res;
  try {
    res = await redrive(q);
  } finally {
    sqsClient().middlewareStack.remove(name);
  }
  expect({ slowed, handles: handles.length, acked }).toEqual({ slowed: true, handles: 3, acked: 3 });
  // Published (at least once), not removed by the redrive, and counted out once: by the acks.
  expect(res.body?.data).toMatchObject({ moved: 0, published_not_removed: 3 });
  expect((await t.api.call('GET', `/queues/${q.dead}`)).body?.data.message_count).toBe(0);
  expect(await inSqs(q.dead)).toBe(0);
});
