/**
 * `npm run simulate`: the simulation of the whole service (test/simulation/) on engines of its own.
 *
 *   npm run simulate                               one run of the default seed, 12 steps
 *   npm run simulate -- --seed 7 --steps 30        another seed, more steps
 *   npm run simulate -- --minutes 30 --seed 7      runs of seeds 7, 8, 9, ... for 30 minutes
 *   npm run simulate -- --seed 7 --minimise        also replays a new violation with shorter plans
 *   npm run simulate -- --seed 7 --plan '<json>'   runs the plan a minimisation printed
 *
 *   SIM_LOG_LEVEL=WARN npm run simulate -- ...     also prints the service's own logs (WARN and up)
 *
 * Prints a progress line per step, then every violation (known ones with their issue, new ones
 * with the seed, the step and the history to replay). Exits 1 when a violation is not in
 * test/simulation/known-defects.ts.
 */
import { parseArgs } from 'node:util';
import { startEngines } from '../test/simulation/engines';

const USAGE = `npm run simulate -- [options]
  --seed N          the first seed (default 1)
  --steps N         steps per run (default 12)
  --minutes N       runs of seeds N, N+1, ... for this many minutes
  --burst N         most requests of one burst (default 300)
  --faults F        share of storage and queue calls that fail (default 0.02)
  --minimise        replay a new violation with shorter plans
  --plan '<json>'   run the plan a minimisation printed
  --json            print the result as JSON
  --help            this text
SIM_LOG_LEVEL=WARN also prints the service's own logs.`;

function options() {
  try {
    return parseArgs({
      options: {
        seed: { type: 'string' },
        steps: { type: 'string' },
        minutes: { type: 'string' },
        burst: { type: 'string' },
        faults: { type: 'string' },
        minimise: { type: 'boolean' },
        json: { type: 'boolean' },
        plan: { type: 'string' },
        help: { type: 'boolean' },
      },
    }).values;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
}
const values = options();
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const say = (l: string) => process.stdout.write(`${l}\n`);

async function main(): Promise<number> {
  const seed0 = values.seed ? Number(values.seed) : 1;
  const minutes = values.minutes ? Number(values.minutes) : undefined;
  const steps = values.steps ? Number(values.steps) : minutes ? Math.ceil(minutes * 60) : 12;
  const engines = await startEngines();
  const { runSimulation, describeViolation } = await import('../test/simulation/run');
  const { minimise } = await import('../test/simulation/minimise');
  const until = minutes ? Date.now() + minutes * 60_000 : 0;
  let unlisted = 0;
  const totals = { runs: 0, steps: 0, requests: 0, stepSeconds: 0 };
  const firstSeen: Record<string, string> = {};
  try {
    for (let seed = seed0; ; seed++) {
      // Each run of a long session takes up to 10 minutes of steps; the session ends at `minutes`.
      const left = until ? (until - Date.now()) / 60_000 : undefined;
      const r = await runSimulation({
        seed,
        steps,
        minutes: left === undefined ? undefined : Math.min(10, left),
        maxBurst: values.burst ? Number(values.burst) : 300,
        faultShare: values.faults ? Number(values.faults) : 0.02,
        ...(values.plan ? { plan: JSON.parse(values.plan) } : {}),
        log: (l) => say(`[seed ${seed}] ${l}`),
      });
      totals.runs++;
      totals.steps += r.stepsRun;
      totals.requests += r.requests;
      totals.stepSeconds += r.seconds.steps;
      say(`[seed ${seed}] ${r.stepsRun} steps, ${r.requests} requests in ${r.seconds.steps.toFixed(0)} s of steps (${r.seconds.total.toFixed(0)} s with the drain); answers ${JSON.stringify(r.tally)}`);
      for (const [c, step] of Object.entries(r.firstSeen)) firstSeen[c] ??= `seed ${seed} step ${step}`;
      for (const v of r.violations) {
        say(describeViolation(r, v));
        if (!v.known) {
          unlisted++;
          if (values.minimise) say(await minimise(r, v, runSimulation, say));
        }
      }
      if (values.json) say(JSON.stringify({ seed, firstSeen: r.firstSeen, sdk: r.sdk }));
      if (!until || Date.now() >= until - 60_000) break;
    }
  } finally {
    await engines.stop();
  }
  const perMin = (n: number) => ((n / totals.stepSeconds) * 60).toFixed(1);
  say(`simulate: ${totals.runs} runs, ${totals.steps} steps, ${totals.requests} requests; ${perMin(totals.steps)} steps and ${perMin(totals.requests)} requests per minute of steps`);
  for (const [c, at] of Object.entries(firstSeen)) say(`simulate: ${c} first at ${at}`);
  say(`simulate: ${unlisted ? `${unlisted} violations not in test/simulation/known-defects.ts` : 'no violation beyond the known defects'}`);
  return unlisted ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`simulate failed: ${(e as Error).stack}\n`);
    process.exit(2);
  },
);
