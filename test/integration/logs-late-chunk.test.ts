/**
 * A chunk that lands after its block was settled as dead is not read: the counts and the reads agree.
 *
 * A publish sends its chunk put within its write window, but the put may land much later (the
 * client sets no request timeout; a 60 s function that publishes may still be waiting on it). Once
 * the block's reservation is a settle time old, the next watermark move settles it: what its chunks
 * held then (nothing) was counted and the rest recorded as a gap. Before the fix the chunk landing
 * afterwards was readable: a stream of 31 counted messages answered 32 to a consume (and the
 * publish, refused its record, answered 503, so the client's retry stored it a second time).
 * Now a settled block's gap covers the whole block, and readers treat every position inside such a
 * gap as absent, whatever lands there later.
 */
import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { appendToSubscriptions } from '../../lambda/subscriptions/storage/subscription-log';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding, subscriptionBinding, unstorable } from '../fixtures/logs';
import { consumeStream } from '../../lambda/streams/operations';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';
import { ddb } from '../../lambda/core/storage/client';
import { WATERMARK_EVERY } from '../../lambda/logs/storage/log-records';
import { PENDING_SETTLE_MS } from '../../lambda/logs/rules/log-horizon';
import type { Binding } from '../../lambda/core/storage/resources';

jest.setTimeout(180_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('latechunk');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/**
 * Publishes m0, then 'late' whose chunk put is held until its block was settled (by publish m31
 * moving the watermark a settle time later on the clock), then lets the put land. Returns the
 * late publish's outcome.
 */
async function lateChunk(id: string, append: (payload: string) => Promise<void>, around: (settle: () => Promise<void>) => Promise<void> = (settle) => settle()): Promise<string> {
  await append('m0'); // reservation 0
  const c = ddb();
  const send = c.send.bind(c);
  let armed = true;
  let held = false;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    await beforeSend?.(cmd);
    // The late publish's chunk put: sent now, landing once the gate opens.
    if (armed && cmd instanceof BatchWriteCommand) {
      armed = false;
      held = true;
      await gate;
    }
    return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
  }) as never);
  const late = append('late').then(
    () => 'ok',
    (e: { status?: number; code?: string; message?: string }) => `${e.status ?? ''} ${e.code ?? e.message}`,
  );
  try {
    while (!held) await new Promise((r) => setTimeout(r, 10));
    for (let i = 2; i < WATERMARK_EVERY - 1; i++) await append(`m${i}`);
    const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + PENDING_SETTLE_MS + 1_000);
    let outcome = '';
    try {
      await around(async () => {
        await append(`m${WATERMARK_EVERY - 1}`); // reservation 31 moves the watermark: it settles block 1
        const settled = (await headOf(ns.name, id))!;
        expect(Object.values(settled.gaps)).toEqual([{ s: 1, n: 1, b: 4 }]);
        release();
        outcome = await late;
      });
      return outcome;
    } finally {
      clock.mockRestore();
    }
  } finally {
    release();
    beforeSend = undefined;
    jest.restoreAllMocks();
  }
}

/** Called before each DynamoDB call while `lateChunk` runs (one spy on the client's `send`). */
let beforeSend: ((cmd: unknown) => Promise<void>) | undefined;

const expected = ['m0', ...Array.from({ length: WATERMARK_EVERY - 2 }, (_, i) => `m${i + 2}`)];

it('a stream: the chunk of a settled block landing late is not read, and the count agrees with the reads', async () => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const append = (payload: string) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding as Binding], [published(payload, Date.now())]);
  expect(await lateChunk(s.id, append)).toMatch(/^503/);
  const read = await logs.read(name);
  expect({ payloads: read.messages.map((m) => m.payload), message_count: (await logs.getStream(name)).message_count }).toEqual({ payloads: expected, message_count: expected.length });
  // A partition-filtered read too.
  expect((await logs.read(name, { partition: 0, consumer_group: 'p0' })).messages.map((m) => m.payload)).toEqual(expected);
});

it('a subscription: the chunk of a settled block landing late is not consumed, and the count agrees', async () => {
  const { name } = await logs.subscription();
  const { s, binding } = await subscriptionBinding(ns.name, name);
  const append = (payload: string) => appendToSubscriptions({ namespace: ns.name, now: Date.now() }, [binding], [published(payload, Date.now())]);
  expect(await lateChunk(s.id, append)).toMatch(/^503/);
  const got = await logs.consume(name, { subscriber_id: 'a', max_messages: 100 });
  expect({ payloads: got.messages.map((m) => m.payload), message_count: (await logs.getSubscription(name)).message_count }).toEqual({ payloads: expected, message_count: expected.length });
});

it("a reader that read the head before the settle learns the gap from the records it reads after it", async () => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const append = (payload: string) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding as Binding], [published(payload, Date.now())]);
  let read: Awaited<ReturnType<typeof consumeStream>> | undefined;
  const outcome = await lateChunk(s.id, append, async (settle) => {
    // A consume reads the head, then (held here) the records: the settle and the late chunk
    // land in between, so the head it read shows no gap and the records show block 1 recorded.
    let reading = true;
    let settled: Promise<void> | undefined;
    beforeSend = async (cmd) => {
      if (reading && cmd instanceof QueryCommand && String(cmd.input.ExpressionAttributeValues?.[':pk']).includes('#RESV#')) {
        reading = false;
        settled = settle();
        await settled;
      }
    };
    read = await consumeStream(ns.name, name, { consumer_group: 'race', start_offset: 'earliest', timeout_seconds: 0, max_messages: 100 } as never);
    beforeSend = undefined;
    await settled;
  });
  expect(outcome).toMatch(/^503/);
  // Up to what the head it read had reserved (m31 came after), without the late chunk.
  expect(read!.messages.map((m) => m.payload)).toEqual(expected.slice(0, -1));
});

it('a late chunk inside a gap spilled to a gap page is not read either', async () => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const append = (payload: string) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding as Binding], [published(payload, Date.now())]);
  expect(await lateChunk(s.id, append)).toMatch(/^503/);
  // As many failed publishes as the head holds gaps: the last one spills the head's to a page,
  // the late block's first.
  for (let i = 0; i < HEAD_MAX_GAPS; i++) await expect(appendToStreams({ namespace: ns.name, now: Date.now() }, [binding as Binding], [unstorable(Date.now())])).rejects.toThrow();
  const head = (await headOf(ns.name, s.id))!;
  expect({ onHead: Object.keys(head.gaps).length, late: head.gaps['1'], spilled: head.sg_n }).toEqual({ onHead: 1, late: undefined, spilled: HEAD_MAX_GAPS });
  const read = await logs.read(name);
  expect({ payloads: read.messages.map((m) => m.payload), message_count: (await logs.getStream(name)).message_count }).toEqual({ payloads: expected, message_count: expected.length });
});
