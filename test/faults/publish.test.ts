/**
 * Publishing under single, placed faults on the real SQS and DynamoDB clients: a publish that
 * fails in one binding answers only once the other bindings are done with their writes (in
 * Lambda, nothing runs after the answer until the container's next invocation).
 */
import { afterNewQueueDelay } from '../fixtures/harsh-waits';
import { unique } from '../fixtures/queues';
import { placedFaults } from './placed';

jest.setTimeout(30_000);

const t = placedFaults({ namespace: 'fault-publish', seed: 3, services: ['dynamodb', 'sqs'] });

describe('publish under faults', () => {
  it('answers a publish that failed in its queue only after the stream has stored the message', async () => {
    const topic = unique('t');
    expect((await t.api.call('POST', '/queues', { name: unique('q'), topic_filter: topic })).status).toBe(201);
    const stream = unique('s');
    expect((await t.api.call('POST', '/streams', { name: stream, topic_filter: topic })).status).toBe(201);
    await afterNewQueueDelay(); // the fault is for a send to a ready queue
    // The queue's SQS send fails; the stream's log write is slow.
    t.injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before', attempts: Number.POSITIVE_INFINITY });
    t.injector.failNext({ service: 'dynamodb', command: 'BatchWriteItemCommand', timing: 'before', attempts: 0, delayMs: 3000 });
    const pub = await t.api.call('POST', `/topics/${topic}/messages`, { payload: 'slow stream' });
    expect(t.injector.unused).toBe(0);
    expect(pub.status).toBe(503);
    // At-least-once: the failed publish may be stored; what it stored is complete when it answers.
    const read = await t.api.call('POST', `/streams/${stream}/messages/consume`, { consumer_group: 'g', start_offset: 'earliest', timeout_seconds: 0 });
    expect(read.body?.data.messages.map((m: { payload: string }) => m.payload)).toEqual(['slow stream']);
  });
});
