/**
 * Schedules and long delays benchmarks (docs/schedules.md) against the local engines (DynamoDB
 * Local, fauxqs) and the real handlers behind the local gateway. The scheduler tick is the real one
 * (lambda/schedules/tick.ts), called with a clock set ahead instead of waiting hours: only the
 * tick's clock moves, the engines are never mocked.
 *
 * - **Delivery time error** of held messages (delay beyond 900 s): rounds of 100 messages due at
 *   spread times (milliseconds included); one tick runs with its clock `offset` ms ahead of the
 *   wall clock, a few seconds before their due times, so SQS holds each for the rest of its delay
 *   as DelaySeconds. A message's due time in wall-clock terms is `due - offset`; its delivered
 *   time is when a consumer long-polling the API first receives it. The error includes the
 *   tick's own time before its send, the rounding to whole seconds, and the consume path.
 * - **Units per held message**: a batch publish of held messages against the same publish
 *   without a delay (the difference is the hold), and the handover (one tick handing them all
 *   over, its 32 index queries included), counted from ReturnConsumedCapacity as the other
 *   sections do (bench/key-meter.ts: the billing floor of reads).
 * - **Handovers per second** of that one tick.
 * - **Busiest partition key**: of the tables (bench/key-meter.ts) and of the due index (its
 *   write units split over its 32 shard keys by the shard each written item is in).
 * - **Units per schedule run**: schedules `every` 60 s made due at once, one tick making all the
 *   runs, against an ordinary single publish to the same topic (the run's publish is one).
 *
 * Runs alone with `npx tsx bench/schedules.ts [scale]`, or from `npm run bench -- --only schedules`.
 */
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { expectStatus, runConcurrent, startBenchEnv, type BenchEnv } from './harness';
import { type KeySnapshot, meterTables } from './key-meter';
import { PRICES } from './prices';

const HOUR = 3600_000;
/** How long before the first due time of a timing round its tick runs. */
const LEAD_MS = 30_000;
/** Memory of the scheduler function (lib/constructs/functions.ts default; lib/constructs/scheduler.ts sets none). */
const TICK_MEMORY_GB = 0.25;

const r3 = (n: number) => Math.round(n * 1000) / 1000;
const r2 = (n: number) => Math.round(n * 100) / 100;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

interface ErrorStats {
  n: number;
  /** The longest a timing round's tick took (it must stay under LEAD_MS for the figure to mean the handover's precision). */
  slowestTickMs: number;
  /** Absolute error, ms. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Signed: the earliest (negative: before its time) and the latest delivery against the due time, ms. */
  earliestMs: number;
  latestMs: number;
}

interface Units {
  readUnits: number;
  writeUnits: number;
  calls: number;
}

interface SchedulesBenchResult {
  error: ErrorStats;
  held: number;
  /** A batch publish (100 a request) of held messages, per message. */
  holdPublish: Units;
  /** The same publish without a delay, per message. */
  plainPublish: Units;
  /** One tick handing every held message over, per message. */
  handover: Units;
  handoversPerSecond: number;
  tickMsPerHandover: number;
  /** A tick with nothing due (the 64 index queries). */
  idleTick: Units;
  busiestTableKey: { key: string; writeUnits: number };
  busiestIndexShard: { key: string; writeUnits: number; meanWriteUnits: number; shards: number };
  runs: number;
  run: Units;
  runsPerSecond: number;
  tickMsPerRun: number;
  /** An ordinary single publish to the same topic through the API, per message. */
  singlePublish: Units;
  heldUsdPerMillion: number;
  runUsdPerMillion: number;
  /** The machine's 1-minute load average when the bench started (the engines share its cores). */
  loadAverage: number;
}

const perItem = (s: KeySnapshot, n: number): Units => ({
  readUnits: r3(s.readUnits / n),
  writeUnits: r3(s.writeUnits / n),
  calls: r2(Object.values(s.calls).reduce((a, b) => a + b, 0) / n),
});

