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
  'stream-201-missing': { issue: 32, what: 'a reservation refused at the in-flight limit reads its missing token as "stream deleted": 201 without the message (log-reservations ownReservation)' },
  'stream-read-your-writes': { issue: 32, what: 'a 201 message of a burst is not readable right after it (same cause as stream-201-missing)' },
  'subscription-201-missing': { issue: 32, what: 'the subscription of the same burst misses 201 messages (same cause)' },
  'subscription-read-your-writes': { issue: 32, what: 'the subscription misses 201 messages right after the burst (same cause)' },
  'dead-lettered-more-than-once': { issue: 33, what: 'a settle slower than the visibility dead-letters a message again (SQS deletes nothing with a stale handle)' },
  'held-count-after-reconcile': { issue: 33, what: 'the quiet-queue reconciliation sets message_count from SQS, which does not hold held messages' },
  'held-count-after-cancel': { issue: 33, what: 'a cancel after the reconciliation drives message_count below the truth' },
  'schedule-run-missing': { issue: 35, what: 'runs of schedules due in one tick are refused or lost and never retried' },
  'schedule-run-refused': { issue: 35, what: 'a retryable refusal (SERVICE_UNAVAILABLE) is recorded as the run\'s error and never retried' },
  'dead-endpoint-not-disabled': { issue: 34, what: 'a dead endpoint under steady traffic is never disabled: the open circuit hands its probe to any attempt, no delivery collects its retries' },
  'replay-delivered-twice': { issue: 34, what: 'two bulk replays at once POST every failed message twice' },
  'replay-post-after-2xx': { issue: 34, what: 'the second of two bulk replays POSTs a message after the endpoint answered it 2xx' },
  'rate-limit-after-change': { issue: 34, what: 'a lowered rate_limit does not apply to the slots already reserved: the old rate goes on after the change' },
};
