/**
 * How a long poll of a stream or subscription waits for something new without reading its log's
 * head strongly every 200 ms (issue 23 item 5): see {@link waitForNews}.
 */
import { pollHead, type LogRef } from './log-heads';
import { stableHorizon } from '../domain/log-horizon';
import { pollInterval, waitForArrival } from './log-arrivals';

/**
 * Waits until the log's stable horizon moves past `horizon` (or the deadline): woken at once by an
 * arrival published in this container, else by the container's shared poll read of the head
 * (storage/log-heads.ts `pollHead`: eventually consistent, one per log and container at a time),
 * every 200 ms for the first second of a long poll, every 500 ms until 5 s, then every second
 * (./log-arrivals.ts `pollInterval`). The log and the group are read again only then.
 */
export async function waitForNews(ref: LogRef, horizon: number, started: number, deadline: number): Promise<'news' | 'timeout' | 'gone'> {
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return 'timeout';
    if (await waitForArrival(ref.id, Math.min(pollInterval(Date.now() - started), left))) return 'news';
    const polled = await pollHead(ref);
    if (!polled) return 'gone';
    if (stableHorizon(polled.pending, polled.next, Date.now()) > horizon) return 'news';
  }
}