/** A string attribute as the document client (plain) or the low-level client (AttributeValue) gives it. */
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : ((v as { S?: string } | undefined)?.S ?? undefined));
const SHARD = /^[MS]#\d+$/;

/**
 * Write units of the scheduler table's `due` index per shard key. A put carries its item's
 * `due_shard`; an update or delete that leaves the index (or moves in it) writes to the shard the
 * item was put in (remembered by key) unless its values name one.
 */
class DueIndexMeter {
  private units = new Map<string, number>();
  private shardOf = new Map<string, string>();
  constructor(private readonly table: string) {}

  reset() {
    this.units.clear();
  }

  busiest(): { key: string; writeUnits: number; meanWriteUnits: number; shards: number } {
    let best = { key: '-', writeUnits: 0 };
    let sum = 0;
    for (const [key, u] of this.units) {
      sum += u;
      if (u > best.writeUnits) best = { key, writeUnits: u };
    }
    return { key: best.key, writeUnits: r3(best.writeUnits), meanWriteUnits: r3(sum / Math.max(1, this.units.size)), shards: this.units.size };
  }

  attach(client: DynamoDBClient) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, any>;
        const out = await next(args);
        const consumed = (out.output as { ConsumedCapacity?: any }).ConsumedCapacity;
        this.record(String(context.commandName).replace(/Command$/, ''), input, Array.isArray(consumed) ? consumed : consumed ? [consumed] : []);
        return out;
      },
      { step: 'initialize', name: 'benchDueIndexMeter', priority: 'low' },
    );
  }

  private keyOf(item: Record<string, unknown> | undefined) {
    return `${str(item?.pk)}|${str(item?.sk)}`;
  }

  /** The shard an item write touches in the index (undefined: not an index item). */
  private shard(op: { Item?: Record<string, unknown>; Key?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> }): string | undefined {
    if (op.Item) {
      const s = str(op.Item.due_shard);
      if (s) this.shardOf.set(this.keyOf(op.Item), s);
      return s;
    }
    const named = Object.values(op.ExpressionAttributeValues ?? {}).map(str).find((v) => v && SHARD.test(v));
    return named ?? this.shardOf.get(this.keyOf(op.Key));
  }

  private add(shards: (string | undefined)[], units: number) {
    const hit = shards.filter((s): s is string => !!s);
    for (const s of hit) this.units.set(s, (this.units.get(s) ?? 0) + units / hit.length);
  }

  private record(command: string, input: Record<string, any>, consumed: { TableName?: string; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> }[]) {
    const units = consumed.filter((c) => c.TableName === this.table).reduce((n, c) => n + (c.GlobalSecondaryIndexes?.due?.CapacityUnits ?? 0), 0);
    let ops: Record<string, any>[] = [];
    if (command === 'PutItem' || command === 'UpdateItem' || command === 'DeleteItem') ops = input.TableName === this.table ? [input] : [];
    else if (command === 'BatchWriteItem') ops = ((input.RequestItems?.[this.table] ?? []) as { PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }[]).map((r) => (r.PutRequest ? { Item: r.PutRequest.Item } : { Key: r.DeleteRequest?.Key }));
    else if (command === 'TransactWriteItems') ops = (input.TransactItems as any[]).map((t) => t.Put ?? t.Update ?? t.Delete).filter((o) => o?.TableName === this.table);
    const shards = ops.map((o) => this.shard(o));
    if (units > 0) this.add(shards, units);
  }
}

/** Long-polls `queue` with `consumers` loops, recording when each message id is first received, until `want` came or `stopAt`. */
async function collect(env: BenchEnv, queue: string, want: number, stopAt: () => number, consumers = 4): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  await Promise.all(
    Array.from({ length: consumers }, async () => {
      while (seen.size < want && Date.now() < stopAt()) {
        const c = await env.call<{ messages: { message_id: string; receipt_handle: string }[] }>('POST', `/queues/${queue}/messages/consume`, { timeout_seconds: 1, max_messages: 10 });
        expectStatus(c, 200, 'consume');
        const at = Date.now();
        const got = c.body.data.messages;
        if (!got.length) continue;
        for (const m of got) if (!seen.has(m.message_id)) seen.set(m.message_id, at);
        expectStatus(await env.call('POST', `/queues/${queue}/messages/ack`, { entries: got.map((m) => ({ message_id: m.message_id, receipt_handle: m.receipt_handle })) }), 200, 'ack');
      }
    }),
  );
  return seen;
}

