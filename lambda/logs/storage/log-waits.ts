/**
 * How a long poll of a stream or subscription waits for something new without reading its log's
 * head strongly every 200 ms: see {@link waitForNews}.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getHead, getHeadForPurge, pollHead, type LogHead, type LogRef } from './log-heads';
import { ddb, tableName } from '../../core/storage/client';
import { metaKeys } from '../../core/storage/keys';
import { recordSk, tokenRun } from '../rules/log-records';
import { PENDING_SETTLE_MS, stableHorizon, tokenTime } from '../rules/log-horizon';
import { pollInterval, watchArrivals, type ArrivalWatch } from './log-arrivals';

/**
 * Waits until the log may show something past `seen` (the head as the last strong read saw it,
 * lambda/logs/storage/log-heads.ts `getHead`, its `pending` holding the blocks in flight), or the deadline:
 * woken at once by an arrival published in this container (`arrivals`, watched since the consume's
 * first read of the log, so one announced while it read is not missed), else by eventually consistent polls
 * every 200 ms for the first second of a long poll, every 500 ms until 5 s, then every second
 * (./log-arrivals.ts `pollInterval`). The log and the group are read again only on news.
 *
 * A poll reads the head (lambda/logs/storage/log-heads.ts `pollHead`, shared per container), and, while a
 * block in flight holds readers back, the one reservation record that would release it
 * ({@link pollRecord}); never the records' Query. The head item alone no longer holds the blocks
 * in flight (./log-records.ts), so its horizon says nothing: news is what can move the horizon
 * past the strong read's:
 * - nothing in flight: a new reservation (the head's `seq` or `next` grew);
 * - a block in flight: its first reservation's record written, the watermark moved, a block
 *   old enough to be passed (lambda/logs/rules/log-horizon.ts `PENDING_SETTLE_MS`), or a pending entry of
 *   the head's own (reservations before 2026-11-29) cleared.
 * Every comparison is "grew": a stale eventually consistent read only shows less, so it delays
 * news to the next poll at worst, never makes a false one.
 *
 * A poll that shows no head is checked by a strongly consistent read before the wait ends as
 * 'gone': an eventually consistent read "may not reflect the results of a recently completed
 * write operation" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html),
 * so a log created within the last second can look absent, and its long poll would end at once.
 * `abortSignal` (the consume's answer deadline) ends that strong read, the SDK's retries included;
 * the polls, shared by the long polls of the container, are bounded by `deadline` only.
 */
export async function waitForNews(ref: LogRef, seen: LogHead, started: number, deadline: number, arrivals: ArrivalWatch, abortSignal?: AbortSignal): Promise<'news' | 'timeout' | 'gone'> {
  const horizon = stableHorizon(seen.pending, seen.next, Date.now());
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) return 'timeout';
    if (await arrivals.wait(Math.min(pollInterval(Date.now() - started), left))) return 'news';
    const polled = (await pollHead(ref)) ?? live(await getHeadForPurge(ref, abortSignal));
    if (!polled) return 'gone';
    const now = Date.now();
    if ((polled.w ?? 0) > (seen.w ?? 0)) return 'news';
    if (horizon >= seen.next) {
      if (polled.next > seen.next || (polled.seq ?? 0) > (seen.seq ?? 0)) return 'news';
      continue;
    }
    // The runs without a record as the strong read found them, the head's own entries as polled now.
    const runs = Object.entries(seen.pending).filter(([t]) => tokenRun(t));
    if (stableHorizon({ ...(polled.pending ?? {}), ...Object.fromEntries(runs) }, seen.next, now) > horizon) return 'news';
    const blocking = runs.find(([t, start]) => start === horizon && now - tokenTime(t) < PENDING_SETTLE_MS);
    if (blocking && (await pollRecord(ref, tokenRun(blocking[0])!.from))) return 'news';
  }
}

/** A head read strongly, unless its log is deleted. */
const live = (head: LogHead | undefined) => (head && head.deleted_at === undefined ? head : undefined);

/** Eventually consistent record reads for long polls in this container, shared while fresh. */
const recordPolls = new Map<string, { at: number; landed: Promise<boolean> }>();
const RECORD_POLL_SHARE_MS = 150;

/**
 * Whether reservation `seq` has its record (a claim of a run being settled is none yet): one
 * eventually consistent GetItem, half a read unit, shared like `pollHead`. A stale replica may
 * not show a record yet: news comes a poll later, never early.
 */
function pollRecord(ref: LogRef, seq: number, now = Date.now()): Promise<boolean> {
  const k = `${ref.namespace}#${ref.id}#${seq}`;
  const cached = recordPolls.get(k);
  if (cached && now - cached.at < RECORD_POLL_SHARE_MS) return cached.landed;
  if (recordPolls.size > 10_000) recordPolls.clear();
  const landed = ddb()
    .send(new GetCommand({ TableName: tableName('meta'), Key: { pk: metaKeys.logRecordsPk(ref.namespace, ref.id), sk: recordSk(seq) }, ConsistentRead: false }))
    .then((out) => out.Item !== undefined && out.Item.claim === undefined);
  landed.catch(() => recordPolls.delete(k));
  recordPolls.set(k, { at: now, landed });
  return landed;
}

/**
 * Runs a consume of the log `ref` with its arrivals watched from before its head's read to its
 * answer: a publish that completes while that read's answer comes back announces its arrival
 * before the consume has the head, which does not show it. `notFound` when the log has no head.
 */
export async function consumeWatching<T>(ref: LogRef, notFound: () => Error, consume: (head: LogHead, arrivals: ArrivalWatch) => Promise<T>): Promise<T> {
  const arrivals = watchArrivals(ref.id);
  try {
    const head = await getHead(ref);
    if (!head) throw notFound();
    return await consume(head, arrivals);
  } finally {
    arrivals.close();
  }
}
