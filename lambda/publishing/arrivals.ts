/**
 * Wake-ups for long polls in the same process: a publish announces the resources it wrote to, and
 * a waiting consume returns to its storage read at once instead of at its next poll. Across Lambda
 * containers there is no shared memory, so long polls also re-read storage on a short interval;
 * this only makes the common local case (and a warm container that served both) immediate.
 */
import { EventEmitter } from 'node:events';
import { waitedFor } from '../observability';

/** How often a waiting consume re-reads storage (wake-ups from other containers), at first. */
export const LONG_POLL_INTERVAL_MS = 200;
/** How often once it has waited {@link LONG_POLL_FAST_MS} without news. */
export const LONG_POLL_IDLE_INTERVAL_MS = 500;
export const LONG_POLL_FAST_MS = 1_000;

/**
 * The wait before a long poll's next storage read, after `waitedMs` without news: 200 ms for the
 * first second, then 500 ms. An idle poller reads its log's head about 2 times a second instead
 * of 5 (each read shared by the pollers of a container, publishing/arrivals `waitForArrival`
 * waking them at once for arrivals published there).
 * @example pollInterval(5_000) // 500
 */
export const pollInterval = (waitedMs: number) => (waitedMs < LONG_POLL_FAST_MS ? LONG_POLL_INTERVAL_MS : LONG_POLL_IDLE_INTERVAL_MS);

const bus = new EventEmitter();
bus.setMaxListeners(0);

export function announceArrival(resourceId: string): void {
  bus.emit(resourceId);
}

/**
 * Resolves after `ms` (false), or earlier when something arrives for `resourceId` (true). The time waited counts
 * as long-poll wait, not work, in the consume time metric (`waitedFor`).
 */
export function waitForArrival(resourceId: string, ms: number): Promise<boolean> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (arrived: boolean) => {
      clearTimeout(timer);
      bus.off(resourceId, onArrival);
      waitedFor(performance.now() - started);
      resolve(arrived);
    };
    const onArrival = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    bus.once(resourceId, onArrival);
  });
}
