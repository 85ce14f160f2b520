/**
 * Long delays at scale (the target of docs/performance.md): N held messages (100,000 at scale 1; 1
 * KB, one queue target) all due within the same minute, handed over by the real tick
 * (lambda/schedules/tick.ts) as the scheduler runs it: on a simulated clock one minute apart, each
 * tick with the deadline the handler gives it (lambda/handlers/scheduler.ts: the 60 s timeout less
 * its 15 s margin, real time), until every message is handed over. Only the clock is simulated;
 * DynamoDB Local and fauxqs do all the work.
 *
 * - The messages are held through the API's batch publish (100 a request), as a client would.
 * - Every SQS send of the handover is seen on the SQS client: the messages it stored (a message
 *   stored twice is a duplicate) and, per message, the simulated time it went out (the tick's
 *   simulated start plus the real time the tick had run), with its DelaySeconds. SQS makes it
 *   visible at send + DelaySeconds: its lateness against its due time (milliseconds of the due
 *   time included, so whole-second DelaySeconds is up to 0.5 s either way).
 * - Ticks do not overlap here: a tick that outlasts its minute pushes the next one to the next
 *   whole minute after it ended (AWS would start it on time, beside the slow one: harsher here).
 * - The tick hands over every shard in this one process, as the shard workers of the stack do
 *   between them (lambda/schedules/shard-tasks.ts): one Node process has one core either way, so
 *   the rate is one worker's; the AWS capacity is that rate times the workers (by arithmetic).
 *
 * Runs alone: `npx tsx bench/held-scale.ts [count]` (default 100,000), or
 * `npm run bench -- --only held-scale --scale 0.2` (count = 100,000 x scale).
 */
import { pathToFileURL } from 'node:url';
import { expectStatus, runConcurrent, startBenchEnv } from './harness';
import { meterTables } from './key-meter';
import { PRICES, LAMBDA_MEMORY_GB } from './prices';
import { SCHEDULER_MEMORY_MB } from '../lib/function-memory';

const MINUTE = 60_000;
/** The scheduler function's memory (lib/function-memory.ts) and its tick's deadline (lambda/handlers/scheduler.ts). */
const TICK_MEMORY_GB = SCHEDULER_MEMORY_MB / 1024;
const TICK_DEADLINE_MS = 60_000 - 15_000;
const PAYLOAD_BYTES = 1024;

const r2 = (n: number) => Math.round(n * 100) / 100;
const r3 = (n: number) => Math.round(n * 1000) / 1000;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

interface TickRow {
  /** Simulated start, ms after the first due time (negative: before it). */
  atMs: number;
  realMs: number;
  handed: number;
  failed: number;
}

interface HeldScaleResult {
  count: number;
  publishSeconds: number;
  ticks: TickRow[];
  handedOnce: number;
  duplicates: number;
  missing: number;
  /** Visible time (send + DelaySeconds) against due time, ms; negative is early. */
  latenessP50Ms: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
  /** How long before its due time a message was sent (ms, p50 and least). */
  leadP50Ms: number;
  leadMinMs: number;
  /** Handovers per second of real time, over the ticks that handed any. */
  handoversPerSecond: number;
  /** Tick CPU-and-wait time per handover, ms (the Lambda time billed for it). */
  tickMsPerHandover: number;
  /** This process's CPU time per handover during the ticks, ms (the tick, the SDK clients and the embedded fauxqs; DynamoDB Local runs apart). */
  cpuMsPerHandover: number;
  publish: { calls: number; readUnits: number; writeUnits: number; apiMsPerMessage: number };
  handover: { calls: number; readUnits: number; writeUnits: number; sqsRequests: number; dueIndexWriteUnits: number; callsByCommand: Record<string, number> };
  /** The table partition key (index entries apart) with the most write units over the handover, and its units per message handed over. */
  busiestKey: { key: string; writeUnitsPerMessage: number };
  usdPerMillion: { publish: number; handover: number; total: number };
}

