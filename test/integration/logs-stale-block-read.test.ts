/**
 * Attack on "a failed publish leaves nothing readable" and "every reader reads the same": a block
 * whose publish died after its chunk landed (its record never written) is passed by the stable
 * horizon once its reservation is a settle time old (lambda/logs/rules/log-horizon.ts `stableHorizon`), but it
 * is recorded as a whole gap only later, when a watermark move settles it. A reader in between
 * reads the dead block's message; a reader after the settle does not (lambda/logs/rules/log-gaps.ts).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { appendToSubscriptions } from '../../lambda/subscriptions/storage/subscription-log';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, streamBinding, subscriptionBinding } from '../fixtures/logs';
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
  ns = await createTestNamespace('staleblock');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

/**
 * Publishes m0, then 'dead' whose record put is held (its chunk landed), then m2..m30; a settle time
 * later reads with `read('early')`, lets m31 move the watermark (settling the dead block as a whole
 * gap), releases the record put and reads with `read('later')`.
 */
async function deadBlock(id: string, append: (payload: string) => Promise<void>, read: (reader: string) => Promise<string[]>) {
  await append('m0'); // reservation 0
  const c = ddb();
  const send = c.send.bind(c);
  let armed = true;
  let held = false;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    // The dead publish's record put (its chunk already landed): held, as a publish that died there.
    if (armed && cmd instanceof PutCommand && String(cmd.input.Item?.pk).includes('#RESV#')) {
      armed = false;
      held = true;
      await gate;
    }
    return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
  }) as never);
  const dead = append('dead').then(
    () => 'ok',
    (e: { status?: number; code?: string; message?: string }) => `${e.status ?? ''} ${e.code ?? e.message}`,
  );
  let early: string[] = [];
  let later: string[] = [];
  let outcome = '';
  let gaps: unknown;
  try {
    while (!held) await new Promise((r) => setTimeout(r, 10));
    for (let i = 2; i < WATERMARK_EVERY - 1; i++) await append(`m${i}`);
    const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + PENDING_SETTLE_MS + 1_000);
    try {
      // The dead block's reservation is a settle time old: the horizon passes it, not yet settled.
      early = await read('early');
      await append(`m${WATERMARK_EVERY - 1}`); // moves the watermark: settles block 1 as a whole gap
      gaps = Object.values((await headOf(ns.name, id))!.gaps);
      release();
      outcome = await dead;
      later = await read('later');
    } finally {
      clock.mockRestore();
    }
  } finally {
    release();
    jest.restoreAllMocks();
  }
  expect({ outcome, gaps }).toEqual({ outcome: expect.stringMatching(/^503/), gaps: [{ s: 1, n: 1, b: 4 }] });
  // The promise: a publish answered 503 has nothing readable, and every reader reads the same.
  expect({ early, later }).toEqual({ early: later.slice(0, -1), later: [...early.filter((p) => p !== 'dead'), `m${WATERMARK_EVERY - 1}`] });
}

it('a stream: a dead block read before its settle is not read after it (readers disagree, a 5xx publish was read)', async () => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { s, binding } = await streamBinding(ns.name, name);
  const append = (payload: string) => appendToStreams({ namespace: ns.name, now: Date.now() }, [binding as Binding], [published(payload, Date.now())]);
  await deadBlock(s.id, append, async (group) => (await logs.read(name, { consumer_group: group })).messages.map((m) => m.payload));
});

it('a subscription: the same, for two subscribers', async () => {
  const { name } = await logs.subscription();
  const { s, binding } = await subscriptionBinding(ns.name, name);
  const append = (payload: string) => appendToSubscriptions({ namespace: ns.name, now: Date.now() }, [binding], [published(payload, Date.now())]);
  await deadBlock(s.id, append, async (subscriber) => (await logs.consume(name, { subscriber_id: subscriber, max_messages: 100 })).messages.map((m) => m.payload));
});
