/**
 * Publishing under single, placed faults on the real SQS and DynamoDB clients: a publish that
 * fails in one binding answers only once the other bindings are done with their writes (in
 * Lambda, nothing runs after the answer until the container's next invocation).
 */
import { dynamoClient } from '../../lambda/storage/client';
import { sqsClient } from '../../lambda/adapters/sqs';
import { startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { ApiClient } from './api';
import { FaultInjector } from './injector';

jest.setTimeout(30_000);

let server: TestServer;
let api: ApiClient;
const injector = new FaultInjector(3);

beforeAll(async () => {
  server = await startTestServer();
  const ns = await createTestNamespace('fault-publish');
  api = new ApiClient(server.baseUrl, ns.key);
  injector.attach(dynamoClient(), 'dynamodb');
  injector.attach(sqsClient(), 'sqs');
});
afterAll(async () => {
  injector.set(undefined);
  api.close();
  await server.close();
});

describe('publish under faults', () => {
  it('answers a publish that failed in its queue only after the stream has stored the message', async () => {
    const topic = unique('t');
    expect((await api.call('POST', '/queues', { name: unique('q'), topic_filter: topic })).status).toBe(201);
    const stream = unique('s');
    expect((await api.call('POST', '/streams', { name: stream, topic_filter: topic })).status).toBe(201);
    // The queue's SQS send fails; the stream's log write is slow.
    injector.failNext({ service: 'sqs', command: 'SendMessageBatchCommand', kind: { code: 'ServiceUnavailable', status: 503 }, timing: 'before', attempts: Number.POSITIVE_INFINITY });
    injector.failNext({ service: 'dynamodb', command: 'BatchWriteItemCommand', timing: 'before', attempts: 0, delayMs: 3000 });
    const pub = await api.call('POST', `/topics/${topic}/messages`, { payload: 'slow stream' });
    expect(injector.unused).toBe(0);
    expect(pub.status).toBe(503);
    // At-least-once: the failed publish may be stored; what it stored is complete when it answers.
    const read = await api.call('POST', `/streams/${stream}/messages/consume`, { consumer_group: 'g', start_offset: 'earliest', timeout_seconds: 0 });
    expect(read.body?.data.messages.map((m: { payload: string }) => m.payload)).toEqual(['slow stream']);
  });
});
