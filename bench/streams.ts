/**
 * Streams and subscriptions (issue 4): stream append and read throughput for 1, 3 and 8
 * partitions, a partition-filtered read, and subscription fan-out (1 publish, 50 subscribers),
 * each with the DynamoDB calls and capacity units per message (ReturnConsumedCapacity=TOTAL added
 * to every call) and the DynamoDB cost per million messages at on-demand list prices. Starts its own
 * DynamoDB Local and local gateway and stops them.
 *
 * Run alone: `npx tsx bench/streams.ts [messages]`. Throughput numbers from DynamoDB Local on one
 * machine measure the code path, not DynamoDB's service latency; the calls and units per message
 * are what AWS would bill.
 */
import { pathToFileURL } from 'node:url';
import { startBenchEnv } from './harness';
import { PRICES } from './prices';

export interface Measure {
  messages: number;
  seconds: number;
  messagesPerSecond: number;
  dynamoCallsPerMessage: Record<string, number>;
  readUnitsPerMessage: number;
  writeUnitsPerMessage: number;
  /** DynamoDB request cost per million messages (USD). */
  costPerMillionMessages: number;
}

export interface StreamsBenchResult {
  prices: typeof PRICES;
  payloadBytes: number;
  append: Record<string, Measure>;
  read: Record<string, Measure>;
  partitionRead: Measure;
  fanOut: { subscribers: number; publish: Measure; deliveries: Measure };
}

/** Runs the benchmark; see the module comment. */
export async function benchStreams({ messages = 1000, payloadBytes = 512, log = (_: string): unknown => undefined }: { messages?: number; payloadBytes?: number; log?: (line: string) => unknown } = {}): Promise<StreamsBenchResult> {
  const env = await startBenchEnv((l) => log(l));
  try {
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await env.call(method, path, body);
      if (r.status >= 300) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body.error)}`);
      return { status: r.status, data: r.body.data };
    };
    const payload = 'x'.repeat(payloadBytes);

    const measure = async (label: string, count: number, work: () => Promise<void>): Promise<Measure> => {
      env.meter.reset();
      const started = process.hrtime.bigint();
      await work();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const { calls, readUnits, writeUnits } = env.meter.snapshot();
      const per = (x: number) => Math.round((x / count) * 1000) / 1000;
      const m: Measure = {
        messages: count,
        seconds: Math.round(seconds * 100) / 100,
        messagesPerSecond: Math.round(count / seconds),
        dynamoCallsPerMessage: Object.fromEntries(Object.entries(calls).map(([c, n]) => [c, per(n)])),
        readUnitsPerMessage: per(readUnits),
        writeUnitsPerMessage: per(writeUnits),
        costPerMillionMessages:
          Math.round(((writeUnits / count) * PRICES.dynamoWriteRequestUnit + (readUnits / count) * PRICES.dynamoReadRequestUnit) * 1e6 * 1000) / 1000,
      };
      log(`${label}: ${JSON.stringify(m)}`);
      return m;
    };

    const append: Record<string, Measure> = {};
    const read: Record<string, Measure> = {};
    let partitionRead: Measure | undefined;
    for (const partitions of [1, 3, 8]) {
      const name = `bench-s${partitions}`;
      const topic = `bench/s${partitions}`;
      await api('POST', '/streams', { name, topic_filter: topic, partition_count: partitions });
      // Publishes of 10 messages from 8 concurrent clients, keyed like a typical event stream.
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
    }

    const subscribers = 50;
    await api('POST', '/subscriptions', { name: 'bench-fanout', topic_filter: 'bench/fanout' });
    const publish = await measure('fan-out publish', 1, async () => {
      await api('POST', '/topics/bench/fanout/messages', { payload });
    });
    const deliveries = await measure(`fan-out ${subscribers} subscribers`, subscribers, async () => {
      const got = await Promise.all(Array.from({ length: subscribers }, (_, i) => api('POST', '/subscriptions/bench-fanout/messages/consume', { subscriber_id: `sub-${i}`, timeout_seconds: 0 })));
      const missing = got.filter((g) => g.data.count !== 1).length;
      if (missing) throw new Error(`${missing} subscribers did not get the message`);
    });
    return { prices: PRICES, payloadBytes, append, read, partitionRead: partitionRead as Measure, fanOut: { subscribers, publish, deliveries } };
  } finally {
    await env.stop();
  }
}

/** The figures as Markdown tables, for `npm run bench` (bench/run.ts). */
export async function benchMarkdown({ scale, log }: { scale: number; log: (l: string) => void }): Promise<string> {
  const r = await benchStreams({ messages: Math.max(200, Math.round(1000 * scale)), log });
  const calls = (m: Measure) => Object.values(m.dynamoCallsPerMessage).reduce((a, b) => a + b, 0).toFixed(2);
  const row = (what: string, m: Measure) =>
    `| ${what} | ${m.messages} | ${m.messagesPerSecond} | ${calls(m)} | ${m.readUnitsPerMessage} | ${m.writeUnitsPerMessage} | ${m.costPerMillionMessages} |`;
  return [
    '### Streams and subscriptions',
    `Payload ${r.payloadBytes} bytes; DynamoDB cost only (add API Gateway and Lambda per request as in the queue table).`,
    '',
    '| operation | messages | msg/s | DynamoDB calls/msg | RRU/msg | WRU/msg | DynamoDB USD per million msgs |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...Object.entries(r.append).map(([k, m]) => row(`stream append, ${k}`, m)),
    ...Object.entries(r.read).map(([k, m]) => row(`stream read, ${k}`, m)),
    row('stream read, one partition', r.partitionRead),
    row(`subscription publish (${r.fanOut.subscribers} subscribers)`, r.fanOut.publish),
    row(`subscription deliveries (${r.fanOut.subscribers} subscribers)`, r.fanOut.deliveries),
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [messages] = process.argv.slice(2).map(Number);
  benchStreams({ messages: messages || undefined, log: (l) => process.stderr.write(`${l}\n`) })
    .then((r) => process.stdout.write(`${JSON.stringify(r, null, 2)}\n`))
    .catch((e) => {
      process.stderr.write(`bench failed: ${(e as Error).stack}\n`);
      process.exitCode = 1;
    });
}
