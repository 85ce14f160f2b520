/**
 * `npm test`: every jest project, in four lanes of jest runs at once so that most files run in parallel.
 *
 *   npm test                           the whole suite (what CI runs)
 *   npm test -- test/unit/foo.test.ts  any jest arguments: one plain jest run with them
 *
 * Four lanes at once, each one jest run whose global setups start the engines its files use, so
 * no file meets another lane's:
 *
 * - Lane 1: `unit`, `integration` and `infra`, `MSG_TEST_WORKERS` files at a time (default 2: most
 *   integration files wait on visibility timeouts, long polls and receivers, but the 2-core
 *   machine is CPU-bound with the other lanes beside: with 3 workers the load reached 12 and long
 *   polls answered 7 s late).
 * - Lane 2, one file at a time (lines prefixed with `[lane 2]`): the `serial` project (the
 *   sweeper's global tasks and lease: jest.config.cjs says why), on engines of its own (another
 *   DynamoDB Local and fauxqs), so nothing a serial file does reaches a file of another lane and no
 *   two of them overlap, and on those engines `waiting-serial` (waiting files whose assertions are
 *   counts: moved from lane 4 on 2026-12-02, when lane 4 ended at 1,658 s against 1,037 s); then the projects that start engines of their own (browser starts `npm
 *   start`, faults and simulation their own engines). Those are the CPU-heavy files (a JVM, a
 *   chromium, a workload of thousands of messages): one at a time they do not starve the
 *   timing-sensitive files of the other lanes.
 * - Lane 3, one file at a time (`[lane 3]`), on engines of its own: the `model` and
 *   `model-beside` projects, the `ticks` project (the integration files of the scheduler tick with
 *   future clocks: one at a time, a tick file acts on no file running), `docs` (its own `npm
 *   start`), `faults-beside` (fault files that inject into their own process only and mostly
 *   wait, on fault engines of this lane's own: jest.config.cjs) and `waiting-beside` (waiting
 *   files whose assertions are counts: 2026-12-02, lane 4 1,712 s against lane 3's 1,191 s).
 * - Lane 4, one file at a time (`[lane 4]`), on engines of its own: the `waiting` project, files
 *   that wait minutes on a clock (a dead endpoint's, the delivery queue's visibility, long polls,
 *   the next minute's rate window) with little CPU. A lane of its own since 2026-11-29, when a CI
 *   run with three lanes took 930 s (lane 1 888 s with 1,742 s of files on 2 workers, lane 2 805 s,
 *   lane 3 738 s): the suite's work had outgrown three lanes, and these files add waiting, not load.
 *
 * Rebalanced on 2026-11-29 after a CI run of 848 s (locally 776 s: lane 1 735 s with 1,444 s of
 * files, lane 2 664 s, lane 3 694 s, lane 4 528 s): dead-letter-once (130 s to about 70 s),
 * rate-limits-fanout and webhooks-dead-endpoint run their cases at once, and lane 4 took seven of
 * lane 1's waiting files (about 300 s of files). Lane 4 ran two files at a time for one day: the
 * extra process starved the CPU-heavy files of the other lanes (logs-keep-up 31 s to 159 s, a
 * ticks file 59 s to 312 s, the run past 900 s), so every lane but lane 1 is one file at a time
 * again. A calm local CI run then: lane 1 827 s, lane 2 790 s, lane 3 796 s, lane 4 724 s, which
 * moved two more files (about 77 s) from lane 1 to lane 4.
 *
 * Tried and undone on 2026-11-30: lane 4 two files at a time again, with 21 of lane 1's files
 * that spend under 12 % of their time on their own CPU (MSG_TEST_CPU_LOG, test/cpu-log.ts) and
 * faults-beside, browser in lane 3. The machine's cores were already 82 % busy on average with
 * these lanes (a sampler of /proc/stat): the extra overlap made every CPU-heavy file slower
 * (delays-long-fanout 188 s to 337 s, logs-keep-up 139 s to 205 s) and the run passed 1,050 s
 * against 925 s. What shortens the run now is less CPU work, not another arrangement.
 *
 * Rebalanced on 2026-12-01 after a local CI run of 943 s (lane 4 893 s, lane 2 843 s, lane 3 713 s,
 * lane 1 646 s): three of lane 4's files back to lane 1 and a fault file from lane 2 to lane 3
 * (jest.config.cjs says which).
 *
 * The lanes' CI times above are a CI run's (the 2-core machine, type-check and conformance beside)
 * and, for the split, an estimate from per-file durations
 * (`npx jest --selectProjects <p> --runInBand --json --outputFile=<f>`). When a file moves, keep
 * the lanes ending together: `npm test`'s last lines give each lane's time.
 *
 * Before the lanes it checks what the suite needs outside npm (bin/test-prerequisites.ts, the one
 * list README and .ci/run follow: Java 17 or later, Chromium or Chrome (or CHROMIUM_PATH), curl,
 * jq, openssl) and stops with one message naming what is missing and how to install it.
 * The exit status is 1 if any run failed; the last lines say how each lane ended and when.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { checkPrerequisites, missingMessage } from './test-prerequisites';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';

const jest = createRequire(import.meta.url).resolve('jest/bin/jest');
const args = process.argv.slice(2);

function run(argv: string[], prefix?: string, opts: { env?: NodeJS.ProcessEnv; nice?: number } = {}): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [jest, ...argv], { stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit', env: opts.env ?? process.env });
    // Before jest starts its workers and engines, which inherit it.
    if (opts.nice && child.pid !== undefined) setPriority(child.pid, Math.min(19, getPriority() + opts.nice));
    if (prefix) {
      for (const [from, to] of [
        [child.stdout!, process.stdout],
        [child.stderr!, process.stderr],
      ] as const) {
        createInterface({ input: from }).on('line', (line) => to.write(`${prefix} ${line}\n`));
      }
    }
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** What bin/test.ts reads of a jest `--json` report. */
type JestReport = {
  testResults: {
    name: string;
    startTime: number;
    endTime: number;
    status: string;
    message: string;
    assertionResults: { fullName: string; status: string; failureMessages: string[] }[];
  }[];
};

