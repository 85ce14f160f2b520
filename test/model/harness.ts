/**
 * A small harness for model-based tests (fast-check `commands` + `asyncModelRun`) against the local
 * engines: one place for the seed and run count (FC_SEED, FC_RUNS, FC_COMMANDS), for printing a
 * failure's seed, path and shrunk command list, and for timing helpers. Reusable by any model
 * test (queues today; streams and subscriptions may follow).
 *
 *   FC_SEED=1234 npm test -- test/model/queues.model.test.ts    # replay a failure's run
 *   FC_RUNS=50 FC_COMMANDS=40 npm test -- test/model/...        # run more and longer
 *   FC_PATH=3:1:0 (with FC_SEED)                                # replay exactly the shrunk case
 */
import fc from 'fast-check';
import { scaled } from '../fixtures/time-scale';

export interface ModelRunOptions {
  /** Runs when FC_RUNS is not set (keep `npm test` bounded). */
  runs: number;
  /** Commands per run at most, when FC_COMMANDS is not set. */
  maxCommands: number;
  /** Seed when FC_SEED is not set: a fixed one, so `npm test` is reproducible. */
  seed: number;
  /** Added to the seed (FC_SEED or the default): several model tests of one file get their own sequences. */
  seedOffset?: number;
  /** Stop (and fail, if a failure is being shrunk) after this long: shrinking re-runs real sequences. */
  timeLimitMs?: number;
}

const int = (v: string | undefined) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Math.trunc(Number(v)) : undefined);

/** The run settings after FC_SEED / FC_RUNS / FC_COMMANDS / FC_PATH. */
function modelSettings(defaults: ModelRunOptions) {
  return {
    seed: (int(process.env.FC_SEED) ?? defaults.seed) + (defaults.seedOffset ?? 0),
    runs: int(process.env.FC_RUNS) ?? defaults.runs,
    maxCommands: int(process.env.FC_COMMANDS) ?? defaults.maxCommands,
    path: process.env.FC_PATH || undefined,
  };
}

/** A time budget for a jest test: `perCommandMs` per command of every run, plus `fixedMs` per run. */
export const modelTimeout = (defaults: ModelRunOptions, perCommandMs: number, fixedMs: number) => {
  const s = modelSettings(defaults);
  return s.runs * (s.maxCommands * perCommandMs + fixedMs) + 30_000;
};

/**
 * Runs `commands` sequences against a fresh (model, real) pair from `setup` for each run, then
 * `finish` (final invariants after the run, e.g. draining the queue). A failure throws an error
 * whose message carries the seed, the path and the shrunk command list (fast-check's report),
 * also written to stderr so that it shows above jest's own output.
 */
export async function runModel<M extends object, R>(
  name: string,
  defaults: ModelRunOptions,
  commands: fc.Arbitrary<fc.AsyncCommand<M, R>>[],
  setup: () => Promise<{ model: M; real: R }>,
  finish: (model: M, real: R) => Promise<void>,
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<{ runs: number; commands: number }> {
  const s = modelSettings(defaults);
  let ran = 0;
  let executed = 0;
  // At least a few commands per run: an empty sequence checks nothing and costs a whole setup.
  const atLeast = Math.min(3, s.maxCommands);
  const sequences = fc.commands(commands, { maxCommands: s.maxCommands, size: 'max' }).filter((cmds) => [...cmds].length >= atLeast);
  const property = fc.asyncProperty(sequences, async (cmds) => {
    ran++;
    const env = await setup();
    await fc.asyncModelRun(() => env, cmds);
    executed += [...cmds].length;
    await finish(env.model, env.real);
  });
  log(`${name}: seed ${s.seed}, ${s.runs} run(s) of at most ${s.maxCommands} commands (FC_SEED / FC_RUNS / FC_COMMANDS to change)`);
  const details = await fc.check(property, {
    seed: s.seed,
    numRuns: s.runs,
    ...(s.path ? { path: s.path } : {}),
    ...(defaults.timeLimitMs ? { interruptAfterTimeLimit: defaults.timeLimitMs, markInterruptAsFailure: false } : {}),
  });
  if (details.failed) {
    // The failing invariant's own message (fast-check's report may leave it out).
    const cause = (details as { errorInstance?: unknown }).errorInstance;
    const why = cause instanceof Error ? cause.message : cause !== undefined ? String(cause) : '';
    const report = `${fc.defaultReportMessage(details) ?? 'failed'}${why && !(fc.defaultReportMessage(details) ?? '').includes(why) ? `\nFailing invariant: ${why}` : ''}`;
    const replay = `replay: FC_SEED=${details.seed - (defaults.seedOffset ?? 0)} FC_PATH=${details.counterexamplePath ?? ''} npm test -- <this file>`;
    log(`${name} FAILED\n${report}\n${replay}`);
    throw new Error(`${name}: model check failed (seed ${details.seed}, path ${details.counterexamplePath})\n${report}\n${replay}`);
  }
  log(`${name}: ${ran} run(s), ${executed} commands generated (those whose precondition failed are skipped), all invariants held`);
  return { runs: ran, commands: executed };
}

/** Polls `probe` until it returns something other than undefined (never a fixed sleep for an outcome). */
export async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + scaled(timeoutMs);
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
