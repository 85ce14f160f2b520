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
  // Every defect the simulation reached on 2026-11-27's main is fixed (docs/reliability.md).
  // These it still reaches on the merged head, under load (30-minute run, seeds 1 to 3, and CI):
  'rate-limit-after-change': { issue: 34, what: 'a lowered rate_limit is exceeded now and then from 4 s after the change under load (4 to 7 POSTs in one second at a new limit of 1 or 2; 18 at 10 once): jobs that waited in the function for their slot POST on the slot they read before the change' },
  'replay-never-delivered': { issue: 34, what: 'two bulk replays at once sometimes leave failed messages undelivered within the drain (6, 11 and 7 of them in three seeds of the 30-minute run): a claimed message whose job did not reach the receiver in time, cause not yet found' },
};
