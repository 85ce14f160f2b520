/**
 * The fault suite's rows in docs/design/0012-fault-injection-suite.md, made from the figures a run prints (scenario.ts):
 * `MSG_WRITE_FIGURES=1 FAULT_SEED=<n> npm run test:faults` replaces (or adds) the rows of its
 * seeds in the `faults` section of docs/figures.json and re-renders the docs (bench/figures.ts).
 * Plain code, no engines: test/unit/fault-figure-rows.test.ts checks the format.
 */
import { readFigures, today, writeSection } from '../../bench/figures';

const RUN_HEADER = '| run | seed | SDK calls | attempts failed (before / after) | calls failed | requests answered | time |';
const RUN_SEPARATOR = '|---|---:|---|---|---|---|---:|';
const OUTCOME_HEADER =
  '| run | seed | answered 201 | lost: queue / webhook / stream / subscription | got only after the sweeper (held back): stream group / subscriber | duplicates: delivered after ack (of them SQS copies) / webhook POSTs after a 2xx (of them delivery-job copies) / stored twice by a retried publish | queue `message_count` off the truth before → after the sweeper | stream / subscription / webhook success counters off the truth before the sweeper |';
const OUTCOME_SEPARATOR = '|---|---:|---:|---|---|---|---|---|';

type Per<T = number> = { dynamodb: T; sqs: T; sfn: T };
/** The part of scenario.ts's figures the rows show. */
export interface RunFigures {
  seed: number;
  seconds: { total: number };
  sdk: { calls: Per; attemptsFailed: number; attemptsFailedBy: Record<string, number>; callsFailedAfterSdkRetries: Per };
  answers: Record<string, number>;
  messages: { answered201: number; lost: Record<string, number> };
  duplicates: { queueAfterAck: number; queueAfterAckFromCopies: number; webhookAfterSuccess: number; webhookAfterSuccessFromJobCopies: number; retriedPublishes: number };
  counters: {
    queue: { before: number; after: number; truth: number };
    stream: { before: number; truth: number };
    subscription: { before: number; truth: number };
    webhook: { success: number; truthSuccess: number };
  };
  heldBackUntilTheSweeper: { subscriber: number; streamGroup: number };
}

const n = (v: number) => v.toLocaleString('en-US');
const signed = (v: number) => (v > 0 ? `+${n(v)}` : n(v));
const per = (p: Per) => `${n(p.dynamodb)} / ${n(p.sqs)} / ${n(p.sfn)}`;

/** The run's two rows: what was injected and answered, then what reached each reader. */
export function faultRows(label: string, f: RunFigures): [string, string] {
  const timing = (t: string) => Object.entries(f.sdk.attemptsFailedBy).filter(([k]) => k.split(' ')[1] === t).reduce((a, [, v]) => a + v, 0);
  const answered = (test: (status: string) => boolean) => Object.entries(f.answers).filter(([k]) => test(k.split(' ')[0])).reduce((a, [, v]) => a + v, 0);
  const ok = answered((s) => s.startsWith('2'));
  const client = answered((s) => s.startsWith('4'));
  const e500 = answered((s) => s === '500');
  const e503 = answered((s) => s === '503');
  const lost = (k: string) => n(f.messages.lost[k] ?? 0);
  const d = f.duplicates;
  const c = f.counters;
  return [
    `| ${label} | ${f.seed} | ${per(f.sdk.calls)} | ${n(f.sdk.attemptsFailed)} (${n(timing('before'))} / ${n(timing('after'))}) | ${per(f.sdk.callsFailedAfterSdkRetries)} | ${n(ok + client + e500 + e503)}: ${n(ok)} 2xx, ${n(client)} 4xx, ${n(e500)} 500, ${n(e503)} 503 | ${Math.round(f.seconds.total)} s |`,
    `| ${label} | ${f.seed} | ${n(f.messages.answered201)} | ${lost('queue')} / ${lost('webhook')} / ${lost('stream')} / ${lost('subscriptionStored')} | ${n(f.heldBackUntilTheSweeper.streamGroup)} / ${n(f.heldBackUntilTheSweeper.subscriber)} | ${n(d.queueAfterAck)} (${n(d.queueAfterAckFromCopies)}) / ${n(d.webhookAfterSuccess)} (${n(d.webhookAfterSuccessFromJobCopies)}) / ${n(d.retriedPublishes)} | ${n(c.queue.before - c.queue.truth)} → ${n(c.queue.after - c.queue.truth)} | ${signed(c.stream.before - c.stream.truth)} / ${signed(c.subscription.before - c.subscription.truth)} / ${signed(c.webhook.success - c.webhook.truthSuccess)} |`,
  ];
}

/** The section's two tables with these rows in place of the rows of the same run and seed. */
export function withRows(markdown: string, rows: [string, string]): string {
  const key = (row: string) => row.split(' | ').slice(0, 2).join(' | ');
  const tables = markdown.trim().split(/\n\s*\n/);
  const body = (i: number, header: string) => (tables[i]?.startsWith(header) ? tables[i].split('\n').slice(2) : []);
  // In place when the run and seed have a row already, else at the end.
  const put = (existing: string[], row: string) => (existing.some((r) => key(r) === key(row)) ? existing.map((r) => (key(r) === key(row) ? row : r)) : [...existing, row]);
  return [[RUN_HEADER, RUN_SEPARATOR, ...put(body(0, RUN_HEADER), rows[0])].join('\n'), [OUTCOME_HEADER, OUTCOME_SEPARATOR, ...put(body(1, OUTCOME_HEADER), rows[1])].join('\n')].join('\n\n');
}

/** With MSG_WRITE_FIGURES=1: stores the run's rows (docs/figures.json, section `faults`). */
export function recordRun(label: string, f: RunFigures, root: string): void {
  if (process.env.MSG_WRITE_FIGURES !== '1') return;
  const previous = readFigures(root).sections.faults;
  writeSection(
    'faults',
    {
      command: 'MSG_WRITE_FIGURES=1 FAULT_SEED=<seed> [FAULT_MESSAGES=<n>] npm run test:faults, one run per seed',
      measured: today(),
      environment: previous?.environment ?? 'every check passed in every run',
      source: 'test/faults/figure-rows.ts',
      markdown: withRows(previous?.markdown ?? '', faultRows(label, f)),
    },
    root,
  );
}
