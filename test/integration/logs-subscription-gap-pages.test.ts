/**
 * Gap pages (docs/design/0001-log-storage.md), on a subscription (its own trim spec: the message
 * TTL). Promise: with a wide page from a gap settled late and more pages than a visit takes, every
 * sweeper visit leaves `message_count` equal to what a new subscriber reads, and the reads return
 * exactly the 201'd messages.
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { headOf, logApi, published, subscriptionBinding } from '../fixtures/logs';
import { finishBlock, reserveBlock } from '../../lambda/logs/storage/log-reservations';
import type { LogRef } from '../../lambda/logs/storage/log-heads';
import { appendToSubscriptions } from '../../lambda/subscriptions/storage/subscription-log';
import { sweepSubscription } from '../../lambda/subscriptions/sweep';
import { HEAD_MAX_GAPS } from '../../lambda/logs/rules/retention';
import { lostBlock, onSlowClock } from '../fixtures/gap-pages';

jest.setTimeout(300_000);

let server: TestServer;
let ns: TestNamespace;
let logs: ReturnType<typeof logApi>;

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('r16s');
  logs = logApi(client(server.baseUrl, ns.key));
});
afterAll(() => server.close());

it('a subscription with a late wide page and more pages than a visit takes: counts and reads agree after every visit', async () => {
  const { name, topic } = await logs.subscription({ message_ttl_seconds: 60 });
  const { s, binding } = await subscriptionBinding(ns.name, name);
  const ref: LogRef = { namespace: ns.name, id: s.id };
  const past = Date.now() - 10 * 60_000;
  await appendToSubscriptions({ namespace: ns.name, now: past }, [binding], [published('expired', past)]);
  // Held in flight on a slow clock, so the machine's load cannot age it dead (test/fixtures/gap-pages.ts).
  await onSlowClock(async () => {
    const early = (await reserveBlock(ref, { count: 2, bytes: 6 }))!;
    for (let i = 0; i < 9 * HEAD_MAX_GAPS + 4; i++) await lostBlock(ref, 2, false);
    await logs.publish(topic, { payload: 'mid' });
    expect(await finishBlock(ref, early, { n: 2, b: 6 })).toEqual({ n: 2, b: 6 });
  });
  for (let i = 0; i < HEAD_MAX_GAPS + 2; i++) await lostBlock(ref, 2, false);
  await logs.publish(topic, { payload: 'fresh' });
  for (let visit = 0; visit < 6; visit++) {
    await sweepSubscription(s, { now: Date.now() });
    const h = (await headOf(ns.name, s.id))!;
    const d = await logs.getSubscription(name);
    const got = (await logs.consume(name, { subscriber_id: `v${visit}`, max_messages: 100 })).messages.map((m) => m.payload);
    expect({ visit, got, count: d.message_count }).toEqual({ visit, got: ['mid', 'fresh'], count: h.earliest === 0 ? 3 : 2 });
  }
  expect((await headOf(ns.name, s.id))!.earliest).toBe(3 + 2 * (9 * HEAD_MAX_GAPS + 4));
});
