/**
 * `npm run admin -- redrive` against DynamoDB Local: messages dead-lettered by a queue are moved
 * from the dead-letter topic's queue back to a topic, published before they are removed, without
 * their dlq_* properties and with their x-hop, with the queues' counters right afterwards.
 */
import { run } from '../../bin/admin';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';

// A redrive ends with an empty long poll of the dead-letter queue (lambda/queues/redrive.ts): a
// second or two idle, over jest's default 5 s with its publishes on a loaded CI run.
jest.setTimeout(30_000);

let server: TestServer;
let ns: TestNamespace;
let call: ReturnType<typeof client>;

async function admin(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env: process.env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
async function redriveJson(...argv: string[]) {
  const r = await admin('redrive', ns.name, ...argv, '--json');
  expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.stringContaining('target: ') });
  return JSON.parse(r.out);
}
const messageCount = async (queue: string) => (await call('GET', `/queues/${queue}`)).body.data.message_count as number;
const consumeAll = async (queue: string) => (await call('POST', `/queues/${queue}/messages/consume`, { max_messages: 100, timeout_seconds: 0 })).body.data.messages as any[];

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('rd');
  call = client(server.baseUrl, ns.key);
  // `orders` delivers each message once, then dead-letters it to dlq/orders, which `orders-dlq` keeps.
  expect((await call('POST', '/queues', { name: 'orders', topic_filter: 'orders/#', max_retries: 0, dead_letter_topic: 'dlq/orders' })).status).toBe(201);
  expect((await call('POST', '/queues', { name: 'orders-dlq', topic_filter: 'dlq/#' })).status).toBe(201);
  for (let i = 0; i < 5; i++) {
    const r = await call('POST', '/topics/orders/eu/messages', { payload: `order ${i}`, content_type: 'text/plain', properties: { n: String(i) } });
    expect(r.status).toBe(201);
  }
  // First delivery, visible again at once; the next consume finds the deliveries used up.
  const first = await call('POST', '/queues/orders/messages/consume', { max_messages: 100, timeout_seconds: 0, visibility_timeout_seconds: 0 });
  expect(first.body.data.count).toBe(5);
  expect(await consumeAll('orders')).toEqual([]);
  expect(await messageCount('orders-dlq')).toBe(5);
}, 60_000);
afterAll(async () => {
  await server.close();
});

describe('admin CLI: redrive', () => {
  it('counts without moving anything on --dry-run', async () => {
    const r = await redriveJson('orders-dlq', '--to-topic', 'orders/eu', '--dry-run');
    expect(r).toMatchObject({ queue: 'orders-dlq', topic: 'orders/eu', dry_run: true, found: 5, moved: 5 });
    expect(await messageCount('orders-dlq')).toBe(5);
    expect(await messageCount('orders')).toBe(0);
  });

  it('moves at most --max messages, publishing them without dlq_* properties and with their x-hop', async () => {
    const r = await redriveJson('orders-dlq', '--to-topic', 'orders/eu', '--max', '2');
    expect(r).toMatchObject({ dry_run: false, found: 5, moved: 2, published_not_removed: 0, remaining: 3 });
    expect(await messageCount('orders-dlq')).toBe(3);
    expect(await messageCount('orders')).toBe(2);
    const moved = await consumeAll('orders');
    expect(moved).toHaveLength(2);
    for (const m of moved) {
      expect(m).toMatchObject({ payload: expect.stringMatching(/^order \d$/), content_type: 'text/plain', receive_count: 1 });
      expect(m.properties).toEqual({ n: expect.any(String), 'x-hop': '1' });
    }
  });

  it('moves the rest and prints what it did', async () => {
    const r = await admin('redrive', ns.name, 'orders-dlq', '--to-topic', 'orders/us');
    expect(r).toMatchObject({ code: 0, out: 'moved 3 message(s) from queue orders-dlq to topic orders/us; 0 left in the queue' });
    expect(await messageCount('orders-dlq')).toBe(0);
    // The two consumed above are still in flight, plus the three just moved.
    expect(await messageCount('orders')).toBe(5);
    const again = await redriveJson('orders-dlq', '--to-topic', 'orders/us');
    expect(again).toMatchObject({ found: 0, moved: 0, remaining: 0 });
  });

  it('refuses a topic that its own queue matches, moving nothing', async () => {
    await call('POST', '/topics/dlq/orders/messages', { payload: 'x' });
    const r = await admin('redrive', ns.name, 'orders-dlq', '--to-topic', 'dlq/again');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/queue orders-dlq itself matches topic dlq\/again/);
    expect(await messageCount('orders-dlq')).toBe(1);
  });

  it('refuses a topic nothing matches and a queue that does not exist', async () => {
    const topic = await admin('redrive', ns.name, 'orders-dlq', '--to-topic', 'nowhere/at/all');
    expect(topic).toMatchObject({ code: 1, err: expect.stringContaining('TOPIC_NOT_FOUND') });
    const queue = await admin('redrive', ns.name, 'no-such-queue', '--to-topic', 'orders/eu');
    expect(queue).toMatchObject({ code: 1, err: expect.stringContaining('QUEUE_NOT_FOUND') });
    expect(await messageCount('orders-dlq')).toBe(1);
  });

  it.each([
    [['orders-dlq'], /needs --to-topic/],
    [['orders-dlq', '--to-topic', 'a//b'], /is not a topic name/],
    [['orders-dlq', '--to-topic', 'orders/eu', '--max', '0'], /--max 0 is not a count/],
    [['bad name!', '--to-topic', 'orders/eu'], /is not a queue name/],
  ])('exits 2 on the command line %j', async (argv, message) => {
    const r = await admin('redrive', ns.name, ...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });
});
