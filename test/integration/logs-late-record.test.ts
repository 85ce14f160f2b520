/**
 * Checks "a publish that failed: none of that call's messages is ever read, even one it
 * stored, so its retry does not duplicate them" (docs/streams-and-subscriptions.md, docs/design/0028-gaps-are-absent.md).
 *
 * Scenario: a publish from a function that lives 60 s (the scheduler's tick or webhook delivery
 * publish too, lambda/logs/rules/log-horizon.ts RESERVER_LIFETIME_MS) writes its chunk in time, but its
 * record put is sent 31 s after its reservation (the function was slow: a GC pause, a cold
 * dependency). No one has settled the block (that takes 36 s), so the record lands, with no gap:
 * the block is complete. The publish then answers 503 (lambda/streams/storage/stream-log.ts `pastLifetime`).
 *
 * Observed: every reader reads the 503'd message, so the caller's retry (as the 503 asks) stores
 * it a second time. Expected: a 503'd publish's messages never read (or a 201).
 *
 * Fixed: a record written excludes any settle of its block (the settle's write is conditional on
 * the record key being empty), so the block is complete and the publish answers 201.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { logApi, published, streamBinding } from '../fixtures/logs';
import { ddb } from '../../lambda/core/storage/client';
import { PUBLISH_LIFETIME_MS } from '../../lambda/logs/rules/log-horizon';
import type { Binding } from '../../lambda/core/storage/resources';

jest.setTimeout(120_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('r13late');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

it('a stream: a publish whose record lands after its lifetime, with no settle before it, answers 201 and its message is read by every reader', async () => {
  const { name } = await logs.stream({ partition_count: 1 });
  const { binding } = await streamBinding(ns.name, name);
  const c = ddb();
  const send = c.send.bind(c);
  const realNow = Date.now.bind(Date);
  let skew = 0;
  const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + skew);
  jest.spyOn(c, 'send').mockImplementation((async (cmd: unknown, ...rest: unknown[]) => {
    // The record put goes out a publish lifetime and a second after the reservation.
    if (cmd instanceof PutCommand && String(cmd.input.Item?.pk).includes('#RESV#') && skew === 0) skew = PUBLISH_LIFETIME_MS + 1_000;
    return (send as (x: unknown, ...r: unknown[]) => Promise<unknown>)(cmd, ...rest);
  }) as never);
  let outcome: string;
  try {
    outcome = await appendToStreams({ namespace: ns.name, now: realNow() }, [binding as Binding], [published('late', realNow())]).then(
      () => '201',
      (e: { status?: number }) => String(e.status),
    );
  } finally {
    jest.restoreAllMocks();
    clock.mockRestore();
  }
  const a = (await logs.read(name, { consumer_group: 'a' })).messages.map((m) => m.payload);
  const b = (await logs.read(name, { consumer_group: 'b' })).messages.map((m) => m.payload);
  expect({ outcome, a, b }).toEqual({ outcome: '201', a: ['late'], b: ['late'] });
});
