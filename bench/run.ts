/**
 * `npm run bench`: every benchmark of the project against the local runtime's engines (DynamoDB
 * Local and the real handlers behind the local gateway), printed as Markdown. With `--figures`
 * (`--readme` is the old name) each section is stored in docs/figures.json (bench-queues,
 * bench-rate-limit, bench-streams, bench-webhooks, bench-webhooks-fairness, bench-schedules, bench-held-scale,
 * bench-secrets, bench-cold-start) and every
 * `<!-- figures:NAME:start -->` block of README.md and docs/*.md is rendered again from it
 * (bench/figures.ts). `--scale 0.2` runs smaller message counts (a quick check, refused with
 * --figures: the docs show scale 1). `--charts DIR` writes the queue charts (SVG) there;
 * `--figures` writes them to docs/bench/, where docs/performance.md shows them.
 * `--only queues,cold-start` runs some sections (and replaces only those).
 *
 * Figures measure our code path and the DynamoDB request and capacity counts (DynamoDB Local
 * reports consumed capacity like the service); latencies on a laptop are not DynamoDB's.
 */
import { parseArgs } from 'node:util';
import { benchQueues, queueTables, type QueueBenchResult } from './queues';
import { writeQueueCharts } from './queue-charts';
import { benchColdStart, coldStartTable } from './cold-start';
import { benchRateLimit } from './rate-limit';
import { PRICES } from './prices';
import { today, writeSection } from './figures';

const { values } = parseArgs({
  options: { readme: { type: 'boolean', default: false }, figures: { type: 'boolean', default: false }, scale: { type: 'string', default: '1' }, only: { type: 'string' }, charts: { type: 'string' } },
});
const writeFigures = values.figures || values.readme;
const chartDir = values.charts ?? (writeFigures ? 'docs/bench' : undefined);
const scale = Number(values.scale);
const only = values.only?.split(',');
const want = (name: string) => !only || only.includes(name);
const log = (l: string) => process.stderr.write(`bench: ${l}\n`);

/** The bench's sections by name (the figures.json keys), each with the source file of its format. */
const SOURCES: Record<string, string> = {
  'bench-queues': 'bench/queues.ts',
  'bench-rate-limit': 'bench/run.ts',
  'bench-streams': 'bench/streams.ts',
  'bench-webhooks': 'bench/webhooks.ts',
  'bench-webhooks-fairness': 'bench/webhooks-fairness-table.ts',
  'bench-schedules': 'bench/schedules.ts',
  'bench-held-scale': 'bench/held-scale.ts',
  'bench-cold-start': 'bench/cold-start.ts',
  'bench-secrets': 'bench/secrets.ts',
};

async function main() {
  if (writeFigures && scale !== 1) throw new Error('--figures stores what the docs show, measured at --scale 1; drop --scale, or drop --figures for a quick look');
  const sections: { name: string; title: string; markdown: string }[] = [];
  if (want('queues')) {
    log('publishing and queues');
    const queues = await benchQueues({ scale, log });
    sections.push({ name: 'bench-queues', title: '### Publishing and queues', markdown: queueTables(queues) });
    if (chartDir) log(`wrote ${writeQueueCharts(chartDir, ...queueChartRows(queues)).join(', ')}`);
  }
  if (want('rate-limit')) {
    log('rate limiter');
    const r = await benchRateLimit({ requests: Math.max(200, Math.round(2000 * scale)), log });
    sections.push({
      name: 'bench-rate-limit',
      title: '### Rate limiter',
      markdown: [
        [
          '| variant | p50 ms | p99 ms | DynamoDB calls/request | capacity units/request |',
          '|---|---:|---:|---:|---:|',
          `| without limiter | ${r.withoutLimiter.sequential.p50Ms} | ${r.withoutLimiter.sequential.p99Ms} | ${Object.values(r.withoutLimiter.dynamoCallsPerRequest).reduce((a, b) => a + b, 0)} | ${r.withoutLimiter.capacityUnitsPerRequest} |`,
          `| with limiter | ${r.withLimiter.sequential.p50Ms} | ${r.withLimiter.sequential.p99Ms} | ${Object.values(r.withLimiter.dynamoCallsPerRequest).reduce((a, b) => a + b, 0)} | ${r.withLimiter.capacityUnitsPerRequest} |`,
        ].join('\n'),
        `The limiter adds ${r.addedP50Ms} ms at p50 and ${r.addedP99Ms} ms at p99 (sequential GET /namespace).`,
      ].join('\n\n'),
    });
  }
  for (const extra of ['streams', 'webhooks', 'webhooks-fairness', 'schedules', 'held-scale', 'secrets']) {
    if (!want(extra)) continue;
    const mod = (await import(`./${extra}`).catch(() => undefined)) as { benchMarkdown?: (o: { scale: number; log: typeof log }) => Promise<string> } | undefined;
    if (mod?.benchMarkdown) {
      log(extra);
      // benchMarkdown starts with its own "### ..." heading; the docs give the heading themselves.
      const md = await mod.benchMarkdown({ scale, log });
      const title = md.match(/^###[^\n]*/)?.[0] ?? `### ${extra}`;
      sections.push({ name: `bench-${extra}`, title, markdown: md.replace(/^###[^\n]*\n+/, '') });
    }
  }
  if (want('cold-start')) {
    log('cold-start import time per function');
    const runs = Math.max(3, Math.round(9 * Math.min(1, scale)));
    sections.push({ name: 'bench-cold-start', title: '### Cold-start import time', markdown: coldStartTable(await benchColdStart({ runs, log }), runs) });
  }
  const environment = `${process.platform}, Node ${process.version}, DynamoDB Local; costs at AWS list prices for ${PRICES.region} read on ${PRICES.readAt}, bench/prices.ts`;
  process.stdout.write(`${sections.map((s) => `${s.title}\n\n${s.markdown}`).join('\n\n')}\n`);
  if (writeFigures) {
    const changed = new Set<string>();
    for (const s of sections) {
      const only = s.name.replace(/^bench-/, '');
      const command = `npm run bench -- --figures --only ${only}`;
      for (const page of writeSection(s.name, { command, measured: today(), environment, source: SOURCES[s.name], markdown: s.markdown })) changed.add(page);
    }
    log(`docs/figures.json: ${sections.map((s) => s.name).join(', ')} stored; pages re-rendered: ${[...changed].join(', ') || 'none changed'}`);
  }
}

/** The chart rows from the queue bench's own rows: lifecycle cost by batch size, consume latency by depth. */
function queueChartRows(r: QueueBenchResult) {
  const costRows = r.phases.filter((p) => p.operation === 'lifecycle').map((p) => ({ batch: p.batch, lifecycleUsd: p.costPerMillionUsd }));
  const depthRows = r.depth.map((d) => ({ depth: d.depth, p50Ms: d.latency.p50Ms, p99Ms: d.latency.p99Ms }));
  return [costRows, depthRows] as const;
}

// Exits once the figures are out: after `--only webhooks` the process stayed up, idle, for more
// than 6 minutes (a handle of the local engines left open), holding its run-slot all that time.
main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench failed: ${(e as Error).stack}\n`);
    process.exit(1);
  },
);
