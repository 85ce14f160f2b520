/**
 * Trimming an append-only log from its oldest end (stream retention and size, subscription TTL and
 * size): which of the oldest entries go, and where the log then starts. Pure.
 */
export interface LogEntry {
  position: number;
  published_at: number;
  size: number;
}

export interface TrimPlan {
  /** Entries to delete, oldest first. */
  remove: LogEntry[];
  removedBytes: number;
  /** The oldest retained position after the trim. */
  earliest: number;
}

/**
 * Walks `entries` (oldest first, all below `horizon`) and removes each one published before
 * `cutoff` or while the log holds more than `maxBytes`; stops at the first entry it keeps. When it
 * keeps none and saw the whole readable log (`complete`), the log then starts at `horizon`.
 * @example planTrim([{position: 0, published_at: 1, size: 5}], {cutoff: 2, bytes: 5, maxBytes: 99, horizon: 1, complete: true}).earliest // 1
 */
export function planTrim(
  entries: LogEntry[],
  opts: { cutoff: number; bytes: number; maxBytes: number; horizon: number; complete: boolean },
): TrimPlan {
  const remove: LogEntry[] = [];
  let bytes = opts.bytes;
  let removedBytes = 0;
  for (const e of entries) {
    if (e.published_at >= opts.cutoff && bytes <= opts.maxBytes) return { remove, removedBytes, earliest: e.position };
    remove.push(e);
    bytes -= e.size;
    removedBytes += e.size;
  }
  const last = remove[remove.length - 1];
  const earliest = opts.complete ? opts.horizon : last ? last.position + 1 : NaN;
  return { remove, removedBytes, earliest };
}
