/**
 * A model-based test of queue semantics (docs/design/0013-model-based-tests.md). Random sequences of publishes (single,
 * batch, delayed, keyed), consumes (random max_messages, timeout_seconds and visibility), acks
 * (current, repeated, altered and foreign handles), batch acks, real waits past visibilities and
 * redrive, on standard and FIFO queues with small max_retries and TTLs, run against the real
 * local runtime (the harsh SQS switch on: test/integration/env.ts) and compared with a reference
 * model written from docs/publishing-and-queues.md, not from the code.
 *
 * Invariants (checked after every command, and after each run once the queue is drained):
 * - every consume answers within its budget (timeout_seconds, at least the 1 s shortest long poll,
 *   plus settling margin);
 * - a consume returns only messages answered 201 and not yet acknowledged, never one whose
 *   earlier delivery's visibility surely still holds (no two consumers within one visibility),
 *   never more than 1 + max_retries times, never after its TTL;
 * - FIFO: a message of a key is returned only once every earlier message of the key is acked,
 *   out of deliveries (dead-lettered) or earlier in the same answer;
 * - every ack answer is one the model allows (200 for a surely current handle of an unacked
 *   message, 404 for an acknowledged message or a foreign handle, 409 for an altered handle or a
 *   surely stale one of an unacked message);
 * - the counters equal the model during the run, not only at its end: at check points between
 *   commands (after every command) the queue's `message_count` lies
 *   between the messages the model knows are counted and those that may be. The docs make a
 *   message's count certain except (a) from its TTL to one expiry bucket (a tenth of the TTL,
 *   1-60 s) after it, the reconciliation period, and (b) once it is out of deliveries and
 *   visible, until a consume meets it and dead-letters it (the model does not see which receive
 *   met it). Outside those the check is exact: the model's expected count equals the API's;
 * - nothing answered 201 is lost: after the run each message is acked, dead-lettered exactly once,
 *   expired, or still consumable; and the counters equal the model (message_count 0 once all is
 *   drained and acked, for the queue and its dead-letter queue).
 */
import { client, startTestServer, type TestServer } from '../fixtures/http';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { unique } from '../fixtures/queues';
import { modelTimeout, runModel, sleep, until, type ModelRunOptions } from './harness';
import { commands, counterChecks, expectOk, expired, SLACK_MS, type Call, type Model, type Real } from './queues-model-commands';

const DEFAULTS: ModelRunOptions = { runs: 3, maxCommands: 12, seed: 19_2026, timeLimitMs: 150_000 };

jest.setTimeout(modelTimeout(DEFAULTS, 2500, 25_000));

let server: TestServer;
let ns: TestNamespace;
let call: Call;
let foreign: { id: string; handle: string }[] = [];

beforeAll(async () => {
  server = await startTestServer();
  ns = await createTestNamespace('qm');
  call = client(server.baseUrl, ns.key);
  // Handles of another queue's messages, for foreign acks.
  const other = unique('other');
  expectOk(await call('POST', '/queues', { name: other, topic_filter: `${other}/#` }), 201, 'create');
  expectOk(await call('POST', `/topics/${other}/t/messages/batch`, { messages: [{ payload: 'a' }, { payload: 'b' }] }), 201, 'publish');
  const got = await until(
    async () => {
      const res = await call('POST', `/queues/${other}/messages/consume`, { max_messages: 2, timeout_seconds: 1, visibility_timeout_seconds: 600 });
      return res.body.data?.count === 2 ? res.body.data.messages : undefined;
    },
    10_000,
    'the foreign messages',
  );
  foreign = got.map((g: { message_id: string; receipt_handle: string }) => ({ id: g.message_id, handle: g.receipt_handle }));
});
afterAll(() => server.close());

/** A fresh queue (standard or FIFO, small max_retries and TTL) with a dead-letter queue. */
const setup = (fifo: boolean, shortTtl: boolean) => async () => {
  const queue = unique(fifo ? 'mf' : 'ms');
  const dlq = `${queue}-dlq`;
  const maxRetries = fifo ? 0 : 1;
  // 4 s: messages expire and pass their reconciliation period (one 1 s bucket) within a run, so the
  // counter checks between commands meet expired messages, not only the final drain.
  const ttl = shortTtl ? 4 : 600;
  expectOk(await call('POST', '/queues', { name: dlq, topic_filter: `dead/${queue}/#` }), 201, 'create dlq');
  expectOk(
    await call('POST', '/queues', {
      name: queue,
      topic_filter: `${queue}/#`,
      max_retries: maxRetries,
      message_ttl_seconds: ttl,
      dead_letter_topic: `dead/${queue}`,
      ...(fifo ? { ordering: 'fifo' } : {}),
    }),
    201,
    'create queue',
  );
  const model: Model = { fifo, maxRetries, ttlMs: ttl * 1000, messages: new Map(), seq: 0, foreign, redriven: 0 };
  return { model, real: { call, ns: ns.name, queue, topic: `${queue}/t`, dlq } };
};