async function benchSchedules({ scale = 1, log = () => undefined }: { scale?: number; log?: (l: string) => void } = {}): Promise<SchedulesBenchResult> {
  const loadAverage = r2(loadavg()[0]);
  const env = await startBenchEnv(log);
  try {
    const { dynamoClient } = await import('../lambda/core/storage/client');
    const { tick } = await import('../lambda/schedules/tick');
    const { meter, physical } = await meterTables();
    const index = new DueIndexMeter(physical.scheduler);
    index.attach(dynamoClient());

    const queueOn = async (name: string, topic: string) => expectStatus(await env.call('POST', '/queues', { name, topic_filter: topic }), 201, `create queue ${name}`);
    const publishBatch = async (topic: string, messages: Record<string, unknown>[]) => {
      const res = await env.call<{ message_ids: string[] }>('POST', `/topics/${topic}/messages/batch`, { messages });
      expectStatus(res, 201, 'batch publish');
      return res.body.data.message_ids;
    };

    // 1. Delivery time error: rounds of 100 held messages due over 10 s, one tick 30 s before the
    // first (in AWS the tick runs 13 to 14 minutes ahead; 30 s leaves the tick time to send on a
    // loaded machine, so what is measured is the handover's precision, not the tick's duration).
    await queueOn('held-timing', 'bench/held-timing');
    const rounds = Math.max(2, Math.round(4 * scale));
    let slowestTickMs = 0;
    const errors: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const base = Date.now() + HOUR;
      const dues = Array.from({ length: 100 }, (_, i) => base + i * 100 + Math.floor(Math.random() * 100));
      const ids = await publishBatch('bench/held-timing', dues.map((d, i) => ({ payload: `{"i":${i}}`, deliver_at: new Date(d).toISOString() })));
      const dueOf = new Map(ids.map((id, i) => [id, dues[i]]));
      const fake = base - LEAD_MS;
      const offset = fake - Date.now();
      const t = performance.now();
      const stats = await tick(fake);
      const took = Math.round(performance.now() - t);
      slowestTickMs = Math.max(slowestTickMs, took);
      log(`schedules: timing round ${r + 1}: the tick took ${took} ms`);
      if (stats.delayed.handed < ids.length) throw new Error(`timing round ${r}: the tick handed over ${stats.delayed.handed} of ${ids.length}`);
      const lastDue = Math.max(...dues) - offset;
      const seen = await collect(env, 'held-timing', ids.length, () => lastDue + 15_000);
      if (seen.size < ids.length) throw new Error(`timing round ${r}: ${seen.size} of ${ids.length} received within 15 s of the last due time`);
      for (const [id, at] of seen) errors.push(at - ((dueOf.get(id) as number) - offset));
      log(`schedules: timing round ${r + 1}/${rounds} done`);
    }
    const abs = errors.map(Math.abs).sort((a, b) => a - b);
    const error: ErrorStats = { slowestTickMs, n: errors.length, p50Ms: percentile(abs, 50), p99Ms: percentile(abs, 99), maxMs: abs[abs.length - 1], earliestMs: Math.min(...errors), latestMs: Math.max(...errors) };

    // 2. Units per held message and handovers per second.
    const batches = Math.max(5, Math.round(20 * scale));
    const held = batches * 100;
    await queueOn('held-units', 'bench/held-units');
    await queueOn('plain-units', 'bench/plain-units');
    const payload = 'x'.repeat(200);
    meter.reset();
    await runConcurrent(batches, 4, async () => void (await publishBatch('bench/plain-units', Array.from({ length: 100 }, () => ({ payload })))));
    const plainPublish = perItem(meter.snapshot(), held);
    const dueBase = Date.now() + 2 * HOUR;
    meter.reset();
    index.reset();
    log(`schedules: holding ${held} messages`);
    await runConcurrent(batches, 4, async (b) => void (await publishBatch('bench/held-units', Array.from({ length: 100 }, (_, i) => ({ payload, deliver_at: new Date(dueBase + ((b * 100 + i) * 600_000) / held).toISOString() })))));
    const holdSnap = meter.snapshot();
    const holdPublish = perItem(holdSnap, held);
    meter.reset();
    // Due over 10 minutes from dueBase; the tick runs 3 minutes before: every one is in its window.
    const started = performance.now();
    const handed = await tick(dueBase - 3 * 60_000);
    const tickMs = performance.now() - started;
    if (handed.delayed.handed !== held) throw new Error(`the tick handed over ${handed.delayed.handed} of ${held}`);
    const handoverSnap = meter.snapshot();
    const handover = perItem(handoverSnap, held);
    const busyHold = Object.entries(holdSnap.writesByKey);
    const busyHand = new Map(Object.entries(handoverSnap.writesByKey));
    const tableKeys = new Map<string, number>();
    for (const [k, u] of [...busyHold, ...busyHand]) if (k.includes('|')) tableKeys.set(k, (tableKeys.get(k) ?? 0) + u);
    let busiestTableKey = { key: '-', writeUnits: 0 };
    for (const [key, u] of tableKeys) if (u > busiestTableKey.writeUnits) busiestTableKey = { key, writeUnits: r3(u) };
    const busiestIndexShard = index.busiest();
    meter.reset();
    await tick(Date.now());
    const idleTick = perItem(meter.snapshot(), 1);

    // 3. Schedule runs: `every` 60 s schedules, each with one run due in a tick a minute ahead
    // (two minutes ahead each would have two times due, and the tick makes both).
    const schedules = Math.max(20, Math.round(200 * scale));
    await queueOn('runs', 'bench/runs');
    log(`schedules: creating ${schedules} schedules`);
    await runConcurrent(schedules, 4, async (i) => expectStatus(await env.call('POST', '/schedules', { name: `s${i}`, every: 60, topic: 'bench/runs', payload: '{"at":"{{.scheduled_time}}"}' }), 201, 'create schedule'));
    const singles = 50;
    meter.reset();
    for (let i = 0; i < singles; i++) expectStatus(await env.call('POST', '/topics/bench/runs/messages', { payload: '{"at":"x"}' }), 201, 'publish');
    const singlePublish = perItem(meter.snapshot(), singles);
    meter.reset();
    const runStart = performance.now();
    const runStats = await tick(Date.now() + 60_000);
    const runMs = performance.now() - runStart;
    if (runStats.schedules.runs !== schedules) throw new Error(`the tick made ${runStats.schedules.runs} runs of ${schedules} schedules`);
    const run = perItem(meter.snapshot(), schedules);

    const lambdaPer = (ms: number) => (ms / 1000) * TICK_MEMORY_GB * PRICES.lambdaArmGbSecond + PRICES.lambdaRequest / 60_000; // one tick a minute, shared
    const units = (u: Units) => u.readUnits * PRICES.dynamoReadRequestUnit + u.writeUnits * PRICES.dynamoWriteRequestUnit;
    const tickMsPerHandover = r3(tickMs / held);
    const tickMsPerRun = r3(runMs / schedules);
    // A held message's cost beyond an ordinary publish: the hold (its publish minus the plain
    // publish) and the handover with the tick's Lambda time; the SQS send of the handover is the
    // one an ordinary publish makes too.
    const heldExtra = { readUnits: holdPublish.readUnits - plainPublish.readUnits + handover.readUnits, writeUnits: holdPublish.writeUnits - plainPublish.writeUnits + handover.writeUnits, calls: 0 };
    const heldUsdPerMillion = r2((units(heldExtra) + lambdaPer(tickMsPerHandover)) * 1e6);
    // A run: everything the tick did for it (its publish included), its SQS send, the tick's time.
    const runUsdPerMillion = r2((units(run) + PRICES.sqsRequest + lambdaPer(tickMsPerRun)) * 1e6);
    return {
      error,
      held,
      holdPublish,
      plainPublish,
      handover,
      handoversPerSecond: Math.round((held / tickMs) * 1000),
      tickMsPerHandover,
      idleTick,
      busiestTableKey,
      busiestIndexShard,
      runs: schedules,
      run,
      runsPerSecond: Math.round((schedules / runMs) * 1000),
      tickMsPerRun,
      singlePublish,
      heldUsdPerMillion,
      runUsdPerMillion,
      loadAverage,
    };
  } finally {
    await env.stop();
  }
}

