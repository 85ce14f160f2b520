/**
 * Model-based test of stream and subscription log semantics (docs/design/0001-log-storage.md), on
 * DynamoDB Local: random steps of concurrent publishes (single, batch, keyed, some failing after
 * reserving, some published in the past so they are past retention), group consumes that follow
 * `next_offset`, subscriber consumes and sweeper visits, then a drain, checked against a reference
 * model:
 *
 * - no message answered 201 and inside retention is skipped by the group reader or the
 *   subscriber, and none past retention is ever returned;
 * - the group reader never reads an offset twice, the subscriber never a message id twice;
 * - per-key order: a key's messages are read in the order of the steps that published them;
 * - after the sweeper, `message_count` equals the messages a new reader finds from `earliest`;
 * - every consume answers within its budget.
 *
 * FC_SEED replays a run, FC_RUNS runs more (default 3, to stay well under a minute under load).
 */
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { createTestNamespace, type TestNamespace } from '../fixtures/namespace';
import { published, streamBinding, subscriptionBinding, unstorable } from '../fixtures/logs';
import { appendToStreams } from '../../lambda/streams/storage/stream-log';
import { appendToSubscriptions } from '../../lambda/subscriptions/storage/subscription-log';
import { consumeStream, createStream, describeStream } from '../../lambda/streams/operations';
import { consumeSubscription, createSubscription } from '../../lambda/subscriptions/operations';
import { sweepStream } from '../../lambda/streams/sweep';
import { sweepSubscription } from '../../lambda/subscriptions/sweep';

jest.setTimeout(600_000);

const DAY = 86_400_000;
const SEED = Number(process.env.FC_SEED ?? 2311);
const RUNS = Number(process.env.FC_RUNS ?? 3);
/** A consume must answer well within API Gateway's 29 s. */
const CONSUME_BUDGET_MS = 10_000;

type Op =
  | { kind: 'publish'; keys: (string | undefined)[]; past: boolean; fail: boolean }
  | { kind: 'consume'; max: number }
  | { kind: 'subscribe'; max: number }
  | { kind: 'sweep' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('publish' as const), keys: fc.array(fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }), { minLength: 1, maxLength: 4 }), past: fc.boolean(), fail: fc.constantFrom(false, false, false, true) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('consume' as const), max: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('subscribe' as const), max: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'sweep' as const }) },
);
/** Steps: each runs its operations concurrently, steps one after another. */
const stepsArb = fc.array(fc.array(opArb, { minLength: 1, maxLength: 3 }), { minLength: 3, maxLength: 8 });

let ns: TestNamespace;
beforeAll(async () => {
  ns = await createTestNamespace('model');
});

interface Sent {
  payload: string;
  key?: string;
  step: number;
  past: boolean;
  acked: boolean;
}

async function timed<T>(fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const out = await fn();
  expect(Date.now() - started).toBeLessThan(CONSUME_BUDGET_MS);
  return out;
}

