/**
 * The message TTL of a queue through the local gateway on DynamoDB Local and fauxqs: a message is
 * never returned after `message_ttl_seconds` from its publish, and an old handle of it then
 * answers 404 (DESIGN.md section 13: gone).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi } from '../fixtures/queues';
import { scaled } from '../fixtures/time-scale';

jest.setTimeout(30_000);

let server: TestServer;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  q = queueApi(client(server.baseUrl, (await createTestNamespace('qt')).key));
});
afterAll(() => server.close());

describe('message TTL', () => {
  it('never returns a message after message_ttl_seconds', async () => {
    // 3 s at the suite's time scale: the first consume must come within the TTL (with 1 s, a loaded
    // CI run's publish and consume took longer, and the message had rightly expired before it was first received).
    const ttl = Math.round(scaled(3000) / 1000);
    const { name, topic } = await q.createOnOwnTopic({ message_ttl_seconds: ttl });
    await new Promise((r) => setTimeout(r, 1100)); // the new SQS queue is ready: the publish does not wait for it past the TTL
    const { timestamp } = await q.publish(topic, { payload: 'short-lived' });
    const expiresAt = Date.parse(timestamp) + ttl * 1000;
    // Received once, then the visibility timeout outlives the TTL.
    expect(await q.consume(name, { visibility_timeout_seconds: 0 })).toHaveLength(1);
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 20));
    expect(await q.consume(name, { max_messages: 10 })).toEqual([]);
    expect((await q.get(name)).message_count).toBe(0);
  });

  it('answers 404 to an old handle of a message past its TTL, before a consume met it as after (DESIGN.md section 13: gone)', async () => {
    // No consume returns it again, whether or not one has met it since: the answer must not
    // depend on that (409 "consume it again" before, 404 after).
    const ttl = Math.round(scaled(3000) / 1000);
    const { name, topic } = await q.createOnOwnTopic({ message_ttl_seconds: ttl });
    await new Promise((r) => setTimeout(r, 1100));
    const { timestamp } = await q.publish(topic, { payload: 'short-lived' });
    const [m] = await q.consume(name, { visibility_timeout_seconds: 1 });
    expect(m).toBeDefined();
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(timestamp) + ttl * 1000 - Date.now()) + 50));
    const before = await q.ack(name, m.message_id, m.receipt_handle);
    expect(await q.consume(name, { timeout_seconds: 1 })).toEqual([]);
    const after = await q.ack(name, m.message_id, m.receipt_handle);
    expect({ before: [before.status, before.body.error?.code], after: [after.status, after.body.error?.code] }).toEqual({ before: [404, 'MESSAGE_NOT_FOUND'], after: [404, 'MESSAGE_NOT_FOUND'] });
  });
});