/**
 * The slowest files of a lane's jest run, from its `--json` report, as lines for the summary
 * (what balancing the lanes needs: a lane's time is mostly its few long files).
 */
function slowestFiles(reportFile: string, count = 8): string[] {
  try {
    const report = JSON.parse(readFileSync(reportFile, 'utf8')) as JestReport;
    const files = report.testResults.map((t) => ({ file: t.name.replace(`${process.cwd()}/`, ''), s: (t.endTime - t.startTime) / 1000 }));
    const total = files.reduce((n, f) => n + f.s, 0);
    return [`${files.length} files, ${Math.round(total)} s of files; slowest:`, ...files.sort((a, b) => b.s - a.s).slice(0, count).map((f) => `  ${f.s.toFixed(0).padStart(5)} s ${f.file}`)];
  } catch {
    return ['no jest report (the run ended before writing it)'];
  }
}

/**
 * The failed tests of a lane's jest run, from its `--json` report: each file, each failed test's
 * name and the first lines of its message (a file that failed outside its tests, a timeout in
 * beforeAll say, gives the file's own message). CI shows only the end of its log, after the
 * conformance suite's; `.ci/run` repeats these lines last (MSG_TEST_FAILURES names the file).
 */
function failedTests(reportFile: string, lines = 6): string[] {
  let report: JestReport;
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8')) as JestReport;
  } catch {
    return [`no jest report at ${reportFile}: the lane ended before writing it (see its own lines above)`];
  }
  const head = (text: string) => text.split('\n').filter((l) => l.trim()).slice(0, lines).map((l) => `      ${l.trim().slice(0, 240)}`);
  const out: string[] = [];
  for (const file of report.testResults.filter((t) => t.status === 'failed')) {
    out.push(`  ${file.name.replace(`${process.cwd()}/`, '')}`);
    const failed = file.assertionResults.filter((a) => a.status === 'failed');
    for (const a of failed) out.push(`    ✕ ${a.fullName}`, ...head(a.failureMessages.join('\n')));
    if (!failed.length) out.push(...head(file.message));
  }
  return out;
}