async function runModel(steps: Op[][], partitions = 3): Promise<void> {
  const id = randomBytes(3).toString('hex');
  const now0 = Date.now();
  await createStream(ns.name, { name: `ms-${id}`, topic_filter: `m/${id}`, retention_days: 1, max_size_gb: 1, partition_count: partitions }, now0);
  await createSubscription(ns.name, { name: `mu-${id}`, topic_filter: `m/${id}`, max_size_mb: 512, message_ttl_seconds: 600 }, now0);
  const { s: stream, binding: sb } = await streamBinding(ns.name, `ms-${id}`);
  const { s: sub, binding: ub } = await subscriptionBinding(ns.name, `mu-${id}`);
  const sent: Sent[] = [];
  const streamRead: { offset: number; payload: string }[] = [];
  const subRead: { id: string; payload: string }[] = [];
  let position = 0;
  let n = 0;

  // The group reader follows next_offset: its consumes run one after another (subscriber consumes
  // with one id may run concurrently: at most once per id is the service's promise).
  let chain: Promise<unknown> = Promise.resolve();
  const groupConsume = (max: number): Promise<number> => {
    const next = chain.then(() => groupConsumeNow(max));
    chain = next.catch(() => undefined);
    return next;
  };
  const groupConsumeNow = async (max: number) => {
    const got = await timed(() => consumeStream(ns.name, stream.name, { consumer_group: 'model', start_offset: position, max_messages: max, timeout_seconds: 0 }));
    expect(got.next_offset).toBeGreaterThanOrEqual(position);
    streamRead.push(...got.messages.map((m) => ({ offset: m.offset, payload: m.payload })));
    position = got.next_offset;
    return got.messages.length;
  };
  const subConsume = async (max: number) => {
    const got = await timed(() => consumeSubscription(ns.name, sub.name, { subscriber_id: 'model', max_messages: max, timeout_seconds: 0 }));
    subRead.push(...got.map((m) => ({ id: m.message_id ?? '', payload: m.payload })));
    return got.length;
  };

  // Publish times follow positions (within 60 s) in a real log: messages "published in the past"
  // come only before the first live one, each step's before its other operations.
  let liveStarted = false;
  const run = async (step: number, op: Op) => {
        if (op.kind === 'publish') {
          const past = op.past && !liveStarted;
          if (!past) liveStarted = true;
          const at = past ? Date.now() - DAY - 10 * 60_000 : Date.now();
          const batch = op.keys.map((key) => {
            const payload = `p${n++}`;
            sent.push({ payload, key, step, past, acked: false });
            return published(payload, at, key !== undefined ? { partition_key: key } : {});
          });
          const mine = sent.slice(-batch.length);
          const messages = op.fail ? [...batch, { ...unstorable(at), partition_key: batch[0].partition_key }] : batch;
          const results = await Promise.allSettled([appendToStreams({ namespace: ns.name, now: at }, [sb], messages), appendToSubscriptions({ namespace: ns.name, now: at }, [ub], messages)]);
          if (results.every((r) => r.status === 'fulfilled')) for (const m of mine) m.acked = true;
        } else if (op.kind === 'consume') await groupConsume(op.max);
        else if (op.kind === 'subscribe') await subConsume(op.max);
        else {
          await sweepStream(stream, { now: Date.now() });
          await sweepSubscription(sub, { now: Date.now() });
        }
  };
  for (const [step, ops] of steps.entries()) {
    const first = ops.filter((op) => op.kind === 'publish' && op.past && !liveStarted);
    await Promise.all(first.map((op) => run(step, op)));
    await Promise.all(ops.filter((op) => !first.includes(op)).map((op) => run(step, op)));
  }
  // Drain both readers.
  while ((await groupConsume(50)) > 0);
  while ((await subConsume(50)) > 0);

  const byPayload = new Map(sent.map((m) => [m.payload, m]));
  // Never past retention; never twice.
  for (const r of [...streamRead, ...subRead]) expect(byPayload.get(r.payload)?.past).toBe(false);
  expect(new Set(streamRead.map((r) => r.offset)).size).toBe(streamRead.length);
  expect(streamRead.map((r) => r.offset)).toEqual([...streamRead.map((r) => r.offset)].sort((a, b) => a - b));
  expect(new Set(subRead.map((r) => r.id)).size).toBe(subRead.length);
  // No acknowledged live message skipped.
  const live = sent.filter((m) => m.acked && !m.past).map((m) => m.payload).sort();
  const inStream = new Set(streamRead.map((r) => r.payload));
  const inSub = new Set(subRead.map((r) => r.payload));
  expect(live.filter((p) => !inStream.has(p))).toEqual([]);
  expect(live.filter((p) => !inSub.has(p))).toEqual([]);
  // Per-key order: the steps of a key's messages never go back.
  for (const key of ['a', 'b', 'c']) {
    const steps = streamRead.map((r) => byPayload.get(r.payload)!).filter((m) => m.key === key).map((m) => m.step);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
  }
  // After the sweeper, the counters equal what a new reader finds from earliest.
  for (let i = 0; i < 3; i++) await sweepStream(stream, { now: Date.now() });
  const d = await describeStream(ns.name, stream.name);
  const fresh: number[] = [];
  for (let from: number | 'earliest' = 'earliest'; ; ) {
    const got = await timed(() => consumeStream(ns.name, stream.name, { consumer_group: 'count', start_offset: from, max_messages: 100, timeout_seconds: 0 }));
    fresh.push(...got.messages.map((m) => m.offset));
    if (got.messages.length === 0) break;
    from = got.next_offset;
  }
  expect(d.message_count).toBe(fresh.length);
  if (fresh.length) expect(d.earliest_offset).toBeLessThanOrEqual(fresh[0]);
}

describe('log semantics against a model', () => {
  it('never skips or repeats an acknowledged message, keeps key order and exact counters', async () => {
    await fc.assert(
      fc.asyncProperty(stepsArb, async (steps) => runModel(steps)),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });

  it('holds the same with 64 partitions (their marks on an item of their own, lambda/logs/storage/partition-marks.ts)', async () => {
    await fc.assert(
      fc.asyncProperty(stepsArb, async (steps) => runModel(steps, 64)),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});
