/**
 * `npm test`: every jest project, in three lanes of jest runs at once so that most files run in parallel.
 *
 *   npm test                           the whole suite (what CI runs)
 *   npm test -- test/unit/foo.test.ts  any jest arguments: one plain jest run with them
 *
 * Three lanes at once, each one or more jest runs one after another; a run's global setups start
 * the engines its files use, so no file meets another lane's:
 *
 * - Lane 1: `unit`, `integration` and `infra`, `MSG_TEST_WORKERS` files at a time (default 2: most
 *   integration files wait on visibility timeouts, long polls and receivers, but the 2-core
 *   machine is CPU-bound with the other lanes beside: with 3 workers, or a fourth lane, the load
 *   reached 12 and long polls answered 7 s late). About 960 s of a CI run.
 * - Lane 2, one file at a time (lines prefixed with `[lane 2]`): the `serial` project (the
 *   sweeper's global tasks and lease, the model tests of ticks and long delays: jest.config.cjs
 *   says why), on engines of its own (another DynamoDB Local and fauxqs), so nothing a serial
 *   file does reaches a file of another lane and no two of them overlap; then the projects that
 *   start engines of their own (docs and browser start `npm start`, faults and simulation their
 *   own engines). Those are the CPU-heavy files (a JVM, a chromium, a workload of thousands of
 *   messages): one at a time they do not starve the timing-sensitive files of the other lanes.
 *   About 1,110 s of a CI run before the `ticks` files moved to lane 3, about 830 s after.
 * - Lane 3, one file at a time (`[lane 3]`): the `waiting` project, files that wait minutes on a
 *   dead endpoint's clock with little CPU, and the `model` project (about 620 s of a CI run);
 *   then, in a jest run of its own (own engines again, so they act on no engines another file
 *   uses), the `ticks` project: the integration files of the scheduler tick with future clocks
 *   (about 280 s, moved from lane 2 to even the two out).
 *
 * The lanes' CI times above are a CI run's (the 2-core machine, type-check and conformance beside)
 * and an estimate from per-file durations (`npx jest --selectProjects <p> --runInBand --json`)
 * for the split; a lane's end is printed with its time. Keep the lanes ending together when a
 * file moves: every lane's time is on the last lines of `npm test`.
 *
 * The exit status is 1 if any run failed; the last lines say how each lane ended and when.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';

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
  const workers = process.env.MSG_TEST_WORKERS || '2';
  // --forceExit: a test that runs out of time can leave its servers and engines running (the
  // simulation's drain goes on after its timeout), and jest would then wait for them after its
  // summary until CI's own limit; the summary is printed before it exits.
  // A lane is one or more jest runs one after another (each with the global setups, so the
  // engines, of its own projects).
  const runs = [
    { name: `unit, integration and infra (${workers} workers)`, steps: [['--selectProjects', 'unit', 'integration', 'infra', `--maxWorkers=${workers}`, '--forceExit']] },
    { name: 'serial, faults, simulation, docs and browser (one file at a time)', steps: [['--selectProjects', 'serial', 'faults', 'simulation', 'docs', 'browser', '--runInBand', '--forceExit']], prefix: '[lane 2]' },
    {
      name: 'waiting and model, then ticks (one file at a time)',
      steps: [
        ['--selectProjects', 'waiting', 'model', '--runInBand', '--forceExit'],
        ['--selectProjects', 'ticks', '--runInBand', '--forceExit'],
      ],
      prefix: '[lane 3]',
    },
  ];
  process.stdout.write(`==> npm test: ${runs.map((r) => r.name).join(' and, beside it, ')}\n`);
  const t0 = Date.now();
  const results = await Promise.all(
    runs.map(async (r) => {
      let code = 0;
      // Every step runs even after one failed, so one CI run reports every failure.
      for (const argv of r.steps) code = (await run(argv, r.prefix)) || code;
      return { code, line: `${r.name}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} after ${Math.round((Date.now() - t0) / 1000)} s` };
    }),
  );
  for (const r of results) process.stdout.write(`==> npm test: ${r.line}\n`);
  const failed = results.some((r) => r.code !== 0);
  if (failed) process.stdout.write('==> npm test: a run failed; rerun one file with `npm test -- <path>` (FC_SEED replays a model test)\n');
  return failed ? 1 : 0;
}

main().then((code) => process.exit(code));
