/**
 * Wake-ups for long polls in the same process: a publish announces the resources it wrote to, and
 * a waiting consume returns to its storage read at once instead of at its next poll. Across Lambda
 * containers there is no shared memory, so long polls also re-read storage on a short interval;
 * this only makes the common local case (and a warm container that served both) immediate.
 */
import { EventEmitter } from 'node:events';
import { waitedFor } from '../observability';

/** How often a waiting consume re-reads storage (wake-ups from other containers). */
export const LONG_POLL_INTERVAL_MS = 200;

const bus = new EventEmitter();
bus.setMaxListeners(0);

export function announceArrival(resourceId: string): void {
  bus.emit(resourceId);
}

/**
 * Resolves after `ms`, or earlier when something arrives for `resourceId`. The time waited counts
 * as long-poll wait, not work, in the consume time metric (`waitedFor`).
 */
export function waitForArrival(resourceId: string, ms: number): Promise<void> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      bus.off(resourceId, done);
      waitedFor(performance.now() - started);
      resolve();
    };
    const timer = setTimeout(done, ms);
    bus.once(resourceId, done);
  });
}
