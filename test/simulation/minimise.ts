/**
 * Minimising a failure: replays of shorter plans (the failing step alone, then with its bursts
 * halved, down to a few requests) on the same seed, keeping the smallest that still shows the same
 * checker failing. Each replay is a whole run (setup, steps, drain, checks), so at most `budget`.
 */
import type { Action, Step } from './plan';
import { describeStep } from './plan';
import type { Violation } from './checkers';
import type { SimOptions, SimResult } from './run';

const halve = (a: Action): Action => {
  const h = (n: number, min: number) => Math.max(min, Math.floor(n / 2));
  switch (a.kind) {
    case 'stream-burst':
      return { ...a, n: h(a.n, 1) };
    case 'queue-publish':
      return { ...a, n: h(a.n, 1) };
    case 'queue-consume':
      return { ...a, consumers: h(a.consumers, 1) };
    case 'held':
      return { ...a, n: h(a.n, 1) };
    case 'poison':
      return { ...a, n: h(a.n, 1), consumers: h(a.consumers, 2) };
    case 'schedules':
    case 'webhook-publish':
    case 'replay':
      return { ...a, n: h(a.n, 1) };
    case 'fifo':
      return { ...a, n: h(a.n, 2), groups: h(a.groups, 1) };
    case 'stream-groups':
      return { ...a, groups: h(a.groups, 1), rounds: h(a.rounds, 1) };
    case 'subscribers':
      return { ...a, subscribers: h(a.subscribers, 1), rounds: h(a.rounds, 1) };
    case 'redrive':
      return { ...a, n: h(a.n, 1) };
    case 'young-queue':
      return { ...a, n: h(a.n, 1), consumers: h(a.consumers, 1) };
    case 'rate-change':
    case 'dead-endpoint':
      return a;
  }
};

export async function minimise(r: SimResult, v: Violation, run: (o: SimOptions) => Promise<SimResult>, log: (l: string) => void, budget = 5): Promise<string> {
  let best: Step[] = r.plan.filter((s) => s.index <= v.step);
  // Candidates: the failing step alone, then halved until a replay no longer fails.
  let candidate: Step[] = [{ index: 0, actions: r.plan[v.step].actions }];
  for (let i = 0; i < budget; i++) {
    log(`minimise: replay ${i + 1}: ${candidate.map(describeStep).join(' | ')}`);
    const replay = await run({ seed: r.seed, steps: candidate.length, plan: candidate });
    if (!replay.violations.some((x) => x.checker === v.checker)) break;
    best = candidate;
    candidate = candidate.map((s) => ({ ...s, actions: s.actions.map(halve) }));
  }
  return [
    `shortest history that still fails ${v.checker} (seed ${r.seed}):`,
    ...best.map((s) => `  ${describeStep(s)}`),
    `  replay: npm run simulate -- --seed ${r.seed} --plan '${JSON.stringify(best)}'`,
  ].join('\n');
}
