/**
 * The keep-up measures of bench/streams.ts: a consume over an expired, unswept log, the sweeper
 * trimming 100 logs at once, idle long pollers' head reads, and a head carrying gaps. Each takes
 * the running bench's environment (its gateway, key meter and payload) and logs its figures.
 */
import type { BenchEnv } from './harness';
import type { KeyMeter } from './key-meter';

/** What the keep-up measures share with the running bench. */
export interface KeepUpContext {
  env: BenchEnv;
  api: (method: string, path: string, body?: unknown) => Promise<{ status: number; data: any }>;
  meter: KeyMeter;
  payload: string;
  payloadBytes: number;
  log: (line: string) => unknown;
  /** The sweeper's run at a clock of `now` (lambda/sweeper/tasks.ts). */
  sweep: (now: number) => Promise<unknown>;
}

const DAY = 86_400_000;
const r3 = (n: number) => Math.round(n * 1000) / 1000;

/** Runs `fn` with the clock `aheadMs` in the future (Date.now only: the process's own clock). */
async function withClockAhead<T>(aheadMs: number, fn: () => Promise<T>): Promise<T> {
  const real = Date.now;
  Date.now = () => real() + aheadMs;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

/**
 * The idle-partition stream (7 days of retention) seen 8 days later: every message past
 * retention, none trimmed yet, and one live message after them; a consume from earliest of all
 * partitions skips them by position (lambda/logs/storage/log-chunks.ts `skipGone`).
 */
export async function benchExpiredConsume({ env, api, meter, payload, payloadBytes, log }: KeepUpContext, depth: number) {
  const { getStream } = await import('../lambda/streams/storage/streams');
  const { appendToStreams } = await import('../lambda/streams/storage/stream-log');
  const s = (await getStream(env.namespace, 'bench-idle'))!;
  const binding = { kind: 'STREAM' as const, name: 'bench-idle', id: s.id, topic_filter: 'bench/idle', settings: { partition_count: 8, retention_days: 7 } };
  return withClockAhead(8 * DAY, async () => {
    const now = Date.now();
    await appendToStreams({ namespace: env.namespace, now }, [binding], [{ message_id: 'live', topic: 'bench/idle', payload, content_type: 'application/json', properties: {}, published_at: now, size: payloadBytes }]);
    meter.reset();
    const started = Date.now();
    const c = await api('POST', '/streams/bench-idle/messages/consume', { consumer_group: 'late', start_offset: 'earliest', max_messages: 100, timeout_seconds: 0 });
    const m = { depth, ms: Date.now() - started, readUnits: r3(meter.snapshot().readUnits), found: c.data.count as number };
    log(`expired consume: ${JSON.stringify(m)}`);
    return m;
  });
}

/** 100 streams of 1,000 messages each past retention, trimmed by the sweeper's runs. */
export async function benchHundredLogs({ env, api, payload, payloadBytes, log, sweep }: KeepUpContext) {
  const { appendToStreams } = await import('../lambda/streams/storage/stream-log');
  const { getStream } = await import('../lambda/streams/storage/streams');
  const logs = 100;
  const per = 1000;
  const names: string[] = [];
  for (let i = 0; i < logs; i++) {
    const name = `bench-h${i}`;
    names.push(name);
    await api('POST', '/streams', { name, topic_filter: `bench/h${i}`, partition_count: 2, retention_days: 1 });
  }
  const at = Date.now();
  await Promise.all(Array.from({ length: 8 }, async (_, w) => {
    for (let i = w; i < logs; i += 8) {
      const s = (await getStream(env.namespace, names[i]))!;
      const binding = { kind: 'STREAM' as const, name: names[i], id: s.id, topic_filter: s.topic_filter, settings: { partition_count: 2, retention_days: 1 } };
      for (let b = 0; b < per; b += 100) {
        const batch = Array.from({ length: 100 }, (_, k) => ({ message_id: `h${i}-${b + k}`, topic: 'bench/h', payload, content_type: 'application/json', properties: {}, partition_key: `k${k % 7}`, published_at: at, size: payloadBytes }));
        await appendToStreams({ namespace: env.namespace, now: at }, [binding], batch);
      }
    }
  }));
  const started = Date.now();
  const left = async () => {
    let n = 0;
    for (const name of names) n += (await api('GET', `/streams/${name}`)).data.message_count as number;
    return n;
  };
  for (let run = 0; run < 100 && (await left()) > 0; run++) await sweep(Date.now() + 2 * DAY);
  const seconds = Math.max(0.001, (Date.now() - started) / 1000);
  const m = { logs, messages: logs * per, seconds: Math.round(seconds * 10) / 10, messagesPerSecond: Math.round((logs * per) / seconds) };
  log(`trim of 100 logs: ${JSON.stringify(m)}`);
  return m;
}

/** 20 long polls of 3 s on an idle stream: the head reads they make together; then one poll of 25 s alone. */
export async function benchIdlePollers({ api, meter, log }: KeepUpContext) {
  await api('POST', '/streams', { name: 'bench-quiet', topic_filter: 'bench/quiet' });
  const pollers = 20;
  const seconds = 3;
  const consume = (timeout: number, i: number) => api('POST', '/streams/bench-quiet/messages/consume', { consumer_group: `q${i}`, start_offset: 'latest', max_messages: 10, timeout_seconds: timeout });
  await Promise.all(Array.from({ length: pollers }, (_, i) => consume(0, i))); // groups recorded
  meter.reset();
  await Promise.all(Array.from({ length: pollers }, (_, i) => consume(0, i)));
  const base = meter.snapshot().calls.GetItem ?? 0;
  meter.reset();
  await Promise.all(Array.from({ length: pollers }, (_, i) => consume(seconds, i)));
  const reads = (meter.snapshot().calls.GetItem ?? 0) - base;
  const aloneSeconds = 25;
  meter.reset();
  await consume(aloneSeconds, 0);
  const alone = (meter.snapshot().calls.GetItem ?? 0) - base / pollers;
  const m = { pollers, seconds, headReadsPerPollerPerSecond: r3(reads / pollers / seconds), aloneSeconds, aloneHeadReadsPerSecond: r3(alone / aloneSeconds) };
  log(`idle pollers: ${JSON.stringify(m)}`);
  return m;
}

/** A stream whose head carries 100 gaps (publishes that failed to store): head size and write units per publish call. */
export async function benchGappedHead({ env, api, meter, payload, log }: KeepUpContext) {
  const { getStream } = await import('../lambda/streams/storage/streams');
  const { appendToStreams } = await import('../lambda/streams/storage/stream-log');
  const { getHead } = await import('../lambda/logs/storage/log-heads');
  await api('POST', '/streams', { name: 'bench-gaps', topic_filter: 'bench/gaps', partition_count: 8 });
  const s = (await getStream(env.namespace, 'bench-gaps'))!;
  const binding = { kind: 'STREAM' as const, name: 'bench-gaps', id: s.id, topic_filter: 'bench/gaps', settings: { partition_count: 8, retention_days: 7 } };
  const gaps = 100;
  for (let i = 0; i < gaps; i++) {
    const now = Date.now();
    const unstorable = { message_id: `g${i}`, topic: 'bench/gaps', payload: 'x'.repeat(200_000), content_type: 'application/json', properties: { big: 'y'.repeat(250_000) }, partition_key: `g${i}`, published_at: now, size: 200_000 };
    await appendToStreams({ namespace: env.namespace, now }, [binding], [unstorable]).catch(() => undefined);
  }
  const headBytes = Buffer.byteLength(JSON.stringify(await getHead({ namespace: env.namespace, id: s.id })), 'utf8');
  const calls = 20;
  meter.reset();
  for (let i = 0; i < calls; i++) await api('POST', '/topics/bench/gaps/messages/batch', { messages: Array.from({ length: 10 }, (_, k) => ({ payload, partition_key: `p${k}` })) });
  const headKey = Object.keys(meter.snapshot().writesByKey).find((k) => k.includes(`#LOG#${s.id}`));
  const m = { gaps, headBytes, headWriteUnitsPerPublish: r3((headKey ? meter.snapshot().writesByKey[headKey] : 0) / calls) };
  log(`gapped head: ${JSON.stringify(m)}`);
  return m;
}
