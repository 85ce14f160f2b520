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
  // rate-limit-after-change is fixed (2026-11-29): a late wake re-reserves and copies of one slot are claimed
  // (lambda/webhooks/endpoint-limits.ts); not reached in four CI runs of the merged head nor locally since.
};
