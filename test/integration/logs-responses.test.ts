/**
 * Consume responses of streams and subscriptions stay under Lambda's 6 MB response limit
 * (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html): with 25 messages of 256 KiB that JSON escapes twice over (quotes), a consume returns
 * fewer messages, `next_offset` and the subscriber's cursor move only over what it returned, and
 * the following consumes return the rest, each message exactly once.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { logApi } from '../fixtures/logs';

jest.setTimeout(90_000);

/** Lambda's limit on a synchronous response (the proxy result carries the body as a JSON string). */
const LAMBDA_RESPONSE_LIMIT = 6 * 1024 * 1024;
let server: TestServer;
let ns: TestNamespace;
let call: ReturnType<typeof client>;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('big');
  call = client(server.baseUrl, ns.key);
  logs = logApi(call);
});
afterAll(() => server.close());

/** 256 KiB of quotes with a tag up front: each is 1 MiB once escaped twice. */
const heavy = (i: number) => `${String(i).padStart(3, '0')}${'"'.repeat(256 * 1024 - 3)}`;
const tagOf = (payload: string) => Number(payload.slice(0, 3));
/** The size the body would take inside a Lambda proxy result. */
const proxyBytes = (text: string) => Buffer.byteLength(JSON.stringify({ statusCode: 200, headers: {}, body: text }));

it('a stream consume returns fewer messages than asked, and next_offset only past those', async () => {
  const { name, topic } = await logs.stream({ partition_count: 2 });
  for (let i = 0; i < 25; i++) await logs.publish(topic, { payload: heavy(i), partition_key: `k${i % 2}` });
  const seen: number[] = [];
  let next = 0;
  for (let reads = 0; seen.length < 25 && reads < 25; reads++) {
    const res = await call('POST', `/streams/${name}/messages/consume`, { consumer_group: 'g', start_offset: next, max_messages: 25, timeout_seconds: 0 });
    expect(res.status).toBe(200);
    expect(proxyBytes(res.text)).toBeLessThan(LAMBDA_RESPONSE_LIMIT);
    const { messages, next_offset } = res.body.data as { messages: { offset: number; payload: string }[]; next_offset: number };
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.length).toBeLessThan(25);
    expect(next_offset).toBe(messages[messages.length - 1].offset + 1);
    seen.push(...messages.map((m) => tagOf(m.payload)));
    next = next_offset;
  }
  expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i));
});

it('a subscription consume returns fewer messages than asked and moves the cursor only past those', async () => {
  const { name, topic } = await logs.subscription();
  for (let i = 0; i < 25; i++) await logs.publish(topic, { payload: heavy(i) });
  const seen: number[] = [];
  for (let reads = 0; reads < 25; reads++) {
    const res = await call('POST', `/subscriptions/${name}/messages/consume`, { subscriber_id: 'reader', max_messages: 100, timeout_seconds: 0 });
    expect(res.status).toBe(200);
    expect(proxyBytes(res.text)).toBeLessThan(LAMBDA_RESPONSE_LIMIT);
    const got = (res.body.data.messages as { payload: string }[]).map((m) => tagOf(m.payload));
    if (got.length === 0) break;
    expect(got.length).toBeLessThan(25);
    seen.push(...got);
  }
  expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i));
});