async function main(): Promise<number> {
  if (args.length) return run(args);
  // The whole suite needs Java, chromium, curl, jq and openssl: say at once what is missing, not in 11 failures.
  const missing = missingMessage(checkPrerequisites());
  if (missing) {
    process.stderr.write(`${missing}\n`);
    return 1;
  }
  const workers = process.env.MSG_TEST_WORKERS || '2';
  // --forceExit: a test that runs out of time can leave its servers and engines running (the
  // simulation's drain goes on after its timeout), and jest would then wait for them after its
  // summary until CI's own limit; the summary is printed before it exits.
  const runs = [
    { name: `unit, integration and infra (${workers} workers)`, argv: ['--selectProjects', 'unit', 'integration', 'infra', `--maxWorkers=${workers}`, '--forceExit'] },
    { name: 'serial, waiting-serial, faults, simulation and browser (one file at a time)', argv: ['--selectProjects', 'serial', 'waiting-serial', 'faults', 'simulation', 'browser', '--runInBand', '--forceExit'], prefix: '[lane 2]' },
    { name: 'model, ticks, docs, faults-beside and waiting-beside (one file at a time)', argv: ['--selectProjects', 'model', 'model-beside', 'ticks', 'docs', 'faults-beside', 'waiting-beside', '--runInBand', '--forceExit'], prefix: '[lane 3]' },
    { name: 'waiting (one file at a time)', argv: ['--selectProjects', 'waiting', '--runInBand', '--forceExit'], prefix: '[lane 4]', nice: 0 },
  ];
  // The whole suite on one machine: every wait and timeout at MSG_TEST_TIME_SCALE (2.5 unless set:
  // test/fixtures/time-scale.ts), and the lanes that compute below the waiting lane and whatever
  // runs beside npm test (CI's conformance suite): a file that waits on a clock gets the CPU
  // when its moment comes, the CPU-heavy files take the rest (nice 4: about 2.4 times less CPU
  // when both want it, CFS weights 423 against 1024).
  const env = { ...process.env, MSG_TEST_TIME_SCALE: process.env.MSG_TEST_TIME_SCALE || '2.5' };
  process.stdout.write(`==> npm test: ${runs.map((r) => r.name).join(' and, beside it, ')}\n`);
  const t0 = Date.now();
  // Each run also writes its jest report, for its slowest files in the summary; kept in
  // MSG_TEST_REPORT_DIR when set (each file's start and end: where the lanes' time went).
  const keep = process.env.MSG_TEST_REPORT_DIR;
  if (keep) mkdirSync(keep, { recursive: true });
  const reports = keep || mkdtempSync(join(tmpdir(), 'npm-test-'));
  const results = await Promise.all(
    runs.map(async (r, i) => {
      const report = join(reports, `lane-${i + 1}.json`);
      const code = await run([...r.argv, '--json', `--outputFile=${report}`], r.prefix, { env, nice: r.nice ?? 4 });
      const line = `${r.name}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} after ${Math.round((Date.now() - t0) / 1000)} s`;
      return { code, line, files: slowestFiles(report), failures: code === 0 ? [] : [`lane ${i + 1} (${r.name}):`, ...failedTests(report)] };
    }),
  );
  if (!keep) rmSync(reports, { recursive: true, force: true });
  for (const [i, r] of results.entries()) process.stdout.write(`==> npm test: lane ${i + 1}: ${r.line}\n${r.files.map((l) => `    ${l}\n`).join('')}`);
  const failed = results.some((r) => r.code !== 0);
  if (failed) {
    const failures = results.flatMap((r) => r.failures);
    process.stdout.write(`==> npm test: failed tests\n${failures.join('\n')}\n`);
    if (process.env.MSG_TEST_FAILURES) writeFileSync(process.env.MSG_TEST_FAILURES, `${failures.join('\n')}\n`);
    process.stdout.write('==> npm test: a run failed; rerun one file with `npm test -- <path>` (FC_SEED replays a model test)\n');
  }
  return failed ? 1 : 0;
}

main().then((code) => process.exit(code));
