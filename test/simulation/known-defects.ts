/**
 * Violations the simulation reaches on the code as it is, each an open issue. The jest run
 * (./simulation.test.ts) fails on any violation not listed here and reports the listed ones as
 * known; `npm run simulate` reports all. Remove an entry with the fix that closes it: the
 * simulation then guards it.
 */
export interface KnownDefect {
  issue: number;
  what: string;
}

export const KNOWN_DEFECTS: Record<string, KnownDefect> = {
  // Every defect the simulation reached on 2026-11-27's main is fixed (docs/design/0014-whole-service-simulation.md).
  // These it still reaches on the merged head, under load (30-minute run, seeds 1 to 3, and CI):
  // (`rate-limit-after-change` was fixed in part: the reads before a rate-limited POST are made before its
  // slot, lambda/webhooks/rate-slot.ts; seed 4 with 3 steps reached it on the code before, and not
  // in four runs after, nor seeds 1 to 3 with 12 steps.)
  // replay-delivered-twice and replay-post-after-2xx are fixed (2026-11-29): copies of a replay job in one batch, in two
  // invocations at once, and a bulk replay sent again after a lost answer now make one POST (docs/design/0014-whole-service-simulation.md).
  // replay-never-delivered is fixed (2026-11-29): parked replays and first attempts go on after a failed release,
  // take or ticket (docs/design/0014-whole-service-simulation.md); three runs of five replay steps at 2, 5 and 10 % faults after.
  // Reached again in CI with eventually consistent reads emulated, and fixed (2026-11-29): a bulk replay right after the
  // status counted the failures found no log page (read eventually consistently, or not yet written); six runs of the seed after.
  // held-count-after-reconcile and held-count-after-cancel are fixed (2026-11-29): held writes apply once (docs/design/0014-whole-service-simulation.md).
  // Traced on 2026-11-29 (docs/design/0014-whole-service-simulation.md): not reached locally in four runs of seed 20261127
  // before the fixes of a late wake and of copies of one slot (lambda/webhooks/endpoint-limits.ts) nor after; the entry stays until a CI run confirms.
  'rate-limit-after-change': { issue: 34, what: 'reached by the CI run of 2026-11-29 on the merged head (seed 20261127, step 1, both tries: 4 POSTs in one second from 4 s after rate_limit was lowered to 1, against a bound of rate_limit + 1). Not reached locally since (logs: one numbering from the change, every POST within 180 ms of its slot, no slot POSTed twice). Ruled out: eventually consistent reads (every read on the rate path is strongly consistent or an UpdateItem\'s answer). Fixed: a job whose wait for its slot ended late (a stalled process) went in it, beside the next slots\' requests; two SQS copies of a waiting job carrying one slot, in two batches, both went in it (now claimed). Still possible: arrivals bunched by a stall of the process the receiver shares with the service (requests sent on time, measured late)' },
};
