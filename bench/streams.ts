/**
 * Streams and subscriptions (docs/streams-and-subscriptions.md), through the real local gateway on DynamoDB Local:
 *
 * - stream append with 1, 3 and 8 partitions (batches of 10 from 8 clients, keys spread like a
 *   typical event stream): messages/s, read and write units per message, and the write units per
 *   message on the busiest single partition key (bench/key-meter.ts);
 * - trimming those messages once they are past retention (the sweeper with a clock two days
 *   ahead), so "life" = append + trim is what a message costs in writes from publish to gone;
 * - stream reads: all partitions, one partition, and one idle partition of a busy stream (a stream
 *   of `idleDepth` messages, none in partition 0): read units of a first consume and of each
 *   further poll of a long poll;
 * - subscription publish to 50 subscribers (batch 1 and batch 10), every subscriber reading every
 *   message, and trimming.
 *
 * Throughput from DynamoDB Local on one machine measures the code path, not DynamoDB; the calls
 * and units per message are what AWS would bill (reads at DynamoDB's per-request floor).
 * Run alone: `npx tsx bench/streams.ts [messages] [idleDepth]`; under `npm run bench` the idle stream
 * holds 1M × scale messages (`BENCH_IDLE_DEPTH` overrides).
 */
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startBenchEnv } from './harness';
import { type KeySnapshot, meterTables } from './key-meter';
import { PRICES } from './prices';
import { benchExpiredConsume, benchGappedHead, benchHundredLogs, benchIdlePollers, type KeepUpContext } from './streams-keep-up';

interface Measure {
  messages: number;
  seconds: number;
  messagesPerSecond: number;
  dynamoCallsPerMessage: Record<string, number>;
  readUnitsPerMessage: number;
  writeUnitsPerMessage: number;
  /** Write units per message on the partition key that took the most, and that key. */
  busiestKeyWriteUnitsPerMessage: number;
  busiestKey: string;
  /** DynamoDB request cost per million messages (USD). */
  costPerMillionMessages: number;
}

interface PollMeasure {
  depth: number;
  /** Read units of one consume (timeout 0) of the idle partition from the start of the stream. */
  firstConsumeReadUnits: number;
  /** Read units of each further poll while a consume long-polls that partition. */
  readUnitsPerPoll: number;
  polls: number;
}

interface DeepTrimMeasure {
  depth: number;
  visits: number;
  seconds: number;
  readUnitsPerMessage: number;
  writeUnitsPerMessage: number;
  /** Heap retained after a visit (after a full collection) over the start of the trim, at most (MB). */
  peakHeapGrowthMb: number;
}

interface KeepUpMeasure {
  /** A consume from `earliest` of a stream whose `depth` messages are all past retention (unswept), with one live message after them. */
  expiredConsume: { depth: number; ms: number; readUnits: number; found: number };
  /** The sweeper's trim rate on one log (the deep trim) and over 100 logs, messages per second. */
  trimPerLog: number;
  trimHundredLogs: { logs: number; messages: number; seconds: number; messagesPerSecond: number };
  /**
   * Idle long pollers of one stream in one process (they share the container's head reads): head
   * reads per poller per second; and one poller alone for the longest wait (25 s), as each poller
   * is in Lambda, where a waiting consume holds its own container.
   */
  idlePollers: { pollers: number; seconds: number; headReadsPerPollerPerSecond: number; aloneSeconds: number; aloneHeadReadsPerSecond: number };
  /** A head carrying `gaps` gaps: its size and the write units of a publish call to it. */
  gappedHead: { gaps: number; headBytes: number; headWriteUnitsPerPublish: number };
}

interface StreamsBenchResult {
  keepUp: KeepUpMeasure;
  prices: typeof PRICES;
  payloadBytes: number;
  append: Record<string, Measure>;
  trim: Record<string, Measure>;
  read: Record<string, Measure>;
  partitionRead: Measure;
  idlePartition: PollMeasure;
  deepTrim: DeepTrimMeasure;
  fanOut: { subscribers: number; publish: Record<string, Measure>; deliveries: Measure; trim: Measure };
}

const r3 = (n: number) => Math.round(n * 1000) / 1000;

