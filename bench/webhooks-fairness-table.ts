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
  /** How long the neighbour ran before the beside condition's window (s). */
  neighbourLeadSeconds?: number;
  /** The most delivery batches at once in the run (the mapping's pollers scale as Lambda's). */
  batchesAtOnce: number;
  /** Alone, beside the 5 s webhook (running for a while: the target), as it appears (shown, not judged). */
  conditions: [FairnessCondition, FairnessCondition, FairnessCondition?];
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
    `Namespace share ${r.share} (MSG_WEBHOOK_NAMESPACE_SHARE), ${r.perSecond}/s offered to each webhook (batches of 10) for ${r.windowSeconds} s per condition, ${r.rounds} round${r.rounds === 1 ? '' : 's'} after a 5 s warm-up; the delivery mapping as the stack's (local/webhooks.ts): pollers scaling as Lambda's, 5 batches at first and up to 300 more a minute, at most ${r.batchesAtOnce} at once in this run.`,
    '',
    '| 0 ms webhook | p50 ms | p99 ms | p99 ÷ alone | 5 s webhook delivered /s (until drained) | 0 ms webhook jobs received/delivery | 5 s webhook jobs received/delivery | its slowest 1 %: put back / mean ms to first hand-out / mean ms after it |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...r.conditions.flatMap((c, i) =>
      !c
        ? []
        : `| ${c.condition} | ${cell(c.p50Ms)} | ${cell(c.p99Ms)} | ${i ? Math.round((c.p99Ms / alone.p99Ms) * 10) / 10 : ''} | ${c.slowPerSecond ?? ''} | ${c.fastJobsReceivedPerDelivery ?? ''} | ${c.slowJobsReceivedPerDelivery ?? ''} | ${c.tail ?? ''} |`,
    ),
    '',
    verdict,
    ...(r.conditions[2] ? ['', `The first row beside is measured once the neighbour has run ${r.neighbourLeadSeconds} s (the mapping scaled to it); the last, from the moment it appears: the mapping then scales up while the 0 ms webhook's jobs wait, each added poller with a cold start, as Lambda's would. Shown, not judged.`] : []),
    '',
    `Latency is publish start to the receiver's request. Jobs received per delivery: 1, plus each time a job came back after being put back over its namespace's share (2 to 5 s later). The slow namespace needs ${Math.round((r.perSecond * SLOW_MS) / 1000)} jobs in flight${r.share < (r.perSecond * SLOW_MS) / 1000 ? `, more than its share of ${r.share}, so it keeps a backlog at the price of its rate` : ''}; its batches hold their pollers ${SLOW_MS / 1000} s each, and the 0 ms webhook's jobs, handed out first by the fair-queue rule, wait only when every poller is busy.`,
  ].join('\n');
}