/** Drains `queue` (acking everything it returns); returns the payloads. */
async function drain(r: Real, queue: string): Promise<string[]> {
  const out: string[] = [];
  for (let empty = 0; empty < 2; ) {
    const res = await r.call('POST', `/queues/${queue}/messages/consume`, { max_messages: 100, timeout_seconds: 1, visibility_timeout_seconds: 60 });
    expectOk(res, 200, 'drain consume');
    const got: { message_id: string; payload: string; receipt_handle: string }[] = res.body.data.messages;
    if (got.length === 0) {
      empty++;
      continue;
    }
    empty = 0;
    out.push(...got.map((g) => g.payload));
    const ack = await r.call('POST', `/queues/${queue}/messages/ack`, { entries: got.map((g) => ({ message_id: g.message_id, receipt_handle: g.receipt_handle })) });
    expectOk(ack, 200, 'drain ack');
    if (ack.body.data.acknowledged_count !== got.length) throw new Error(`drain: acked ${ack.body.data.acknowledged_count} of ${got.length} fresh handles`);
  }
  return out;
}

/** After a run: every message accounted for exactly once, and the counters equal the model. */
async function finish(m: Model, r: Real) {
  // Every visibility and delay ends; then the queue's rest and its dead letters are drained.
  const lastVisible = Math.max(0, ...[...m.messages.values()].flatMap((x) => [x.notBefore, ...x.deliveries.map((d) => d.answeredAt + d.visibilityMs)]));
  await sleep(Math.max(0, lastVisible + SLACK_MS - Date.now()));
  // Draining the queue dead-letters what is out of deliveries; then the dead letters are drained.
  const rest = await drain(r, r.queue);
  const dead = await drain(r, r.dlq);
  const byPayload = new Map([...m.messages.values()].map((x) => [x.payload, x]));
  const count = (xs: string[]) => xs.reduce((acc, p) => acc.set(p, (acc.get(p) ?? 0) + 1), new Map<string, number>());
  const restN = count(rest);
  const deadN = count(dead);
  for (const [p, n] of deadN) {
    if (!byPayload.has(p)) throw new Error(`dead letter ${p} was never published`);
    // A redrive publishes a dead letter again (at least once, a new message): it may be dead-lettered again.
    if (n > 1 && m.redriven === 0) throw new Error(`${p} dead-lettered ${n} times`);
  }
  for (const x of m.messages.values()) {
    const places = (x.acked ? 1 : 0) + (restN.get(x.payload) ?? 0) + (deadN.get(x.payload) ?? 0);
    if (x.acked && (restN.has(x.payload) || (deadN.has(x.payload) && m.redriven === 0))) throw new Error(`${x.id} acknowledged (200) but came back`);
    if (places === 0 && !expired(m, x, Date.now()) && m.redriven === 0) throw new Error(`${x.id} (${x.payload}) lost: not acked, not dead-lettered, not expired, not consumable`);
    if (x.deliveries.length > 1 + m.maxRetries) throw new Error(`${x.id} delivered ${x.deliveries.length} times`);
  }
  // Counters: everything drained and acked, so both queues count nothing (exact: no sweeper).
  for (const q of [r.queue, r.dlq]) {
    const got = await r.call('GET', `/queues/${q}`);
    expectOk(got, 200, 'get queue');
    if (got.body.data.message_count !== 0) throw new Error(`${q}: message_count ${got.body.data.message_count} after draining, the model says 0`);
  }
}

describe('queues against the model of docs/publishing-and-queues.md', () => {
  // One run per queue kind by default (FC_RUNS runs each); each kind has its own seed (FC_SEED + 0, 1, 2).
  it.each([
    ['standard queue', false, false, 0],
    ['FIFO queue', true, false, 1],
    ['standard queue with a 4 s TTL', false, true, 2],
  ])('%s', async (label, fifo, shortTtl, i) => {
    const out = await runModel(`queue model (${label})`, { ...DEFAULTS, seedOffset: Number(i), runs: Math.max(1, Math.round(DEFAULTS.runs / 3)) }, commands, setup(fifo, shortTtl), finish);
    expect(out.runs).toBeGreaterThan(0);
    process.stderr.write(`queue model (${label}): ${counterChecks.made} counter checks so far, ${counterChecks.exact} of them exact\n`);
  });
});