/** Runs the benchmark; see the module comment. */
async function benchStreams({
  messages = 1000,
  idleDepth = 100_000,
  payloadBytes = 512,
  log = (_: string): unknown => undefined,
}: { messages?: number; idleDepth?: number; payloadBytes?: number; log?: (line: string) => unknown } = {}): Promise<StreamsBenchResult> {
  const env = await startBenchEnv((l) => log(l));
  try {
    const { meter } = await meterTables();
    const { sweep } = await import('../lambda/sweeper/tasks');

    const api = async (method: string, path: string, body?: unknown) => {
      const r = await env.call(method, path, body);
      if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body.error)}`);
      return { status: r.status, data: r.body.data };
    };
    const payload = 'x'.repeat(payloadBytes);

    const toMeasure = (label: string, count: number, seconds: number, snap: KeySnapshot): Measure => {
      const per = (x: number) => r3(x / count);
      const busiest = Object.entries(snap.writesByKey).sort((a, b) => b[1] - a[1])[0] ?? ['-', 0];
      const m: Measure = {
        messages: count,
        seconds: Math.round(seconds * 100) / 100,
        messagesPerSecond: Math.round(count / seconds),
        dynamoCallsPerMessage: Object.fromEntries(Object.entries(snap.calls).map(([c, n]) => [c, per(n)])),
        readUnitsPerMessage: per(snap.readUnits),
        writeUnitsPerMessage: per(snap.writeUnits),
        busiestKeyWriteUnitsPerMessage: per(busiest[1]),
        busiestKey: busiest[0].replace(env.namespace, '{ns}'),
        costPerMillionMessages: Math.round(((snap.writeUnits / count) * PRICES.dynamoWriteRequestUnit + (snap.readUnits / count) * PRICES.dynamoReadRequestUnit) * 1e6 * 1000) / 1000,
      };
      log(`${label}: ${JSON.stringify(m)}`);
      return m;
    };
    const measure = async (label: string, count: number, work: () => Promise<void>): Promise<Measure> => {
      meter.reset();
      const started = process.hrtime.bigint();
      await work();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      return toMeasure(label, count, seconds, meter.snapshot());
    };
    /** Sweeps with a clock `aheadMs` in the future until `done()` holds (each run is bounded). */
    const sweepUntil = async (aheadMs: number, done: () => Promise<boolean>) => {
      for (let run = 0; run < 500; run++) {
        if (await done()) return;
        await sweep(Date.now() + aheadMs);
      }
      throw new Error('the sweeper did not finish within 500 runs');
    };
    const DAY = 86_400_000;

    const append: Record<string, Measure> = {};
    const trim: Record<string, Measure> = {};
    const read: Record<string, Measure> = {};
    let partitionRead: Measure | undefined;
    for (const partitions of [1, 3, 8]) {
      const name = `bench-s${partitions}`;
      const topic = `bench/s${partitions}`;
      await api('POST', '/streams', { name, topic_filter: topic, partition_count: partitions, retention_days: 1 });
      let sent = 0;
      append[`${partitions}p`] = await measure(`append ${partitions}p`, messages, async () => {
        await Promise.all(Array.from({ length: 8 }, async () => {
          while (sent < messages) {
            const batch = Array.from({ length: Math.min(10, messages - sent) }, (_, i) => ({ payload, partition_key: `k${(sent + i) % 97}` }));
            sent += batch.length;
            await api('POST', `/topics/${topic}/messages/batch`, { messages: batch });
          }
        }));
      });
      read[`${partitions}p`] = await measure(`read ${partitions}p`, messages, async () => {
        let next = 0;
        for (let got = 0; got < messages;) {
          const c = await api('POST', `/streams/${name}/messages/consume`, { consumer_group: 'bench', start_offset: next, max_messages: 1000, timeout_seconds: 0 });
          got += c.data.count;
          next = c.data.next_offset;
        }
      });
      if (partitions === 8) {
        const first = await api('POST', `/streams/${name}/messages/consume`, { consumer_group: 'bench', start_offset: 'earliest', max_messages: 1000, partition: 0, timeout_seconds: 0 });
        partitionRead = await measure('partition read 8p (partition 0)', Math.max(1, first.data.count), async () => {
          await api('POST', `/streams/${name}/messages/consume`, { consumer_group: 'bench', start_offset: 'earliest', max_messages: 1000, partition: 0, timeout_seconds: 0 });
        });
      }
      trim[`${partitions}p`] = await measure(`trim ${partitions}p`, messages, () => sweepUntil(2 * DAY, async () => (await api('GET', `/streams/${name}`)).data.message_count === 0));
    }

    const idlePartition = await benchIdlePartition(idleDepth);
    const keepUpContext: KeepUpContext = { env, api, meter, payload, payloadBytes, log, sweep };
    const expiredConsume = await benchExpiredConsume(keepUpContext, idleDepth);
    const deepTrim = await benchDeepTrim(idleDepth);
    const keepUp: KeepUpMeasure = {
      expiredConsume,
      trimPerLog: Math.round(deepTrim.depth / Math.max(0.001, deepTrim.seconds)),
      trimHundredLogs: await benchHundredLogs(keepUpContext),
      idlePollers: await benchIdlePollers(keepUpContext),
      gappedHead: await benchGappedHead(keepUpContext),
    };
    log(`keep up: ${JSON.stringify(keepUp)}`);

    const subscribers = 50;
    await api('POST', '/subscriptions', { name: 'bench-fanout', topic_filter: 'bench/fanout/#', message_ttl_seconds: 60 });
    const fanOutPublish: Record<string, Measure> = {};
    const single = Math.max(10, Math.round(messages / 20));
    fanOutPublish['batch 1'] = await measure('fan-out publish, batch 1', single, async () => {
      for (let i = 0; i < single; i++) await api('POST', '/topics/bench/fanout/one/messages', { payload });
    });
    const batched = Math.max(100, Math.round(messages / 2 / 10) * 10);
    fanOutPublish['batch 10'] = await measure('fan-out publish, batch 10', batched, async () => {
      await Promise.all(Array.from({ length: 4 }, async (_, w) => {
        for (let i = w * 10; i < batched; i += 40) await api('POST', '/topics/bench/fanout/ten/messages/batch', { messages: Array.from({ length: 10 }, () => ({ payload })) });
      }));
    });
    const total = single + batched;
    const deliveries = await measure(`fan-out ${subscribers} subscribers`, total * subscribers, async () => {
      await Promise.all(Array.from({ length: subscribers }, async (_, i) => {
        for (let got = 0; got < total;) {
          const c = await api('POST', '/subscriptions/bench-fanout/messages/consume', { subscriber_id: `sub-${i}`, max_messages: 100, timeout_seconds: 0 });
          if (c.data.count === 0) throw new Error(`subscriber ${i} got ${got} of ${total} messages`);
          got += c.data.count;
        }
      }));
    });
    const fanOutTrim = await measure('fan-out trim', total, () =>
      sweepUntil(120_000, async () => (await api('GET', '/subscriptions/bench-fanout')).data.message_count === 0),
    );
    return {
      prices: PRICES,
      payloadBytes,
      append,
      trim,
      read,
      partitionRead: partitionRead as Measure,
      idlePartition,
      deepTrim,
      keepUp,
      fanOut: { subscribers, publish: fanOutPublish, deliveries, trim: fanOutTrim },
    };

    /**
     * The sweeper trimming the idle-partition stream once all of it is past retention, one visit
     * after another as its runs would (each bounded: lambda/logs/sweep.ts), with the heap
     * measured after every visit: it must stay flat however long the log.
     */
    async function benchDeepTrim(depth: number): Promise<DeepTrimMeasure> {
      const { getStream } = await import('../lambda/streams/storage/streams');
      const { getHead } = await import('../lambda/logs/storage/log-heads');
      const { sweepStream } = await import('../lambda/streams/sweep');
      const s = (await getStream(env.namespace, 'bench-idle'))!;
      const ref = { namespace: env.namespace, id: s.id };
      // Heap retained after each visit, after a full collection: what a run keeps, not garbage.
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      gc();
      const base = process.memoryUsage().heapUsed;
      let peak = 0;
      let visits = 0;
      meter.reset();
      const started = Date.now();
      // Until a visit trims nothing (the expired-consume measure left one live message at the end).
      for (let head = await getHead(ref); head && head.earliest < head.next; head = await getHead(ref)) {
        const stats = await sweepStream(s, { now: Date.now() + 8 * DAY });
        visits++;
        if (!stats.trimmed) break;
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed - base);
        if (visits > 10_000) throw new Error('the trim did not finish');
      }
      const snap = meter.snapshot();
      const m = { depth, visits, seconds: Math.round((Date.now() - started) / 100) / 10, readUnitsPerMessage: r3(snap.readUnits / depth), writeUnitsPerMessage: r3(snap.writeUnits / depth), peakHeapGrowthMb: Math.round(peak / 1e5) / 10 };
      log(`deep trim: ${JSON.stringify(m)}`);
      return m;
    }

    /**
     * A busy stream of `depth` messages in partitions 1-7 (appended through the publish sink in
     * batches of 100, which is faster than HTTP and stores the same items), then partition 0 read
     * from the start of the stream: once with timeout 0, and as a long poll of 2 s (each poll
     * re-reads one item, so the extra GetItem calls count the polls).
     */
    async function benchIdlePartition(depth: number): Promise<PollMeasure> {
      const name = 'bench-idle';
      await api('POST', '/streams', { name, topic_filter: 'bench/idle', partition_count: 8 });
      const { getStream } = await import('../lambda/streams/storage/streams');
      const { appendToStreams } = await import('../lambda/streams/storage/stream-log');
      const { partitionFor } = await import('../lambda/streams/rules');
      const s = (await getStream(env.namespace, name))!;
      const keys: string[] = [];
      for (let i = 0; keys.length < 7 * 4; i++) if (partitionFor(`idle-${i}`, 8, 0) !== 0) keys.push(`idle-${i}`);
      const binding = { kind: 'STREAM' as const, name, id: s.id, topic_filter: 'bench/idle', settings: { partition_count: 8, retention_days: 7 } };
      const started = Date.now();
      let seeded = 0;
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (seeded < depth) {
          const n = Math.min(100, depth - seeded);
          seeded += n;
          const now = Date.now();
          const batch = Array.from({ length: n }, (_, i) => ({
            message_id: `m${seeded}-${i}`,
            topic: 'bench/idle',
            payload,
            content_type: 'application/json',
            properties: {},
            partition_key: keys[(seeded + i) % keys.length],
            published_at: now,
            size: payloadBytes,
          }));
          await appendToStreams({ namespace: env.namespace, now }, [binding], batch);
        }
      }));
      log(`idle partition: seeded ${depth} messages in ${Math.round((Date.now() - started) / 1000)} s`);
      const consume = (timeout: number) => api('POST', `/streams/${name}/messages/consume`, { consumer_group: 'idle', start_offset: 0, partition: 0, max_messages: 100, timeout_seconds: timeout });
      await consume(0); // warm: the group record is written once
      meter.reset();
      await consume(0);
      const short = meter.snapshot();
      meter.reset();
      await consume(2);
      const long = meter.snapshot();
      const polls = 1 + (long.calls.GetItem ?? 0) - (short.calls.GetItem ?? 0);
      const m = { depth, firstConsumeReadUnits: r3(short.readUnits), readUnitsPerPoll: r3((long.readUnits - short.readUnits) / Math.max(1, polls - 1)), polls };
      log(`idle partition: ${JSON.stringify(m)}`);
      return m;
    }
  } finally {
    await env.stop();
  }
}

/** The figures as Markdown tables, for `npm run bench` (bench/run.ts). */
/** @public bench/run.ts imports it by name (`npm run bench -- --figures`). */
export async function benchMarkdown({ scale, log }: { scale: number; log: (l: string) => void }): Promise<string> {
  const r = await benchStreams({ messages: Math.max(200, Math.round(1000 * scale)), idleDepth: Number(process.env.BENCH_IDLE_DEPTH) || Math.max(10_000, Math.round(1_000_000 * scale)), log });
  const calls = (m: Measure) => Object.values(m.dynamoCallsPerMessage).reduce((a, b) => a + b, 0).toFixed(2);
  const row = (what: string, m: Measure, busiest = true) =>
    `| ${what} | ${m.messages} | ${m.messagesPerSecond} | ${calls(m)} | ${m.readUnitsPerMessage} | ${m.writeUnitsPerMessage} | ${busiest ? `${m.busiestKeyWriteUnitsPerMessage} (\`${m.busiestKey}\`)` : ''} | ${m.costPerMillionMessages} |`;
  const life = (k: string) => r3(r.append[k].writeUnitsPerMessage + r.trim[k].writeUnitsPerMessage);
  const subLife = r3(r.fanOut.publish['batch 10'].writeUnitsPerMessage + r.fanOut.trim.writeUnitsPerMessage);
  return [
    '### Streams and subscriptions',
    `Payload ${r.payloadBytes} bytes; DynamoDB cost only (add API Gateway and Lambda per request as in the queue table). ` +
      'Reads are counted at DynamoDB\'s floor of one unit per strongly consistent request (half when eventually consistent). ' +
      'Busiest key: the write units per message on the single partition key that took the most (a key takes about 1,000 a second).',
    '',
    '| operation | messages | msg/s | DynamoDB calls/msg | RRU/msg | WRU/msg | busiest key WRU/msg | DynamoDB USD per million msgs |',
    '|---|---:|---:|---:|---:|---:|---|---:|',
    ...Object.entries(r.append).map(([k, m]) => row(`stream append, ${k}, batch 10`, m)),
    ...Object.entries(r.trim).map(([k, m]) => row(`stream trim past retention, ${k}`, m)),
    ...Object.entries(r.read).map(([k, m]) => row(`stream read, ${k}`, m, false)),
    row('stream read, one partition of 8', r.partitionRead, false),
    ...Object.entries(r.fanOut.publish).map(([k, m]) => row(`subscription publish (${r.fanOut.subscribers} subscribers), ${k}`, m)),
    row(`subscription reads (${r.fanOut.subscribers} subscribers), per delivered message`, r.fanOut.deliveries),
    row('subscription trim past TTL', r.fanOut.trim),
    '',
    `Life of a message in writes (append + trim): stream ${Object.keys(r.append).map((k) => `${k} ${life(k)}`).join(', ')} WRU; subscription at batch 10 ${subLife} WRU.`,
    '',
    `Sweeper trimming that stream once all ${r.deepTrim.depth} messages are past retention: ${r.deepTrim.visits} visits (each skips by position, then walks at most 5,000 messages, one page of chunks per partition in memory), ${r.deepTrim.seconds} s, ${r.deepTrim.readUnitsPerMessage} RRU and ${r.deepTrim.writeUnitsPerMessage} WRU per message; heap retained after a visit at most ${r.deepTrim.peakHeapGrowthMb} MB over its start.`,
    '',
    `Keeping up: a consume from earliest of that stream ${'8 days later (all ' + r.keepUp.expiredConsume.depth + ' messages past retention, unswept, one live message after them)'} took ${r.keepUp.expiredConsume.ms} ms and ${r.keepUp.expiredConsume.readUnits} RRU and returned ${r.keepUp.expiredConsume.found} message; ` +
      `the sweeper trimmed that stream at ${r.keepUp.trimPerLog} messages/s, and ${r.keepUp.trimHundredLogs.logs} streams of ${r.keepUp.trimHundredLogs.messages / r.keepUp.trimHundredLogs.logs} messages each at ${r.keepUp.trimHundredLogs.messagesPerSecond} messages/s together (${r.keepUp.trimHundredLogs.seconds} s); ` +
      `${r.keepUp.idlePollers.pollers} idle long pollers of ${r.keepUp.idlePollers.seconds} s in one process read the head ${r.keepUp.idlePollers.headReadsPerPollerPerSecond} times per poller per second (eventually consistent, shared per container); one poller alone (as each is in Lambda) ${r.keepUp.idlePollers.aloneHeadReadsPerSecond} times a second over ${r.keepUp.idlePollers.aloneSeconds} s; ` +
      `a head with ${r.keepUp.gappedHead.gaps} gaps is ${r.keepUp.gappedHead.headBytes} bytes and takes ${r.keepUp.gappedHead.headWriteUnitsPerPublish} write units per publish call.`,
    '',
    `Idle partition of a busy stream (${r.idlePartition.depth} messages, none in partition 0): a consume of partition 0 from offset 0 costs ${r.idlePartition.firstConsumeReadUnits} RRU (with the request's key and stream lookups); each further poll of a long poll costs ${r.idlePartition.readUnitsPerPoll} RRU (${r.idlePartition.polls} polls in 2 s).`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [messages, idleDepth] = process.argv.slice(2).map(Number);
  benchStreams({ messages: messages || undefined, idleDepth: idleDepth || undefined, log: (l) => process.stderr.write(`${l}\n`) })
    .then((r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`))
    .catch((e) => {
      process.stderr.write(`bench failed: ${(e as Error).stack}\n`);
      process.exitCode = 1;
    });
}
