/**
 * The fairness bench's result and its Markdown (bench/webhooks-fairness.ts runs it): one row per
 * condition and the verdict on the fairness target of docs/performance.md, computed from the run. Plain code, no engine
 * imports, so a unit test loads it (test/unit/bench-fairness-table.test.ts); its table header is
 * the format docs/figures.json's bench-webhooks-fairness section is checked against.
 */
export const SLOW_MS = 5000;
/** The target: the 0 ms webhook's p99 beside the slow namespace at most this many times its p99 alone. */
const TARGET_RATIO = 2;

export interface FairnessCondition {
  /** 'alone', or beside which slow webhook. */
  condition: string;
  /** The 0 ms webhook's publish-to-request latency (ms). */
  p50Ms: number;
  p99Ms: number;
  /** The slow webhook's deliveries a second, from the window's first publish until drained (undefined alone). */
  slowPerSecond?: number;
  /** Jobs the event source handed to the delivery function per delivery, per webhook: 1, plus each time a job came back after being put back over its namespace's share. */
  fastJobsReceivedPerDelivery?: number;
  slowJobsReceivedPerDelivery?: number;
  /** The 0 ms webhook's slowest 1 %: put back / of how many, mean ms to the first hand-out, mean ms after it. */
  tail?: string;
}

export interface FairnessRun {
  share: number;
  perSecond: number;
  windowSeconds: number;
  rounds: number;
  sameNamespace: boolean;
  /** Alone, then beside the 5 s webhook. */
  conditions: [FairnessCondition, FairnessCondition];
}

/** The 0 ms webhook's p99 beside the slow one over its p99 alone (one decimal), and whether it meets the target. */
export function fairnessRatio(r: FairnessRun): { ratio: number; met: boolean } {
  const [alone, beside] = r.conditions;
  return { ratio: Math.round((beside.p99Ms / alone.p99Ms) * 10) / 10, met: beside.p99Ms <= TARGET_RATIO * alone.p99Ms };
}

/** The run as Markdown: its settings, one row per condition, and the target's verdict, computed. */
export function fairnessTable(r: FairnessRun): string {
  const { ratio, met } = fairnessRatio(r);
  const cell = (v: number | string | undefined) => (v === undefined ? '' : typeof v === 'number' ? Math.round(v).toLocaleString('en-US') : v);
  const [alone, beside] = r.conditions;
  const verdict = r.sameNamespace
    ? `The 0 ms webhook's p99 beside a ${SLOW_MS / 1000} s webhook of its own namespace was ${ratio} times its p99 alone (the target is across namespaces; not judged here).`
    : `Target: beside another namespace's ${SLOW_MS / 1000} s receiver, the 0 ms webhook's p99 publish-to-request at most ${TARGET_RATIO} times its p99 alone. This run: ${cell(beside.p99Ms)} ms against ${cell(alone.p99Ms)} ms, ${ratio} times: ${met ? 'met' : 'not met'}.`;
  return [
    `Namespace share ${r.share} (MSG_WEBHOOK_NAMESPACE_SHARE), ${r.perSecond}/s offered to each webhook (batches of 10) for ${r.windowSeconds} s per condition, ${r.rounds} round${r.rounds === 1 ? '' : 's'} after a 5 s warm-up, 8 local delivery batches at once.`,
    '',
    '| 0 ms webhook | p50 ms | p99 ms | p99 ÷ alone | 5 s webhook delivered /s (until drained) | 0 ms webhook jobs received/delivery | 5 s webhook jobs received/delivery | its slowest 1 %: put back / mean ms to first hand-out / mean ms after it |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...r.conditions.map(
      (c, i) =>
        `| ${c.condition} | ${cell(c.p50Ms)} | ${cell(c.p99Ms)} | ${i ? ratio : ''} | ${c.slowPerSecond ?? ''} | ${c.fastJobsReceivedPerDelivery ?? ''} | ${c.slowJobsReceivedPerDelivery ?? ''} | ${c.tail ?? ''} |`,
    ),
    '',
    verdict,
    '',
    `Latency is publish start to the receiver's request. Jobs received per delivery: 1, plus each time a job came back after being put back over its namespace's share (2 to 5 s later). The slow namespace needs ${Math.round((r.perSecond * SLOW_MS) / 1000)} jobs in flight, more than the 8 local batches of 10 hold, so it keeps a backlog; the share keeps it to part of the batches, at the price of its rate.`,
  ].join('\n');
}