async function benchHeldScale({ count = 100_000, log = () => undefined }: { count?: number; log?: (l: string) => void } = {}): Promise<HeldScaleResult> {
  const env = await startBenchEnv(log);
  try {
    const { tick } = await import('../lambda/schedules/tick');
    const { sqsClient } = await import('../lambda/core/adapters/sqs');
    const { meter } = await meterTables();
    expectStatus(await env.call('POST', '/queues', { name: 'held-scale', topic_filter: 'bench/held-scale' }), 201, 'create queue');

    // Due times spread over one minute, two hours ahead (held: beyond SQS's 900 s), in ms.
    const first = Math.ceil((Date.now() + 2 * 3600_000) / MINUTE) * MINUTE;
    const dueOf = (i: number) => first + Math.floor((i * MINUTE) / count);
    // Each payload starts with its index, so a sent body names its due time.
    const payloadOf = (i: number) => `${i}:`.padEnd(PAYLOAD_BYTES, 'x');

    // The simulated clock of the tick running now, and what SQS stored for each message.
    let sim = { at: 0, wall: 0 };
    const simNow = () => sim.at + (Date.now() - sim.wall);
    const stored = new Map<number, { sentAt: number; delay: number; times: number }>();
    sqsClient().middlewareStack.add(
      (next, context) => async (args) => {
        // The request's start: SQS counts the delay from its receipt, on its way by then.
        const at = simNow();
        const out = await next(args);
        if (String(context.commandName) !== 'SendMessageBatchCommand') return out;
        const input = args.input as { Entries: { Id: string; MessageBody: string; DelaySeconds?: number }[] };
        const ok = new Set(((out.output as { Successful?: { Id: string }[] }).Successful ?? []).map((s) => s.Id));
        for (const e of input.Entries.filter((x) => ok.has(x.Id))) {
          const i = Number((JSON.parse(e.MessageBody) as { payload: string }).payload.split(':')[0]);
          const s = stored.get(i);
          if (s) s.times++;
          else stored.set(i, { sentAt: at, delay: e.DelaySeconds ?? 0, times: 1 });
        }
        return out;
      },
      { step: 'initialize', name: 'benchHeldScaleSends' },
    );

    log(`held-scale: holding ${count} messages`);
    meter.reset();
    const batches = Math.ceil(count / 100);
    let apiMs = 0;
    const publishMs = await runConcurrent(batches, 8, async (b) => {
      const idx = Array.from({ length: Math.min(100, count - b * 100) }, (_, k) => b * 100 + k);
      const res = await env.call('POST', '/topics/bench/held-scale/messages/batch', { messages: idx.map((i) => ({ payload: payloadOf(i), deliver_at: new Date(dueOf(i)).toISOString() })) });
      expectStatus(res, 201, 'held batch publish');
      apiMs += res.ms;
      if (b % 50 === 49) log(`held-scale: ${(b + 1) * 100} held`);
    });
    const pub = meter.snapshot();
    meter.reset();
    env.meter.reset();

    // The scheduler's ticks: the first within the handover window of the first due time, at a
    // phase of 30 s (messages come into the window over two ticks, as they would).
    const { HANDOVER_WINDOW_MS } = await import('../lambda/core/rules/delays');
    let at = first - HANDOVER_WINDOW_MS - MINUTE / 2;
    const ticks: TickRow[] = [];
    let handed = 0;
    const cpu = process.cpuUsage();
    while (handed < count && ticks.length < 60) {
      sim = { at, wall: Date.now() };
      const stats = await tick(at, { deadline: Date.now() + TICK_DEADLINE_MS, log: (msg, data) => log(`tick: ${msg} ${JSON.stringify(data)}`) });
      const realMs = Date.now() - sim.wall;
      handed += stats.delayed.handed;
      ticks.push({ atMs: at - first, realMs, handed: stats.delayed.handed, failed: stats.delayed.failed });
      log(`held-scale: tick at ${(at - first) / 1000} s handed ${stats.delayed.handed} in ${realMs} ms (${handed}/${count})`);
      // The next minute's tick, or the first whole minute after this one ended.
      at += MINUTE * Math.max(1, Math.ceil(realMs / MINUTE));
    }
    const cpuUsed = process.cpuUsage(cpu);
    const hand = meter.snapshot();
    const sqs = env.meter.snapshot();

    const lateness: number[] = [];
    const lead: number[] = [];
    let duplicates = 0;
    for (const [i, s] of stored) {
      duplicates += s.times - 1;
      lateness.push(s.sentAt + s.delay * 1000 - dueOf(i));
      lead.push(dueOf(i) - s.sentAt);
    }
    lateness.sort((a, b) => a - b);
    lead.sort((a, b) => a - b);
    const busy = ticks.filter((t) => t.handed > 0);
    const busyMs = busy.reduce((n, t) => n + t.realMs, 0);
    const tickMs = ticks.reduce((n, t) => n + t.realMs, 0);
    const calls = (s: { calls: Record<string, number> }) => Object.values(s.calls).reduce((a, b) => a + b, 0);
    const dueIndexWriteUnits = Object.entries(hand.writesByKey)
      .filter(([k]) => k.endsWith('/due'))
      .reduce((n, [, u]) => n + u, 0);

    const [busyKey, busyUnits] = Object.entries(hand.writesByKey)
      .filter(([k]) => !k.includes('/'))
      .reduce((a, b) => (b[1] > a[1] ? b : a), ['-', 0] as [string, number]);
    const units = (rru: number, wru: number) => rru * PRICES.dynamoReadRequestUnit + wru * PRICES.dynamoWriteRequestUnit;
    // The publish: the API request (one per 100), its Lambda time, its units. The handover: its
    // units, its SQS sends, the tick's Lambda time (one invocation a minute, shared).
    const publishUsd = (1 / 100) * (PRICES.apiGatewayRestRequest + PRICES.wafRequest + PRICES.lambdaRequest) + (apiMs / count / 1000) * LAMBDA_MEMORY_GB * PRICES.lambdaArmGbSecond + units(pub.readUnits / count, pub.writeUnits / count);
    const handoverUsd = units(hand.readUnits / count, hand.writeUnits / count) + (sqs.sqsBilledRequests / count) * PRICES.sqsRequest + (tickMs / count / 1000) * TICK_MEMORY_GB * PRICES.lambdaArmGbSecond + (ticks.length * PRICES.lambdaRequest) / count;
    return {
      count,
      publishSeconds: Math.round(publishMs / 1000),
      ticks,
      handedOnce: [...stored.values()].filter((x) => x.times === 1).length,
      duplicates,
      missing: count - stored.size,
      latenessP50Ms: percentile(lateness, 50) ?? 0,
      latenessP99Ms: percentile(lateness, 99) ?? 0,
      latenessMaxMs: lateness[lateness.length - 1] ?? 0,
      leadP50Ms: percentile(lead, 50) ?? 0,
      leadMinMs: lead[0] ?? 0,
      handoversPerSecond: Math.round((handed / Math.max(1, busyMs)) * 1000),
      tickMsPerHandover: r3(tickMs / count),
      cpuMsPerHandover: r3((cpuUsed.user + cpuUsed.system) / 1000 / count),
      publish: { calls: r3(calls(pub) / count), readUnits: r3(pub.readUnits / count), writeUnits: r3(pub.writeUnits / count), apiMsPerMessage: r3(apiMs / count) },
      handover: {
        calls: r3(calls(hand) / count),
        readUnits: r3(hand.readUnits / count),
        writeUnits: r3(hand.writeUnits / count),
        sqsRequests: r3(sqs.sqsBilledRequests / count),
        dueIndexWriteUnits: r3(dueIndexWriteUnits / count),
        callsByCommand: Object.fromEntries(Object.entries(hand.calls).map(([k, v]) => [k, r3(v / count)])),
      },
      busiestKey: { key: busyKey.replace(env.namespace, '{ns}'), writeUnitsPerMessage: r3(busyUnits / count) },
      usdPerMillion: { publish: r2(publishUsd * 1e6), handover: r2(handoverUsd * 1e6), total: r2((publishUsd + handoverUsd) * 1e6) },
    };
  } finally {
    await env.stop();
  }
}

