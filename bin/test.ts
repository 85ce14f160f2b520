/**
 * `npm test`: every jest project, in three jest runs at once so that most files run in parallel.
 *
 *   npm test                           the whole suite (what CI runs)
 *   npm test -- test/unit/foo.test.ts  any jest arguments: one plain jest run with them
 *
 * - `unit`, `integration` and `infra`, `MSG_TEST_WORKERS` files at a time (default 2: most
 *   integration files wait on visibility timeouts, long polls and receivers, but the 2-core
 *   machine is CPU-bound with the other runs beside: with 3 workers, or a fourth run, the load
 *   reached 12 and long polls answered 7 s late. The files that wait minutes on a clock run one
 *   at a time in the third run instead).
 * - Beside it, one file at a time (lines prefixed with `[lane 2]`): the `serial` project
 *   (jest.config.cjs says which files and why: the scheduler tick and the sweeper act on every
 *   namespace), on engines of their own (its global setup starts another DynamoDB Local and
 *   fauxqs), so nothing a serial file does reaches a file of the other runs and no two of them
 *   overlap; then the projects that start engines of their
 *   own (docs and browser start `npm start`, faults and simulation their own engines). Those are the CPU-heavy
 *   files (a JVM, a chromium, a workload of thousands of messages): one at a time they do not
 *   starve the timing-sensitive files of the other run. The runs take about as long.
 * - A third run, one file at a time (`[lane 3]`): the `waiting` project (jest.config.cjs), files
 *   that wait minutes on a dead endpoint's clock with little CPU, and the `model` project, on
 *   engines of their own (about 4 and 2 minutes; the second run had both and took the longest).
 *
 * Before the runs it checks what the suite needs outside npm (bin/test-prerequisites.ts: Java 17,
 * chromium or CHROMIUM_PATH, curl, jq) and stops with one message naming what is missing.
 * The exit status is 1 if any run failed; the last lines say how each ended and how long it took.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { checkPrerequisites, missingMessage } from './test-prerequisites';

const jest = createRequire(import.meta.url).resolve('jest/bin/jest');
const args = process.argv.slice(2);

function run(argv: string[], prefix?: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [jest, ...argv], { stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
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

async function main(): Promise<number> {
  if (args.length) return run(args);
  // The whole suite needs Java, chromium, curl and jq: say at once what is missing, not in 11 failures.
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
    { name: 'serial, faults, simulation, docs and browser (one file at a time)', argv: ['--selectProjects', 'serial', 'faults', 'simulation', 'docs', 'browser', '--runInBand', '--forceExit'], prefix: '[lane 2]' },
    { name: 'waiting and model (one file at a time)', argv: ['--selectProjects', 'waiting', 'model', '--runInBand', '--forceExit'], prefix: '[lane 3]' },
  ];
  process.stdout.write(`==> npm test: ${runs.map((r) => r.name).join(' and, beside it, ')}\n`);
  const t0 = Date.now();
  const results = await Promise.all(
    runs.map(async (r) => {
      const code = await run(r.argv, r.prefix);
      return { code, line: `${r.name}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} after ${Math.round((Date.now() - t0) / 1000)} s` };
    }),
  );
  for (const r of results) process.stdout.write(`==> npm test: ${r.line}\n`);
  const failed = results.some((r) => r.code !== 0);
  if (failed) process.stdout.write('==> npm test: a run failed; rerun one file with `npm test -- <path>` (FC_SEED replays a model test)\n');
  return failed ? 1 : 0;
}

main().then((code) => process.exit(code));
