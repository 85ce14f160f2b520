/**
 * What one handover of a held message costs the tick
 * (docs/design/0015-long-delays-held-in-dynamodb.md): DynamoDB read and write units per handover
 * (ReturnConsumedCapacity through bench/key-meter.ts, billing floor of reads included) for 1 KB and
 * 50 KB payloads to one queue, and the tick's peak bytes of messages in flight
 * (`HandoverStats.peakInFlightBytes`, when the tick reports it) against its byte budget.
 *
 * Runs alone: `npx tsx bench/held-handover.ts [count per size] [sizes, comma-separated]` (default 50; 1024,51200).
 */
import { pathToFileURL } from 'node:url';
import { expectStatus, startBenchEnv } from './harness';
import { meterTables } from './key-meter';

const HOUR = 3600_000;
const r3 = (n: number) => Math.round(n * 1000) / 1000;

interface HandoverUnits {
  payloadBytes: number;
  count: number;
  publishWriteUnits: number;
  handoverWriteUnits: number;
  handoverReadUnits: number;
  handoverCalls: number;
  peakInFlightBytes?: number;
  /** The tick's wall time for the round (all of them due in the same minute). */
  tickMs: number;
}

async function benchHeldHandover({ count = 50, sizes = [1024, 50 * 1024], log = () => undefined }: { count?: number; sizes?: number[]; log?: (l: string) => void } = {}): Promise<HandoverUnits[]> {
  const env = await startBenchEnv(log);
  try {
    const { tick } = await import('../lambda/schedules/tick');
    const { meter } = await meterTables();
    const out: HandoverUnits[] = [];
    for (const size of sizes) {
      const name = `held-${size}`;
      expectStatus(await env.call('POST', '/queues', { name, topic_filter: `bench/${name}` }), 201, 'create queue');
      // Every message of this round due in the same minute, a day ahead (a fresh window per round).
      const due = Date.now() + 24 * HOUR * (out.length + 1);
      const payload = 'x'.repeat(size);
      meter.reset();
      // Batches whose body stays under 1 MiB.
      const perBatch = Math.max(1, Math.min(100, Math.floor((900 * 1024) / size)));
      for (let i = 0; i < count; i += perBatch) {
        const n = Math.min(perBatch, count - i);
        const res = await env.call('POST', `/topics/bench/${name}/messages/batch`, { messages: Array.from({ length: n }, () => ({ payload, deliver_at: new Date(due).toISOString() })) });
        expectStatus(res, 201, 'held batch publish');
      }
      const pub = meter.snapshot();
      meter.reset();
      const started = performance.now();
      const stats = await tick(due - 5 * 60_000);
      const tickMs = Math.round(performance.now() - started);
      const hand = meter.snapshot();
      if (stats.delayed.handed !== count) throw new Error(`handed ${stats.delayed.handed} of ${count}`);
      const peak = (stats.delayed as { peakInFlightBytes?: number }).peakInFlightBytes;
      out.push({
        payloadBytes: size,
        count,
        publishWriteUnits: r3(pub.writeUnits / count),
        handoverWriteUnits: r3(hand.writeUnits / count),
        handoverReadUnits: r3(hand.readUnits / count),
        handoverCalls: r3(Object.values(hand.calls).reduce((a, b) => a + b, 0) / count),
        ...(peak === undefined ? {} : { peakInFlightBytes: peak }),
        tickMs,
      });
      log(`held-handover: ${size} bytes done`);
    }
    return out;
  } finally {
    await env.stop();
  }
}

function heldHandoverTable(rows: HandoverUnits[]): string {
  return [
    '| payload | messages | publish WRU each | handover WRU each | handover RRU each | handover calls each | peak bytes in flight | tick ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.payloadBytes} | ${r.count} | ${r.publishWriteUnits} | ${r.handoverWriteUnits} | ${r.handoverReadUnits} | ${r.handoverCalls} | ${r.peakInFlightBytes ?? '-'} | ${r.tickMs} |`),
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const sizes = process.argv[3] ? process.argv[3].split(',').map(Number) : undefined;
  benchHeldHandover({ count: Number(process.argv[2] ?? 50), ...(sizes ? { sizes } : {}), log: (l) => console.error(l) })
    .then((r) => console.log(heldHandoverTable(r)))
    .catch((e) => {
      console.error(e);
      process.exit(1);
    });
}
