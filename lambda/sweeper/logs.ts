/**
 * Upkeep of append-only logs (streams and subscriptions): trimming from the oldest end by age and
 * size, and clearing reservations whose publish died. The log-specific reads
 * and deletes are passed in by ./streams.ts and ./subscriptions.ts.
 */
import type { ResourceItem } from '../storage/resources';
import { advanceEarliest, clearPending } from '../storage/log-reservations';
import { stableHorizon, staleTokens } from '../domain/log-horizon';
import { planTrim, type LogEntry } from '../domain/retention';

/** Entries one run trims per log at most; the next run goes on. */
export const TRIM_PER_LOG_PER_RUN = 1000;

export interface TrimmableLog {
  item: ResourceItem & { pending?: Record<string, number>; bytes?: number };
  earliest: number;
  next: number;
  /** Entries older than this (epoch ms) go. */
  cutoff: number;
  maxBytes: number;
  /** Oldest first, `from <= position < to`, at most `max`. */
  read(from: number, to: number, max: number): Promise<LogEntry[]>;
  remove(positions: number[]): Promise<void>;
}

/**
 * Trims one log: moves its earliest position first (readers stop reading below it at once), then
 * deletes the entries. A crash in between leaves unreachable items for the TTL backstop.
 */
export async function trimLog(log: TrimmableLog, now: number): Promise<number> {
  const target = { namespace: log.item.namespace, kind: log.item.kind, name: log.item.name, id: log.item.id };
  const stale = staleTokens(log.item.pending, now);
  if (stale.length) await clearPending(target, stale);
  const horizon = stableHorizon(log.item.pending, log.next, now);
  const entries = await log.read(log.earliest, horizon, TRIM_PER_LOG_PER_RUN);
  const plan = planTrim(entries, {
    cutoff: log.cutoff,
    bytes: log.item.bytes ?? 0,
    maxBytes: log.maxBytes,
    horizon,
    complete: entries.length < TRIM_PER_LOG_PER_RUN,
  });
  if (!(plan.earliest > log.earliest)) return 0;
  if (!(await advanceEarliest(target, log.earliest, plan.earliest, plan.remove.length, plan.removedBytes))) return 0;
  if (plan.remove.length) await log.remove(plan.remove.map((e) => e.position));
  return plan.remove.length;
}
