/**
 * Streams of 8 partitions under concurrent publishers, through the real local gateway on DynamoDB
 * Local (docs/streams-and-subscriptions.md): offsets stay unique and increasing per stream, each
 * key keeps one partition and its order, the unfiltered read merges the partitions in offset order,
 * and readers that follow `next_offset` while publishes are in flight (all partitions, or one)
 * never skip.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { logApi, type StreamMessage } from '../fixtures/logs';

jest.setTimeout(90_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('p8');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/** `writers` publishers, each `batches` batch publishes of `size` messages over 3 keys of its own. */
async function publishConcurrently(topic: string, writers: number, batches: number, size: number) {
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const seq = [0, 0, 0];
      for (let b = 0; b < batches; b++) {
        const messages = Array.from({ length: size }, (_, i) => {
          const k = (b + i) % 3;
          return { payload: `w${w}-k${k}:${seq[k]++}`, partition_key: `w${w}-k${k}` };
        });
        await logs.publishBatch(topic, messages);
      }
    }),
  );
  return writers * batches * size;
}

const keyOf = (m: StreamMessage) => m.payload.split(':')[0];
const seqOf = (m: StreamMessage) => Number(m.payload.split(':')[1]);

describe('a stream of 8 partitions', () => {
  it('gives concurrent publishers unique increasing offsets and keeps each key in one partition, in order', async () => {
    const { name, topic } = await logs.stream({ partition_count: 8 });
    const total = await publishConcurrently(topic, 12, 10, 5);
    const { messages } = await logs.read(name);
    expect(messages).toHaveLength(total);
    const offsets = messages.map((m) => m.offset);
    expect(new Set(offsets).size).toBe(total);
    expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
    const byKey = new Map<string, StreamMessage[]>();
    for (const m of messages) byKey.set(keyOf(m), [...(byKey.get(keyOf(m)) ?? []), m]);
    expect(byKey.size).toBe(36);
    for (const list of byKey.values()) {
      expect(list.map(seqOf)).toEqual(list.map((_, i) => i));
      expect(new Set(list.map((m) => m.partition)).size).toBe(1);
    }
    expect(new Set(messages.map((m) => m.partition)).size).toBe(8);
    for (let p = 0; p < 8; p++) {
      const only = await logs.read(name, { partition: p });
      expect(only.messages).toEqual(messages.filter((m) => m.partition === p));
    }
    const d = await logs.getStream(name);
    expect([d.earliest_offset, d.latest_offset, d.message_count]).toEqual([0, total, total]);
  });

  it('never lets readers that follow next_offset skip a message while publishes are in flight', async () => {
    const { name, topic } = await logs.stream({ partition_count: 8 });
    let publishing = true;
    const writers = publishConcurrently(topic, 8, 8, 4).finally(() => {
      publishing = false;
    });
    /** Follows next_offset in small reads (all partitions, or one) until the writers are done and it is caught up. */
    const follow = async (partition?: number) => {
      const seen: StreamMessage[] = [];
      let next = 0;
      for (;;) {
        const wasPublishing = publishing;
        const c = await logs.read(name, { start_offset: next, max_messages: 7, timeout_seconds: wasPublishing ? 1 : 0, ...(partition === undefined ? {} : { partition }) });
        seen.push(...c.messages);
        next = c.next_offset;
        if (!wasPublishing && c.count === 0) return seen;
      }
    };
    const [all, p3] = await Promise.all([follow(), follow(3)]);
    const total = await writers;
    expect(all).toHaveLength(total);
    expect(new Set(all.map((m) => m.offset)).size).toBe(total);
    expect(all.map((m) => m.offset)).toEqual([...all.map((m) => m.offset)].sort((x, y) => x - y));
    expect(p3).toEqual(all.filter((m) => m.partition === 3));
  });
});
