/**
 * `npm run bench`: every benchmark of the project against the local runtime's engines (DynamoDB
 * Local and the real handlers behind the local gateway), printed as Markdown. With `--readme` the
 * tables replace the block between `<!-- bench:start -->` and `<!-- bench:end -->` in README.md.
 * `--scale 0.2` runs smaller message counts (a quick check); the README figures use scale 1.
 * `--charts DIR` writes the queue charts (SVG) there; `--readme` writes them to docs/bench/, where
 * the README shows them. `--only queues,cold-start` runs some sections.
 *
 * Figures measure our code path and the DynamoDB request and capacity counts (DynamoDB Local
 * reports consumed capacity like the service); latencies on a laptop are not DynamoDB's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { benchQueues, queueTables, type QueueBenchResult } from './queues';
import { writeQueueCharts } from './queue-charts';
import { benchColdStart, coldStartTable } from './cold-start';
import { benchRateLimit } from './rate-limit';
import { PRICES } from './prices';

const { values } = parseArgs({
  options: { readme: { type: 'boolean', default: false }, scale: { type: 'string', default: '1' }, only: { type: 'string' }, charts: { type: 'string' } },
});
const chartDir = values.charts ?? (values.readme ? 'docs/bench' : undefined);
const scale = Number(values.scale);
const only = values.only?.split(',');
const want = (name: string) => !only || only.includes(name);
const log = (l: string) => process.stderr.write(`bench: ${l}\n`);

async function main() {
  const sections: string[] = [
    `Measured with \`npm run bench\` on ${new Date().toISOString().slice(0, 10)} (${process.platform}, Node ${process.version}, DynamoDB Local). ` +
      `Costs use AWS list prices for ${PRICES.region} read on ${PRICES.readAt} (bench/prices.ts): API Gateway REST, Lambda arm64 at 256 MB for the measured handler time, DynamoDB on-demand units.`,
  ];
  if (want('queues')) {
    log('publishing and queues');
    const queues = await benchQueues({ scale, log });
    sections.push('### Publishing and queues', queueTables(queues));
    if (chartDir) log(`wrote ${writeQueueCharts(chartDir, ...queueChartRows(queues)).join(', ')}`);
  }
  if (want('rate-limit')) {
    log('rate limiter');
    const r = await benchRateLimit({ requests: Math.max(200, Math.round(2000 * scale)), log });
    sections.push(
      '### Rate limiter',
      [
      '| variant | p50 ms | p99 ms | DynamoDB calls/request | capacity units/request |',
      '|---|---:|---:|---:|---:|',
      `| without limiter | ${r.withoutLimiter.sequential.p50Ms} | ${r.withoutLimiter.sequential.p99Ms} | ${Object.values(r.withoutLimiter.dynamoCallsPerRequest).reduce((a, b) => a + b, 0)} | ${r.withoutLimiter.capacityUnitsPerRequest} |`,
      `| with limiter | ${r.withLimiter.sequential.p50Ms} | ${r.withLimiter.sequential.p99Ms} | ${Object.values(r.withLimiter.dynamoCallsPerRequest).reduce((a, b) => a + b, 0)} | ${r.withLimiter.capacityUnitsPerRequest} |`,
      ].join('\n'),
      `The limiter adds ${r.addedP50Ms} ms at p50 and ${r.addedP99Ms} ms at p99 (sequential GET /namespace).`,
    );
  }
  for (const extra of ['streams', 'webhooks']) {
    if (!want(extra)) continue;
    const mod = (await import(`./${extra}`).catch(() => undefined)) as { benchMarkdown?: (o: { scale: number; log: typeof log }) => Promise<string> } | undefined;
    if (mod?.benchMarkdown) {
      log(extra);
      sections.push(await mod.benchMarkdown({ scale, log }));
    }
  }
  if (want('cold-start')) {
    log('cold-start import time per function');
    const runs = Math.max(3, Math.round(9 * Math.min(1, scale)));
    sections.push('### Cold-start import time', coldStartTable(await benchColdStart({ runs, log }), runs));
  }
  const md = sections.join('\n\n');
  process.stdout.write(`${md}\n`);
  if (values.readme) {
    const readme = readFileSync('README.md', 'utf8');
    const start = '<!-- bench:start -->';
    const end = '<!-- bench:end -->';
    const i = readme.indexOf(start);
    const j = readme.indexOf(end);
    if (i === -1 || j === -1) throw new Error(`README.md has no ${start} … ${end} block; add one under "Performance"`);
    writeFileSync('README.md', `${readme.slice(0, i + start.length)}\n${md}\n${readme.slice(j)}`);
    log('README.md performance section updated');
  }
}

/** The chart rows from the queue bench's own rows: lifecycle cost by batch size, consume latency by depth. */
function queueChartRows(r: QueueBenchResult) {
  const costRows = r.phases.filter((p) => p.operation === 'lifecycle').map((p) => ({ batch: p.batch, lifecycleUsd: p.costPerMillionUsd }));
  const depthRows = r.depth.map((d) => ({ depth: d.depth, p50Ms: d.latency.p50Ms, p99Ms: d.latency.p99Ms }));
  return [costRows, depthRows] as const;
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${(e as Error).stack}\n`);
  process.exit(1);
});
