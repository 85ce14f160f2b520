/**
 * The simulation of the whole service (docs/design/0014-whole-service-simulation.md) at a fixed
 * seed inside `npm test`: every actor at once for a few steps, bursts of up to 300 requests, faults
 * and latency on the SDK clients, then the drain and every checker (./run.ts). Fails on a violation
 * that is not a known open defect (./known-defects.ts) and prints the known ones with their issue.
 *
 * The workload: 3 steps (the fewest that reach every actor, ./plan.ts), a first stream burst of
 * 200 publishes (above a log's 128 reservations in flight) beside 130 schedule creates, the newer
 * actors at a quarter of their size, 2 % faults and latency throughout. Most of its CPU is the
 * service's SDK calls, and a third of those are the timers (the sweeper every 2 s and the tick
 * every 5 s, as `npm start` runs them), so waiting costs CPU too: the waits poll no faster than
 * what they wait for needs (read-your-writes every 3 s up to its bound, the dead endpoint's
 * traffic until it is disabled).
 *
 * SIM_SEED=<n> SIM_STEPS=<n> SIM_BURST=<n> replay another history; `npm run simulate` runs longer ones.
 */
import { KNOWN_DEFECTS } from './known-defects';

// One more run when the first fails: the seed fixes the plan, not how concurrent requests
// interleave, so a rare violation may come on one run and not the next. Both runs' violations
// are printed (a defect that holds fails both); a one-off is a finding to list, not a red CI.
jest.retryTimes(1, { logErrorsBeforeRetry: true });
jest.setTimeout(480_000); // about 100 s on an idle 2-core machine; a loaded CI run took 240 s and more

const seed = Number(process.env.SIM_SEED) || 20261127;
const steps = Number(process.env.SIM_STEPS) || 3;
/** Bursts of up to 200 requests (above a log's 128 in flight) keep the run within ~100 s on 2 cores. */
const maxBurst = Number(process.env.SIM_BURST) || 200;
/** The newer actors (ordered queues, stream groups, subscribers, redrive, young queues) at a quarter of their size. */
const scale = Number(process.env.SIM_SCALE) || 0.25;

it(`finds no violation beyond the known defects (seed ${seed}, ${steps} steps)`, async () => {
  // After the environment (jest's setupFiles): the handlers read it when they load.
  const { runSimulation, describeViolation } = await import('./run');
  const r = await runSimulation({ seed, steps, maxBurst, scale, log: (l) => process.stdout.write(`simulation: ${l}\n`) });
  const lines = [
    `simulation: seed ${seed}: ${r.stepsRun} steps, ${r.requests} requests in ${r.seconds.steps.toFixed(0)} s of steps, ${r.seconds.total.toFixed(0)} s in all`,
    ...r.violations.map((v) => describeViolation(r, v)),
    ...Object.keys(KNOWN_DEFECTS)
      .filter((c) => !r.violations.some((v) => v.checker === c))
      .map((c) => `simulation: known defect ${c} (issue ${KNOWN_DEFECTS[c].issue}) not reached by this seed`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  expect(r.stepsRun).toBe(steps);
  expect(r.violations.filter((v) => !v.known).map((v) => describeViolation(r, v))).toEqual([]);
});
