/**
 * How a long poll of a stream or subscription waits for something new without reading its log's
 * head strongly every 200 ms (issue 23 item 5): see {@link waitForNews}.
 */
import { getHeadForPurge, pollHead, type LogHead, type LogRef } from './log-heads';
import { stableHorizon } from '../domain/log-horizon';
import { pollInterval, waitForArrival } from './log-arrivals';

/**
 * Waits until the log's stable horizon moves past `horizon` (or the deadline): woken at once by an
 * arrival published in this container, else by the container's shared poll read of the head
 * (storage/log-heads.ts `pollHead`: eventually consistent, one per log and container at a time),
 * every 200 ms for the first second of a long poll, every 500 ms until 5 s, then every second
 * (./log-arrivals.ts `pollInterval`). The log and the group are read again only then.
 *
 * A poll that shows no head is checked by a strongly consistent read before the wait ends as
 * 'gone': an eventually consistent read "may not reflect the results of a recently completed
 * write operation" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html),
 * so a log created within the last second can look absent, and its long poll would end at once.
 */
export async function waitForNews(ref: LogRef, horizon: number, started: number, deadline: number): Promise<'news' | 'timeout' | 'gone'> {
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return 'timeout';
    if (await waitForArrival(ref.id, Math.min(pollInterval(Date.now() - started), left))) return 'news';
    const polled = (await pollHead(ref)) ?? live(await getHeadForPurge(ref));
    if (!polled) return 'gone';
    if (stableHorizon(polled.pending, polled.next, Date.now()) > horizon) return 'news';
  }
}

/** A head read strongly, unless its log is deleted. */
const live = (head: LogHead | undefined) => (head && head.deleted_at === undefined ? head : undefined);
