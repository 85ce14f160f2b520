/**
 * Reads sized to their answer (DESIGN.md section 7, consume): on DynamoDB Local with the real
 * publish sink and the real consume, the bytes a consume reads from the log (the chunks its
 * Queries return: a Query's read units are the bytes of what it returns) stay within about twice
 * the bytes it answers plus one small page per partition, whatever the history of message sizes:
 * a long history of tiny messages does not make a read of large ones read every partition's page
 * at once.
 *
 * Workload: the CPU is the publish calls. Large messages: 128 of 100 KB on 64 partitions, two
 * chunks a partition, the fewest that give every partition a next chunk to read ahead and an
 * answer of the full 5 MiB response. Small messages: 512 calls of one message on 32 partitions,
 * 16 chunks a partition, of which a read of the second half wants 8 (as 1,000 on 64 did): pages
 * capped at 3 chunks, or sized by one message, take 3 or more Queries a partition there, against
 * the bound of 2 (on 64 partitions, 4 chunks a partition fit two pages of 2).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { logApi, published, streamBinding } from '../fixtures/logs';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { ddb, tableName } from '../../lambda/core/storage/client';

jest.setTimeout(240_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('rsz');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/** Counts the stream log Queries and the chunk bytes they return (payload and 64 bytes a message). */
function meterLogReads() {
  const meter = { queries: 0, bytes: 0 };
  const name = `meter-${Math.random().toString(36).slice(2)}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      const input = args.input as { TableName?: string };
      if (context.commandName === 'QueryCommand' && input.TableName === tableName('streamLog')) {
        meter.queries++;
        for (const item of ((out.output as { Items?: { b: number; m: unknown[] }[] }).Items ?? [])) meter.bytes += item.b + 64 * item.m.length;
      }
      return out;
    },
    { step: 'initialize', name },
  );
  return { meter, stop: () => ddb().middlewareStack.remove(name) };
}

const PARTITIONS = 64;
/** The small-message case's: half as many partitions, so its 512 publishes fill 16 chunks each. */
const SMALL_PARTITIONS = 32;

async function streamOf(partitions: number) {
  const { name } = await logs.stream({ partition_count: partitions });
  return { name, ...(await streamBinding(ns.name, name)) };
}

describe('a consume reads about what it answers', () => {
  it('reads large messages after a long history of tiny ones without reading every partition page at once', async () => {
    const { name, binding } = await streamOf(PARTITIONS);
    const now = Date.now();
    // 20,000 tiny messages (calls of 500: one chunk each), then 128 of 100 KB (one call each,
    // spread over the partitions in round robin: two chunks a partition, so every partition has a
    // next chunk to read ahead): the lifetime average is about 0.7 KB.
    for (let i = 0; i < 40; i++) await appendToStreams({ namespace: ns.name, now }, [binding], Array.from({ length: 500 }, (_, j) => published(`t${j}`, now)));
    const big = 'x'.repeat(100_000);
    for (let i = 0; i < 128; i += 8) await Promise.all(Array.from({ length: 8 }, () => appendToStreams({ namespace: ns.name, now }, [binding], [published(big, now)])));

    const { meter, stop } = meterLogReads();
    try {
      const read = await logs.read(name, { start_offset: 20_000, max_messages: 1000 });
      const answered = read.messages.reduce((n, m) => n + Buffer.byteLength(m.payload) + 64, 0);
      expect(read.count).toBeGreaterThan(10);
      expect(read.messages[0].offset).toBe(20_000);
      // Twice the answer, plus one page of one chunk per partition.
      expect(meter.bytes).toBeLessThanOrEqual(2 * answered + PARTITIONS * (100_000 + 64));
      // And no partition read ahead of the answer: the merge answers the 64 first chunks' messages
      // (each partition's next offset is another's), up to the response's 5 MiB, before it reads
      // any partition's second chunk. Before, each message answered read its partition's next
      // chunk first: 8.4 MB read for 21 messages (2.1 MB).
      expect(read.count).toBeGreaterThanOrEqual(40);
      expect(meter.bytes).toBeLessThanOrEqual(2 * answered);
    } finally {
      stop();
    }
  });

  it('reads an ordinary consume of small messages in no more queries than two a partition', async () => {
    const partitions = SMALL_PARTITIONS;
    const { name, binding } = await streamOf(partitions);
    const now = Date.now();
    // 512 small messages published one call at a time: one chunk each, 16 a partition (a keyless
    // call goes to the next partition in round robin), and a read of the second half: 8 chunks a
    // partition, more than one a Query if a page were sized by one message, or by the first guess
    // of 4 messages a chunk, rather than by the partition's share.
    for (let i = 0; i < 512; i += 64) await Promise.all(Array.from({ length: 64 }, (_, j) => appendToStreams({ namespace: ns.name, now }, [binding], [published(`small-${i + j}`, now)])));
    await logs.read(name, { start_offset: 0, max_messages: 256 });
    const { meter, stop } = meterLogReads();
    try {
      const read = await logs.read(name, { start_offset: 256, max_messages: 256 });
      expect(read.count).toBe(256);
      // One page of the wanted positions, and one that finds the partition has no more of them.
      expect(meter.queries).toBeLessThanOrEqual(partitions * 2);
    } finally {
      stop();
    }
  });
});
