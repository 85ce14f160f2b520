/**
 * A queue consume that meets many exhausted messages does bounded work
 * (docs/design/0008-dead-lettering-at-receive.md). It dead-letters at most what
 * {@link LEFTOVER_ROUNDS} receives brought (receives that gave nothing to return), so with
 * `max_messages: 1` (one message per receive) one consume dead-letters at most LEFTOVER_ROUNDS
 * messages; the rest wait for later consumes. Nothing is lost or dead-lettered twice, and a fresh
 * message's delivery is never spent on that work.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace } from '../fixtures/namespace';
import { queueApi, type ConsumedMessage } from '../fixtures/queues';
import { LEFTOVER_ROUNDS } from '../../lambda/queues/consume';

jest.setTimeout(120_000);

let server: TestServer;
let q: ReturnType<typeof queueApi>;
beforeAll(async () => {
  server = await startTestServer();
  const ns = await createTestNamespace('qcb');
  q = queueApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('consume work is bounded', () => {
  it('dead-letters at most LEFTOVER_ROUNDS exhausted messages per consume, each exactly once, and returns fresh messages with their first receive', async () => {
    const EXHAUSTED = 40;
    const FRESH = 3;
    const VISIBILITY = 5;
    const dead = await q.createOnOwnTopic();
    const { name, topic } = await q.createOnOwnTopic({ max_retries: 0, dead_letter_topic: dead.topic });
    const old = await q.publishBatch(topic, Array.from({ length: EXHAUSTED }, (_, i) => ({ payload: `old-${i}` })));
    expect(old.published_count).toBe(EXHAUSTED);

    // Each old message gets its one delivery (max_retries 0) and is not acked: once its visibility
    // ends, it is exhausted.
    const firstReceives = new Map<string, number>();
    for (let i = 0; i < 20 && firstReceives.size < EXHAUSTED; i++) {
      for (const m of await q.consume(name, { max_messages: 100, visibility_timeout_seconds: VISIBILITY })) firstReceives.set(m.message_id, m.receive_count);
    }
    const lastReceiveAt = Date.now();
    expect([...firstReceives.keys()].sort()).toEqual([...old.message_ids].sort());
    expect([...firstReceives.values()].every((n) => n === 1)).toBe(true);
    expect((await q.get(dead.name)).message_count).toBe(0);
    await sleep(lastReceiveAt + VISIBILITY * 1000 + 1000 - Date.now());

    const fresh = new Set<string>();
    for (let i = 0; i < FRESH; i++) fresh.add((await q.publish(topic, { payload: `fresh-${i}` })).message_id);

    // Consume one message at a time until every old message is dead-lettered and every fresh one
    // returned. Each consume answers 200 and dead-letters at most LEFTOVER_ROUNDS messages.
    const returned: ConsumedMessage[] = [];
    const perConsume: number[] = [];
    let deadCount = 0;
    for (let i = 0; i < 100 && (deadCount < EXHAUSTED || returned.length < FRESH); i++) {
      const res = await q.call('POST', `/queues/${name}/messages/consume`, { max_messages: 1, timeout_seconds: 0, visibility_timeout_seconds: 300 });
      expect(res.status).toBe(200);
      const got: ConsumedMessage[] = res.body.data.messages;
      expect(got.length).toBeLessThanOrEqual(1);
      for (const m of got) {
        returned.push(m);
        expect((await q.ack(name, m.message_id, m.receipt_handle)).status).toBe(200);
      }
      const nowDead = (await q.get(dead.name)).message_count;
      perConsume.push(nowDead - deadCount);
      deadCount = nowDead;
      // Nothing lost or counted twice: every message is in the source queue, dead-lettered, or acked.
      expect((await q.get(name)).message_count + deadCount + returned.length).toBe(EXHAUSTED + FRESH);
    }
    expect(Math.max(...perConsume)).toBeLessThanOrEqual(LEFTOVER_ROUNDS);
    expect(perConsume.reduce((a, b) => a + b, 0)).toBe(EXHAUSTED);
    // Bounded work takes several consumes to clear 40 exhausted messages.
    expect(perConsume.length).toBeGreaterThanOrEqual(Math.ceil(EXHAUSTED / LEFTOVER_ROUNDS));

    // Each fresh message returned once, on its first receive; no old message returned again.
    expect(returned.map((m) => m.message_id).sort()).toEqual([...fresh].sort());
    expect(returned.every((m) => m.receive_count === 1)).toBe(true);
    expect((await q.get(name)).message_count).toBe(0);

    // Each exhausted message is in the dead-letter queue exactly once, with its origin.
    const dl: ConsumedMessage[] = [];
    for (let i = 0; i < 20 && dl.length < EXHAUSTED; i++) dl.push(...(await q.consume(dead.name, { max_messages: 100, visibility_timeout_seconds: 300 })));
    expect(dl.map((m) => m.payload).sort()).toEqual(Array.from({ length: EXHAUSTED }, (_, i) => `old-${i}`).sort());
    expect(dl.every((m) => m.properties.dlq_source_queue === name && m.properties.dlq_receive_count === '1')).toBe(true);
    expect(await q.consume(dead.name, { max_messages: 100 })).toEqual([]);
  });
});