/** The partition key without the bench namespace's random part (stable figures). */
const shownKey = (k: string) => k.replace(/bench-[0-9a-f]{6}/g, '{ns}');

function schedulesTables(r: SchedulesBenchResult): string {
  const row = (what: string, u: Units) => `| ${what} | ${u.calls} | ${u.readUnits} | ${u.writeUnits} |`;
  return [
    `Delivery time error of ${r.error.n} held messages, in rounds of 100 due at spread milliseconds over 10 s, each round handed over by one tick ${LEAD_MS / 1000} s before (the slowest of those ticks took ${r.error.slowestTickMs} ms); delivered = first received by a consumer long-polling the API:`,
    '',
    '| p50 ms | p99 ms | max ms | earliest ms | latest ms |',
    '|---:|---:|---:|---:|---:|',
    `| ${r.error.p50Ms} | ${r.error.p99Ms} | ${r.error.maxMs} | ${r.error.earliestMs} | ${r.error.latestMs} |`,
    '',
    `DynamoDB per message (${r.held} held messages of 200 bytes, batches of 100; ${r.runs} schedule runs):`,
    '',
    '| what | DynamoDB calls | RRU | WRU |',
    '|---|---:|---:|---:|',
    row('publish without a delay (batch of 100), per message', r.plainPublish),
    row('publish held beyond 900 s (batch of 100), per message', r.holdPublish),
    row('handover by the tick, per message', r.handover),
    row('tick with nothing due (whole tick)', r.idleTick),
    row('ordinary single publish to the schedules\' topic', r.singlePublish),
    row('schedule run (claim, publish, record), per run', r.run),
    '',
    '| one tick | per second | tick ms each |',
    '|---|---:|---:|',
    `| handovers (${r.held} due) | ${r.handoversPerSecond} | ${r.tickMsPerHandover} |`,
    `| schedule runs (${r.runs} due) | ${r.runsPerSecond} | ${r.tickMsPerRun} |`,
    '',
    `Rates are DynamoDB Local's on this machine (1-minute load average ${r.loadAverage} at the start, the engines sharing its cores with other work), not DynamoDB's: a tick's work is its DynamoDB calls (${r.handover.calls} a handover, ${r.run.calls} a run, above).`,
    '',
    `Busiest partition key over the hold and handover of ${r.held} messages: table key \`${shownKey(r.busiestTableKey.key)}\` with ${r.busiestTableKey.writeUnits} WRU; due index shard \`${r.busiestIndexShard.key}\` with ${r.busiestIndexShard.writeUnits} WRU (mean ${r.busiestIndexShard.meanWriteUnits} over ${r.busiestIndexShard.shards} shards).`,
    '',
    '| USD per million (DynamoDB on-demand, the tick\'s Lambda time) | |',
    '|---|---:|',
    `| held message, beyond an ordinary publish | ${r.heldUsdPerMillion} |`,
    `| schedule run, its publish and SQS send included | ${r.runUsdPerMillion} |`,
  ].join('\n');
}

/** The section `npm run bench` prints. */
/** @public bench/run.ts imports it by name (`npm run bench -- --figures`). */
export async function benchMarkdown(o: { scale: number; log: (l: string) => void }): Promise<string> {
  return ['### Schedules and long delays', schedulesTables(await benchSchedules(o))].join('\n\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchSchedules({ scale: Number(process.argv[2] ?? 1), log: (l) => console.error(l) })
    .then((r) => console.log(schedulesTables(r)))
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
