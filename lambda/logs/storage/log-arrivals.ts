/**
 * Wake-ups for long polls in the same process: an append to a log (lambda/streams/storage/stream-log.ts,
 * lambda/subscriptions/storage/subscription-log.ts) announces the log it wrote to, and a waiting consume (./log-waits.ts)
 * returns to its storage read at once instead of at its next poll. Across Lambda containers there
 * is no shared memory, so long polls also re-read storage on a short interval; this only makes the
 * common local case (and a warm container that served both) immediate. Beside the appends and the
 * wait in storage/, so that storage imports nothing above it.
 */
import { EventEmitter } from 'node:events';
import { waitedFor } from '../../core/observability';

/** How often a waiting consume re-reads storage (wake-ups from other containers), at first. */
const LONG_POLL_INTERVAL_MS = 200;
/** How often once it has waited {@link LONG_POLL_FAST_MS} without news. */
const LONG_POLL_IDLE_INTERVAL_MS = 500;
const LONG_POLL_FAST_MS = 1_000;
/** How often once it has waited {@link LONG_POLL_SLOW_MS} without news: an idle log. */
const LONG_POLL_SLOW_INTERVAL_MS = 1_000;
const LONG_POLL_SLOW_MS = 5_000;

/**
 * The wait before a long poll's next storage read, after `waitedMs` without news: 200 ms for the
 * first second, 500 ms until 5 s, then 1 s. A poller of an idle log reads its head about 1.3 times
 * a second over a 25 s wait instead of 5 (in Lambda each waiting poll holds its own container, so
 * nothing shares these reads there; `watchArrivals` wakes pollers of this process at once for
 * arrivals published in it). An arrival on a log idle for 5 s reaches a poller in another
 * container within about 1 s.
 * @example pollInterval(6_000) // 1000
 */
export const pollInterval = (waitedMs: number) =>
  waitedMs < LONG_POLL_FAST_MS ? LONG_POLL_INTERVAL_MS : waitedMs < LONG_POLL_SLOW_MS ? LONG_POLL_IDLE_INTERVAL_MS : LONG_POLL_SLOW_INTERVAL_MS;

const bus = new EventEmitter();
bus.setMaxListeners(0);

export function announceArrival(resourceId: string): void {
  bus.emit(resourceId);
}

/** The arrivals of one log a consume waits on, from its first read of the log to its answer. */
export interface ArrivalWatch {
  /**
   * Resolves after `ms` (false), or earlier when something arrives (true): at once when something
   * arrived since the watch began or since the last wait returned, while the consume was reading.
   * The time waited counts as long-poll wait, not work, in the consume time metric (`waitedFor`).
   */
  wait(ms: number): Promise<boolean>;
  /** Stops listening; the consume calls it when it answers. */
  close(): void;
}

/**
 * Watches `resourceId` for arrivals. A consume starts watching before its first read of the log
 * and keeps the watch across its reads: an arrival announced while it reads (its first read,
 * a batch read after news) wakes its next wait at once, where a listener added only for each wait
 * would miss it and leave the consume to the polls, a second or more later (./log-waits.ts).
 */
export function watchArrivals(resourceId: string): ArrivalWatch {
  let arrived = false;
  let wake: (() => void) | undefined;
  const onArrival = () => {
    arrived = true;
    wake?.();
  };
  bus.on(resourceId, onArrival);
  return {
    async wait(ms) {
      const started = performance.now();
      const news = await new Promise<boolean>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          wake = undefined;
          const got = arrived;
          arrived = false;
          resolve(got);
        };
        const timer = setTimeout(done, arrived ? 0 : ms);
        wake = done;
      });
      // Reported here, in the consume's own async context: `done` runs in the announcing
      // publish's when an arrival wakes the wait, where the report would reach no consume.
      waitedFor(performance.now() - started);
      return news;
    },
    close: () => void bus.off(resourceId, onArrival),
  };
}