function heldScaleMarkdown(r: HeldScaleResult): string {
  const s = (ms: number) => r2(ms / 1000);
  return [
    `### Long delays at scale`,
    '',
    `${r.count} held messages (1 KB, one queue) due within one minute; the real tick on a simulated clock, a minute apart, each with its 45 s deadline. Holding them took ${r.publishSeconds} s (batch publish, 8 requests at once).`,
    '',
    '| tick (simulated s from the first due time) | real ms | handed over | left claimed (failed) |',
    '|---:|---:|---:|---:|',
    ...r.ticks.map((t) => `| ${s(t.atMs)} | ${t.realMs} | ${t.handed} | ${t.failed} |`),
    '',
    '| figure | value |',
    '|---|---:|',
    `| handed over once (stored once in SQS) | ${r.handedOnce} |`,
    `| duplicates / missing | ${r.duplicates} / ${r.missing} |`,
    `| lateness p50 / p99 / max (visible time vs due, s) | ${s(r.latenessP50Ms)} / ${s(r.latenessP99Ms)} / ${s(r.latenessMaxMs)} |`,
    `| lateness p99 (s) | ${s(r.latenessP99Ms)} |`,
    `| sent ahead of due, p50 / least (s) | ${s(r.leadP50Ms)} / ${s(r.leadMinMs)} |`,
    `| handovers per second of one tick (local) | ${r.handoversPerSecond} |`,
    `| tick ms per handover (Lambda time) / process CPU ms per handover (fauxqs included) | ${r.tickMsPerHandover} / ${r.cpuMsPerHandover} |`,
    `| publish: DynamoDB calls / RRU / WRU per message | ${r.publish.calls} / ${r.publish.readUnits} / ${r.publish.writeUnits} |`,
    `| handover: DynamoDB calls / RRU / WRU per message | ${r.handover.calls} / ${r.handover.readUnits} / ${r.handover.writeUnits} |`,
    `| handover: due-index WRU per message | ${r.handover.dueIndexWriteUnits} |`,
    `| handover: SQS requests per message | ${r.handover.sqsRequests} |`,
    `| handover: busiest table key, WRU per message | \`${r.busiestKey.key}\` ${r.busiestKey.writeUnitsPerMessage} |`,
    `| handover calls per message by command | ${Object.entries(r.handover.callsByCommand).map(([k, v]) => `${k} ${v}`).join(', ')} |`,
    `| USD per million held messages: publish + handover = total | ${r.usdPerMillion.publish} + ${r.usdPerMillion.handover} = ${r.usdPerMillion.total} |`,
    // The total again on a row of its own, so that a page can quote it (<!-- fig ... -->, bench/figures.ts), as the p99 above.
    `| USD per million held messages | ${r.usdPerMillion.total} |`,
  ].join('\n');
}

/** The `npm run bench` section (bench/run.ts): 100,000 x scale messages. */
/** @public bench/run.ts imports it by name (`npm run bench -- --figures`). */
export async function benchMarkdown({ scale, log }: { scale: number; log: (l: string) => void }): Promise<string> {
  return heldScaleMarkdown(await benchHeldScale({ count: Math.max(1000, Math.round(100_000 * scale)), log }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = Date.now();
  benchHeldScale({ count: Number(process.argv[2] ?? 100_000), log: (l) => console.error(`${new Date().toISOString().slice(11, 19)} ${l}`) })
    .then((r) => {
      console.log(heldScaleMarkdown(r));
      console.log(`\n(bench wall time ${Math.round((Date.now() - started) / 1000)} s)`);
      process.exit(0);
    })
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
