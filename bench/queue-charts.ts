/**
 * The two queue charts of the README: full-stack cost per million messages by batch
 * size against SQS and SNS + SQS list prices, and consume p50 by queue depth. Fed by the rows the
 * queue bench computes (mapped in bench/run.ts), drawn by ./charts.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lineChartSvg } from './charts';
import { listPricePerMillion, PRICES } from './prices';

export interface CostRow {
  batch: number;
  /** USD per million messages published, consumed and acknowledged with this batch size. */
  lifecycleUsd: number;
}

export interface DepthRow {
  depth: number;
  p50Ms: number;
  p99Ms?: number;
}

const usd = (v: number) => `$${v >= 100 ? v.toFixed(0) : v >= 0.1 ? v.toFixed(2) : Number(v.toPrecision(2))}`;

export function costChartSvg(rows: CostRow[]): string {
  const sorted = [...rows].sort((a, b) => a.batch - b.batch);
  return lineChartSvg({
    title: 'Cost per million messages: publish + consume + ack',
    subtitle: `USD, ${PRICES.region} list prices read on ${PRICES.readAt} (bench/prices.ts); log scale`,
    xLabel: 'messages per request (batch size)',
    yLabel: 'USD per million messages',
    categories: sorted.map((r) => String(r.batch)),
    logY: true,
    format: usd,
    series: [
      { name: 'this service (full stack)', values: sorted.map((r) => r.lifecycleUsd) },
      { name: 'SQS alone (requests)', values: sorted.map((r) => listPricePerMillion('sqs', r.batch)), dashed: true },
      { name: 'SNS + SQS (requests)', values: sorted.map((r) => listPricePerMillion('sns+sqs', r.batch)), dashed: true },
    ],
  });
}

export function depthChartSvg(rows: DepthRow[]): string {
  const sorted = [...rows].sort((a, b) => a.depth - b.depth);
  const hasP99 = sorted.every((r) => r.p99Ms !== undefined);
  return lineChartSvg({
    title: 'Consume latency by queue depth',
    subtitle: 'one message per consume, local runtime (npm run bench); flat means O(batch), not O(depth)',
    xLabel: 'messages waiting in the queue',
    yLabel: 'milliseconds',
    categories: sorted.map((r) => r.depth.toLocaleString('en-US')),
    format: (v) => (v >= 10 || v === 0 ? v.toFixed(0) : v.toFixed(1)),
    series: [{ name: 'consume p50', values: sorted.map((r) => r.p50Ms) }, ...(hasP99 ? [{ name: 'consume p99', values: sorted.map((r) => r.p99Ms ?? null), dashed: true }] : [])],
  });
}

/** Writes both charts into `dir`; returns the files written. */
export function writeQueueCharts(dir: string, cost: CostRow[], depth: DepthRow[]): string[] {
  mkdirSync(dir, { recursive: true });
  const files = [
    [join(dir, 'cost-per-million.svg'), costChartSvg(cost)],
    [join(dir, 'consume-latency-by-depth.svg'), depthChartSvg(depth)],
  ] as const;
  for (const [file, svg] of files) writeFileSync(file, svg);
  return files.map(([file]) => file);
}
